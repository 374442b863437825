package kernel

import (
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
)

// Message is one queue message, as an engine receives it.
type Message struct {
	// MessageID identifies the message in its batch.
	MessageID string
	// ReceiptHandle is the handle to change the message's visibility.
	ReceiptHandle string
	// Body is the message body: a JSON [webhook.Envelope].
	Body []byte
	// Group is the message's group, its event's tenant ("" : unknown): a
	// batch starts its groups' messages in turn (fanout.Fair).
	Group string
}

// Verdict is what handling one message came to, in either engine.
// [Result.Ack] says whether the message is to be deleted.
type Verdict int

// Verdicts of either phase (the processor's, the compensator's) and of the
// kernel.
const (
	// Succeeded (processor): the handlers completed; the record is SUCCEEDED. Ack.
	Succeeded Verdict = iota + 1
	// Failed (processor): a permanent error or the attempts exhausted; the
	// record is FAILED and the message went to the dead-letter queue. Ack
	// (not acked if the send failed).
	Failed
	// DeadLettered (processor): the record was already FAILED; the message
	// went to the dead-letter queue. Ack.
	DeadLettered
	// Unhandled (processor): no handler serves the event type; the record
	// is SUCCEEDED. Ack.
	Unhandled
	// Compensated (compensator): every journaled step with a compensation
	// is undone; the record is COMPENSATED. Ack.
	Compensated
	// Dead (compensator): nothing to compensate, a permanent undo error, or
	// the attempts exhausted; the record is DEAD with the reason. Ack.
	Dead
	// Requeued (compensator): the processor never finished the event and
	// there was nothing to compensate; its record is RETRY and the event is
	// back on the main queue. Ack.
	Requeued
	// Retried: the work failed; the record waits for the next attempt and
	// the message comes back after the backoff. Not acked.
	Retried
	// Duplicate: the record was already terminal (SUCCEEDED, COMPENSATED or
	// DEAD); nothing changed. Ack.
	Duplicate
	// Busy: another worker holds a live lease; the message comes back after
	// it. Not acked.
	Busy
	// Absent: there is no live record for the key. Ack.
	Absent
	// LeaseLost: another worker took over; this attempt's outcome was
	// discarded and Err is ErrLeaseLost (or the work's error). Not acked.
	LeaseLost
	// Malformed: the body is not an envelope. The processor sends it to the
	// dead-letter queue (ack); the compensator keeps it on its queue, hidden
	// for the longest visibility timeout, for an operator (not acked).
	Malformed
	// Errored: a store or queue call failed; the message comes back. Not acked.
	Errored
	// Held: the event's target is unavailable (an open circuit breaker) or
	// its handler, tenant or target is paused; the record is HELD, no call
	// was made and no attempt spent; the drain or the sweeper sends it
	// again once released. Also the verdict on a record found HELD. Ack.
	Held
	// Stale: the message belongs to an older life of the event (its
	// generation is older than the record's: the event was replayed or
	// recovered since); nothing was run or compensated. Ack.
	Stale
)

var verdictNames = [...]string{"", "succeeded", "failed", "dead-lettered", "unhandled", "compensated", "dead",
	"requeued", "retried", "duplicate", "busy", "absent", "lease-lost", "malformed", "errored", "held", "stale"}

// String returns the verdict's name.
func (v Verdict) String() string {
	if v > 0 && int(v) < len(verdictNames) {
		return verdictNames[v]
	}
	return "unknown"
}

// Result is the result of handling one message.
type Result struct {
	// MessageID is the message's id.
	MessageID string
	// Key is the event key ("" if the body was malformed).
	Key string
	// Verdict says what happened.
	Verdict Verdict
	// Ack is true when the message is to be deleted from the queue (not
	// reported as a batch item failure).
	Ack bool
	// Attempt is the attempt number, of the processor or of the
	// compensator (0 when no lease was taken).
	Attempt int
	// From is the status the record had when the lease was asked for (the
	// status found, when it was not taken).
	From webhook.Status
	// Undone lists the compensation steps run by this attempt, in order, as
	// "handler/step"; Skipped those found already journaled (compensator).
	Undone  []string
	Skipped []string
	// RetryAfter is the visibility timeout set on the message, if any.
	RetryAfter time.Duration
	// Err is the work's error, the reason given up, or the failed call.
	Err error
	// Event is the outcome event, if the message reached an outcome.
	Event *webhook.Outcome
}

package compensate

import (
	"time"

	"github.com/hookwall/hookwall/shared/webhook"
)

// Verdict is what handling one dead-letter message came to.
type Verdict int

// Verdicts. [Result.Ack] says whether the message is to be deleted.
const (
	// Compensated: every journaled step with a compensation is undone; the
	// record is COMPENSATED. Ack.
	Compensated Verdict = iota + 1
	// Dead: nothing to compensate, a permanent undo error, or the attempts
	// exhausted; the record is DEAD with the reason. Ack.
	Dead
	// Retried: an undo failed; the record stays COMPENSATING and the message
	// comes back after the backoff. Not acked.
	Retried
	// AlreadyDone: the record was SUCCEEDED, COMPENSATED or DEAD; nothing
	// changed. Ack.
	AlreadyDone
	// Busy: a live lease is held elsewhere; the message comes back after it. Not acked.
	Busy
	// Absent: there is no live record for the key. Ack.
	Absent
	// LeaseLost: another worker took over; this attempt's outcome was discarded. Not acked.
	LeaseLost
	// Malformed: the body is not an envelope; the message is kept on the
	// queue, hidden for the longest visibility timeout, for an operator. Not acked.
	Malformed
	// Errored: a store call failed; the message comes back. Not acked.
	Errored
	// Requeued: the processor never finished the event and there was
	// nothing to compensate; its record is RETRY and the event is back on
	// the main queue. Ack.
	Requeued
)

var verdictNames = [...]string{"", "compensated", "dead", "retried", "already-done", "busy", "absent",
	"lease-lost", "malformed", "errored", "requeued"}

// String returns the verdict's name.
func (v Verdict) String() string {
	if v > 0 && int(v) < len(verdictNames) {
		return verdictNames[v]
	}
	return "unknown"
}

// Result is the result of handling one dead-letter message.
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
	// Attempt is the compensation attempt (0 when no lease was taken).
	Attempt int
	// From is the status the record was taken to COMPENSATING from (or, for
	// AlreadyDone and Busy, the status found).
	From webhook.Status
	// Undone lists the compensation steps run by this attempt, in order, as
	// "handler/step"; Skipped those found already journaled.
	Undone  []string
	Skipped []string
	// RetryAfter is the visibility timeout set on the message, if any.
	RetryAfter time.Duration
	// Err is the undo's error, the reason given up, or the failed call.
	Err error
	// Event is the outcome event (COMPENSATED or DEAD), if one was reached.
	Event *webhook.Outcome
}

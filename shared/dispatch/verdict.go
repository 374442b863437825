package dispatch

import (
	"time"

	"github.com/hookwall/hookwall/shared/webhook"
)

// Message is one queue message, as the processor receives it.
type Message struct {
	// MessageID identifies the message in its batch.
	MessageID string
	// ReceiptHandle is the handle to change the message's visibility.
	ReceiptHandle string
	// Body is the message body: a JSON [webhook.Envelope].
	Body []byte
}

// Verdict is what processing one delivery came to.
type Verdict int

// Verdicts. [Result.Ack] says whether the message is to be deleted.
const (
	// Succeeded: the handlers completed; the record is SUCCEEDED. Ack.
	Succeeded Verdict = iota + 1
	// Retried: a handler failed; the record is RETRY and the message comes
	// back after the backoff. Not acked.
	Retried
	// Failed: permanent error or attempts exhausted; the record is FAILED and
	// the message went to the DLQ. Ack (not acked if the DLQ send failed).
	Failed
	// Duplicate: the record was already terminal. Ack.
	Duplicate
	// BusyElsewhere: another worker holds a live lease; the message comes back
	// after it. Not acked.
	BusyElsewhere
	// Absent: there is no live record for the key. Ack.
	Absent
	// DeadLettered: the record was already FAILED; the message went to the DLQ. Ack.
	DeadLettered
	// Unhandled: no handler serves the event type. Ack.
	Unhandled
	// LeaseLost: another worker took over; this attempt's outcome was discarded. Not acked.
	LeaseLost
	// Malformed: the body is not an envelope; it went to the DLQ. Ack.
	Malformed
	// Errored: a store or queue call failed; the message comes back. Not acked.
	Errored
)

var verdictNames = [...]string{"", "succeeded", "retried", "failed", "duplicate", "busy", "absent",
	"dead-lettered", "unhandled", "lease-lost", "malformed", "errored"}

// String returns the verdict's name.
func (v Verdict) String() string {
	if v > 0 && int(v) < len(verdictNames) {
		return verdictNames[v]
	}
	return "unknown"
}

// Result is the result of processing one delivery.
type Result struct {
	// MessageID is the delivery's message id.
	MessageID string
	// Key is the event key ("" if the body was malformed).
	Key string
	// Verdict says what happened.
	Verdict Verdict
	// Ack is true when the message is to be deleted from the queue (not
	// reported as a batch item failure).
	Ack bool
	// Attempt is the attempt number (0 when no lease was taken).
	Attempt int
	// RetryAfter is the visibility timeout set on the message, if any.
	RetryAfter time.Duration
	// Err is the handler's error, the reason given up, or the failed call.
	Err error
	// Event is the outcome event, if the delivery reached an outcome.
	Event *webhook.Outcome
}

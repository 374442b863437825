package process

import (
	"context"
	"time"

	"github.com/hookwall/hookwall/shared/webhook"
)

// AcquireOutcome is what an attempt to take an event's lease found.
type AcquireOutcome int

// Acquire outcomes. Only a failed call is an error; a lost race is one of these.
const (
	// Acquired: the lease is ours; the record is PROCESSING.
	Acquired AcquireOutcome = iota + 1
	// AlreadyDone: the record is terminal (SUCCEEDED, COMPENSATED, DEAD): a
	// duplicate delivery, to be acknowledged.
	AlreadyDone
	// Busy: another worker holds a live lease; try again after
	// [Acquisition.RetryAfter].
	Busy
	// Missing: there is no record, or it has expired (treated as absent).
	Missing
	// InFailedState: the record is FAILED or COMPENSATING; it belongs to the
	// dead-letter path.
	InFailedState
)

// String returns the outcome's name.
func (o AcquireOutcome) String() string {
	switch o {
	case Acquired:
		return "acquired"
	case AlreadyDone:
		return "already-done"
	case Busy:
		return "busy"
	case Missing:
		return "missing"
	case InFailedState:
		return "failed-state"
	}
	return "unknown"
}

// Lease is a lease held on an event record: the fence every later write of
// the attempt is conditional on.
type Lease struct {
	// Key is the event key (the record's pk).
	Key string
	// Owner is the unique token of this attempt (leaseOwner).
	Owner string
	// Version is the record's version after the lease was taken.
	Version int64
	// ClaimID is the record's claim id; journal entries of another claim of
	// the same key are ignored.
	ClaimID string
	// Attempt is the record's attempts counter, counting this attempt (1 = first).
	Attempt int
	// Until is when the lease runs out unless extended.
	Until time.Time
	// ExpiresAt is the record's TTL when the lease was taken (zero if none).
	ExpiresAt time.Time
}

// Acquisition is the result of [Store.Acquire].
type Acquisition struct {
	// Outcome says what was found.
	Outcome AcquireOutcome
	// Lease is the lease taken (Outcome == Acquired only).
	Lease Lease
	// Status is the record's status when the lease was not taken ("" if Missing).
	Status webhook.Status
	// Attempts is the record's attempts counter.
	Attempts int
	// LastError is the record's lastError, if any.
	LastError string
	// RetryAfter is, for Busy, how long the other worker's lease still runs.
	RetryAfter time.Duration
	// Payload is the event's payload as stored in its record (Acquired only):
	// the processor uses it when the message was sent without one
	// ([webhook.Envelope.PayloadInRecord]).
	Payload []byte
}

// JournalEntry is one completed step of one handler.
type JournalEntry struct {
	// Handler is the registered handler name.
	Handler string
	// Step is the step name ([DoneStep] marks a completed handler).
	Step string
	// Result is what the step returned (JSON for [StepResult]; empty for [Event.Step]).
	Result []byte
	// CompletedAt is when the entry was written.
	CompletedAt time.Time
}

// DoneStep is the journal step name that marks a handler as completed, so it
// is skipped when the event is retried because of another handler. Step names
// starting with '$' are reserved.
const DoneStep = "$done"

// Store is the event table as the dispatcher needs it. Every method but
// Acquire is fenced on the lease's owner and version: held == false means the
// lease was lost (another worker took over, or the record moved on) and
// nothing was written; it is never reported as an error.
type Store interface {
	// Acquire takes the lease of key for owner until the given time: one
	// conditional write from RECEIVED or RETRY, or from PROCESSING whose lease
	// has run out, that increments attempts and version.
	Acquire(ctx context.Context, key, owner string, until time.Time) (Acquisition, error)
	// Heartbeat extends the lease to until.
	Heartbeat(ctx context.Context, l Lease, until time.Time) (held bool, err error)
	// Complete moves the record to SUCCEEDED, to be kept until retainUntil.
	Complete(ctx context.Context, l Lease, retainUntil time.Time) (held bool, err error)
	// Retry moves the record to RETRY with lastError.
	Retry(ctx context.Context, l Lease, lastError string) (held bool, err error)
	// Fail moves the record to FAILED with lastError.
	Fail(ctx context.Context, l Lease, lastError string) (held bool, err error)
	// Journal returns the journal entries of the lease's claim (one read).
	Journal(ctx context.Context, l Lease) ([]JournalEntry, error)
	// SaveStep writes one journal entry (one write).
	SaveStep(ctx context.Context, l Lease, e JournalEntry) (held bool, err error)
}

// Visibility changes when a queue message becomes visible again.
type Visibility interface {
	// ChangeVisibility makes the message with receiptHandle visible again after d.
	ChangeVisibility(ctx context.Context, receiptHandle string, d time.Duration) error
}

// DeadLetters receives the messages that will not be processed again.
type DeadLetters interface {
	// SendDeadLetter sends body (the original message body) with the event
	// key (empty if unknown) and the reason it was given up on.
	SendDeadLetter(ctx context.Context, key string, body []byte, reason string) error
}

package kernel

import (
	"context"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
)

// Leases are a phase's lease calls on the events table: the processor's
// lease, or the compensator's.
type Leases interface {
	// Acquire takes the lease of key for owner until the given time, for a
	// message of generation gen ([webhook.Envelope.Generation]): a record
	// of a newer generation is not taken (AcquireStale).
	Acquire(ctx context.Context, key string, gen int64, owner string, until time.Time) (webhook.Acquisition, error)
	// Heartbeat extends the lease to until; held false means it is lost.
	Heartbeat(ctx context.Context, l webhook.Lease, until time.Time) (held bool, err error)
}

// JournalStore is the step journal of an event's claim in the events table,
// as both engines use it through [Journal] (fenced on the lease: held false
// means it was lost and nothing was written).
type JournalStore interface {
	// Journal returns the journal entries of the lease's claim (one read).
	Journal(ctx context.Context, l webhook.Lease) ([]webhook.JournalEntry, error)
	// SaveStep writes one journal entry (one write).
	SaveStep(ctx context.Context, l webhook.Lease, e webhook.JournalEntry) (held bool, err error)
}

// Phase is what an engine supplies to the kernel besides its [Leases]: its
// checks and its work, whose settling writes it names in a [Settlement].
// The processor's phase runs the handlers; the compensator's plans and runs
// the undos and the requeue. A Phase is shared by every message the engine
// handles, concurrently; what belongs to one attempt lives in its [Task].
type Phase interface {
	// Check reports what the phase needs of an envelope and env lacks (the
	// message is then [Malformed]).
	Check(env webhook.Envelope) error
	// Malformed handles a message whose body is not an envelope, for the
	// reason err; the kernel has counted it (MetricMalformed).
	Malformed(ctx context.Context, m Message, err error, res Result) Result
	// Refused handles an acquisition whose outcome the kernel leaves to the
	// phase (any but Acquired, AcquireDone, AcquireBusy and
	// AcquireMissing); ok false leaves it to the kernel, which reports it
	// [Errored].
	Refused(ctx context.Context, a *Attempt, res Result) (r Result, ok bool)
	// Begin starts an attempt whose lease is taken: it may complete the
	// envelope (the payload) and tag a.Log, and returns the attempt's task.
	Begin(ctx context.Context, a *Attempt) Task
}

// Task is the work of one attempt and how it settles.
type Task interface {
	// Run does the work under the heartbeat: ctx is cancelled (with cause
	// ErrLeaseLost) when the lease is lost, and ends FinishReserve before
	// the invocation's deadline. It may fill in res's details (Undone,
	// Skipped) and returns the work's error.
	Run(ctx context.Context, res *Result) error
	// Settle decides, from the work's error, how the attempt ends. The
	// kernel has checked that the lease is still held and set a.Now.
	Settle(ctx context.Context, err error) Settlement
}

// Settlement is how an attempt ends: one write fenced on the lease, then
// the verdict.
type Settlement struct {
	// Op names the write in the log line of its failure ("complete", "set dead", …).
	Op string
	// Write is the write, made with the finish context; held false means
	// the lease was lost (nothing was written).
	Write func(ctx context.Context) (held bool, err error)
	// Verdict, Ack and Event are the result once the write held. For
	// Retried the kernel sets RetryAfter (the backoff of the attempt) and
	// hides the message for it.
	Verdict Verdict
	Ack     bool
	Event   *webhook.Outcome
	// Then, if set, runs after the write held (with ctx and the finish
	// context fctx): the phase's metrics and log line, and any send that
	// follows the write; it returns the final result.
	Then func(ctx, fctx context.Context, res Result) Result
}

// Names are what an engine logs and counts under where the kernel acts for
// it, so that its log lines and metrics keep their names.
type Names struct {
	// Package prefixes the kernel's errors ("dispatch", "compensate").
	Package string
	// Log messages: the acquisition failed; the record was terminal; the
	// lease is held elsewhere; the record is missing; the lease was lost;
	// a handler (or undo) panicked.
	Acquire, Duplicate, Busy, Missing, LeaseLost, Panicked string
	// Stale is the log message of a stale message (an older generation
	// than the record's), StaleMetric its count.
	Stale, StaleMetric string
	// AttemptLatency, if set, times every attempt (a message whose lease
	// was taken) until it settles; MessageLatency, if set, every message.
	AttemptLatency, MessageLatency string
}

package webhook

import "time"

// MaxQueueDelay is the longest a queued message can be held back before it
// is delivered again: SQS's maximum visibility timeout, 12 hours. It bounds
// the retry backoff of the processor and the compensator.
const MaxQueueDelay = 12 * time.Hour

// AcquireOutcome is what an attempt to take an event's lease found.
type AcquireOutcome int

// Acquire outcomes. Only a failed call is an error; a lost race is one of these.
const (
	// Acquired: the lease is ours; the record is PROCESSING.
	Acquired AcquireOutcome = iota + 1
	// AcquireDone: the record is terminal (SUCCEEDED, COMPENSATED, DEAD): a
	// duplicate delivery, to be acknowledged.
	AcquireDone
	// AcquireBusy: another worker holds a live lease; try again after
	// [Acquisition.RetryAfter].
	AcquireBusy
	// AcquireMissing: there is no record, or it has expired (treated as absent).
	AcquireMissing
	// AcquireFailedState: the record is FAILED or COMPENSATING; it belongs to the
	// dead-letter path.
	AcquireFailedState
	// AcquireHeld: the record is HELD, waiting for its target or a pause to
	// end; the drain or the sweeper sends it again when it is released, so
	// the message is acknowledged.
	AcquireHeld
	// AcquireStale: the message belongs to an older life of the event: its
	// generation ([Envelope.Generation]) is older than the record's (a
	// replay or recovery gave the record a new one since). Nothing was
	// written; the message is acknowledged without running or compensating
	// anything: the record's current life has its own message.
	AcquireStale
)

// AnyGeneration, passed as the generation of an acquisition, takes the
// lease whatever the record's generation (no staleness check).
const AnyGeneration int64 = -1

// String returns the outcome's name.
func (o AcquireOutcome) String() string {
	switch o {
	case Acquired:
		return "acquired"
	case AcquireDone:
		return "already-done"
	case AcquireBusy:
		return "busy"
	case AcquireMissing:
		return "missing"
	case AcquireFailedState:
		return "failed-state"
	case AcquireHeld:
		return "held"
	case AcquireStale:
		return "stale"
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
	// Attempt counts this attempt (1 = first): the record's attempts
	// counter for the processor's lease, its compensations counter for the
	// compensator's.
	Attempt int
	// Until is when the lease runs out unless extended.
	Until time.Time
	// ExpiresAt is the record's TTL when the lease was taken (zero if none).
	ExpiresAt time.Time
	// Status is the status the lease holds the record in: PROCESSING for
	// the processor's lease, COMPENSATING for the compensator's. The
	// journal's writes are fenced on it ("" counts as PROCESSING).
	Status Status
	// Calls are the outside calls on the record, newest last, at most
	// [MaxCalls]: those it had when the lease was taken, then those the
	// attempt added ([Lease.AddCalls]).
	Calls []Call
	// CallCount counts every call made for the event, those no longer in
	// Calls included.
	CallCount int
	// Target is the target the attempt was last bound for: that of the
	// handler it ran (or was held before) last. The settling write (a
	// completion, retry, failure or hold) records it as the record's
	// target; "" leaves the record's as it is.
	Target string
	// GivenBack counts the attempts given back to the event for a call
	// that opened its target's breaker (the record's givenBack): at most 1,
	// so that an event whose calls fail on their own spends its attempts.
	GivenBack int

	added int // calls added by AddCalls, to be written by the settling write
}

// Acquisition is the result of the store's Acquire.
type Acquisition struct {
	// Outcome says what was found.
	Outcome AcquireOutcome
	// Lease is the lease taken (Outcome == Acquired only).
	Lease Lease
	// Status is the record's status when the lease was not taken ("" if AcquireMissing).
	Status Status
	// Attempts is the record's attempts counter.
	Attempts int
	// LastError is the record's lastError, if any.
	LastError string
	// RetryAfter is, for AcquireBusy, how long the other worker's lease still runs.
	RetryAfter time.Duration
	// Payload is the event's payload as stored in its record (Acquired only):
	// the processor uses it when the message was sent without one
	// ([Envelope.PayloadInRecord]).
	Payload []byte
	// Generation is the record's generation (the life it is in: 0 from the
	// claim, one more for each replay or recovery).
	Generation int64
}

// JournalEntry is one completed step of one handler.
type JournalEntry struct {
	// Handler is the registered handler name.
	Handler string
	// Step is the step name ([DoneStep] marks a completed handler).
	Step string
	// Result is what the step returned (JSON for StepResult; empty for the processor's Step).
	Result []byte
	// CompletedAt is when the entry was written.
	CompletedAt time.Time
	// Run counts the runs of a forward step, 0 for its first. A step whose
	// undo is journaled is not done: when its event is replayed it runs
	// again, as run n+1 after its run n was undone, under an idempotency
	// key of its own ([RunKey]). An undo entry's Run is the Run of the
	// forward entry it undid. Entries written before runs were counted
	// read 0.
	Run int
}

// DoneStep is the journal step name that marks a handler as completed, so it
// is skipped when the event is retried because of another handler. Step names
// starting with '$' are reserved.
const DoneStep = "$done"

// Hold is why and how long an attempt's event is held instead of run: the
// store's Hold moves the leased record PROCESSING → HELD with it.
type Hold struct {
	// Reason is for operators, e.g. "circuit open: forward/acme" or
	// "paused tenant acme" (heldReason).
	Reason string
	// On is the scope the record waits for, "target#<name>",
	// "handler#<name>" or "tenant#<name>" (heldOn, the hash key of the
	// table's held index).
	On string
	// Target is the target the held attempt was bound for (target).
	Target string
	// RecheckAt is when the sweeper looks at the record again if nothing
	// released it before (recheckAt and sweepAt).
	RecheckAt time.Time
	// RetainUntil is the least the record is kept (expiresAt is raised to
	// it, never lowered): nothing held expires while it waits.
	RetainUntil time.Time
	// GiveBack says the held attempt made the call that opened the
	// breaker: its attempt is given back like a hold's, and the record's
	// givenBack is raised by one (the dispatcher gives it back only while
	// givenBack is 0).
	GiveBack bool
}

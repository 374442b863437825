package compensate

import (
	"context"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/internal/kernel"
)

// Requeuer sends events back to the main queue (queue.Queue satisfies it).
type Requeuer interface {
	Send(ctx context.Context, envs []webhook.Envelope) error
}

// Store is the events table as the compensator needs it. Every method but
// AcquireCompensation and Journal is fenced on the lease's owner, version
// and status COMPENSATING: held == false means the lease was lost (another
// worker took over, or the record moved on) and nothing was written; it is
// never reported as an error.
type Store interface {
	// AcquireCompensationGeneration takes the record of key to COMPENSATING under a
	// lease for owner until the given time: from FAILED, RECEIVED, RETRY,
	// or PROCESSING or COMPENSATING whose lease ran out. Lease.Attempt
	// counts the compensation attempts and Acquisition.Status is the status
	// it came from. A terminal record gives AcquireDone, a live lease
	// AcquireBusy, no (live) record AcquireMissing.
	//
	// AcquireCompensationGeneration does it for a dead letter of generation
	// gen: a live record of a newer generation (replayed or recovered since
	// the dead letter was made) is AcquireStale, nothing written.
	AcquireCompensationGeneration(ctx context.Context, key string, gen int64, owner string, until time.Time) (webhook.Acquisition, error)
	// HeartbeatCompensation extends the lease to until.
	HeartbeatCompensation(ctx context.Context, l webhook.Lease, until time.Time) (held bool, err error)
	// Compensated moves the record to COMPENSATED, kept until retainUntil.
	Compensated(ctx context.Context, l webhook.Lease, retainUntil time.Time) (held bool, err error)
	// Dead moves the record to DEAD with reason as lastError, kept until retainUntil.
	Dead(ctx context.Context, l webhook.Lease, reason string, retainUntil time.Time) (held bool, err error)
	// RequeueCompensation gives the record back to the processor: RETRY
	// with lastError, the lease cleared.
	RequeueCompensation(ctx context.Context, l webhook.Lease, lastError string) (held bool, err error)
	// RetryCompensation leaves the record COMPENSATING with lastError and
	// the lease cleared, for the next attempt.
	RetryCompensation(ctx context.Context, l webhook.Lease, lastError string) (held bool, err error)
	// Journal reads the journal of the lease's claim; SaveStep writes one
	// entry.
	kernel.JournalStore
}

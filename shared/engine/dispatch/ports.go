package dispatch

import (
	"context"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/internal/kernel"
)

// Store is the event table as the dispatcher needs it. Every method but
// Acquire is fenced on the lease's owner and version: held == false means the
// lease was lost (another worker took over, or the record moved on) and
// nothing was written; it is never reported as an error.
type Store interface {
	// AcquireGeneration takes the lease of key for owner until the given
	// time, for a message of generation gen: one conditional write from
	// RECEIVED or RETRY, or from PROCESSING whose lease has run out, on a
	// record whose generation is at most gen, that increments attempts and
	// version. A record of a newer generation is AcquireStale (the message
	// is of an earlier life of the event, replayed or recovered since).
	AcquireGeneration(ctx context.Context, key string, gen int64, owner string, until time.Time) (webhook.Acquisition, error)
	// Heartbeat extends the lease to until.
	Heartbeat(ctx context.Context, l webhook.Lease, until time.Time) (held bool, err error)
	// Journal reads the journal of the lease's claim; SaveStep writes one
	// entry.
	kernel.JournalStore
	// Complete moves the record to SUCCEEDED, to be kept until retainUntil.
	Complete(ctx context.Context, l webhook.Lease, retainUntil time.Time) (held bool, err error)
	// Retry moves the record to RETRY with lastError.
	Retry(ctx context.Context, l webhook.Lease, lastError string) (held bool, err error)
	// Fail moves the record to FAILED with lastError.
	Fail(ctx context.Context, l webhook.Lease, lastError string) (held bool, err error)
	// Hold moves the record to HELD instead of settling an attempt that
	// made no call: the attempt given back, kept at least until
	// h.RetainUntil, in the held index under h.On.
	Hold(ctx context.Context, l webhook.Lease, h webhook.Hold) (held bool, err error)
}

// PayloadLoader is implemented by a Store that may keep a large payload
// apart from the event record, so that Acquire does not read it: the
// dispatcher calls LoadPayload for a message sent without its payload
// ([webhook.Envelope.PayloadInRecord]) when the acquisition carries none.
// *store.Table and *memstore.Store implement it.
type PayloadLoader interface {
	// LoadPayload returns the payload of the live record of key (nil if
	// there is none).
	LoadPayload(ctx context.Context, key string) ([]byte, error)
}

// DeadLetters receives the messages that will not be processed again.
type DeadLetters interface {
	// SendDeadLetter sends body (the original message body) with the event
	// key (empty if unknown) and the reason it was given up on.
	SendDeadLetter(ctx context.Context, key string, body []byte, reason string) error
}

package process

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/internal/registry"
)

// UndoFunc undoes one journaled forward step of its handler (set with
// [Compensate]). Return nil when the step is undone, or when
// there is nothing to undo for it; [Permanent] when it can never be undone
// (the event ends DEAD with the reason); any other error to try again with
// backoff, until the compensation attempts run out (then DEAD). A panic is
// recovered and counts as an error to try again.
//
// An undo that ran but could not be journaled (a crash, a lost lease) runs
// again with the same [Undo.IdempotencyKey], so the external system must
// deduplicate it, as it does the forward step's key.
type UndoFunc func(ctx context.Context, u *Undo) error

// Undo is one journaled forward step to undo, as an [UndoFunc] receives it.
type Undo struct {
	// Envelope is the event as it was queued, payload included (taken from
	// the record when the message was sent without it).
	Envelope webhook.Envelope
	// Handler is the handler's registered name; Step is the forward step's name.
	Handler string
	Step    string
	// Result is what the forward step journaled: the JSON of
	// [StepResult]'s result (decode it with [UndoResult]), empty for [Event.Step].
	Result []byte
	// CompletedAt is when the forward step was journaled.
	CompletedAt time.Time
	// Run is the forward step's run: 0 for its first, n when it ran again
	// after the undo of its run n-1 (see webhook.JournalEntry.Run).
	Run int
	// IdempotencyKey is the undo's own idempotency key,
	// webhook.IdempotencyKey(event key, Handler, "$undo:"+Step): the same on
	// every compensation attempt and distinct from the forward step's. The
	// undo of a step run again after an earlier undo (a replay of a
	// compensated event) has the key of that run,
	// webhook.RunKey(event key, Handler, "$undo:"+Step, Run), so that the
	// outside system does not take it for a repeat of the earlier undo.
	// [Undo.HTTPClient] sends it; pass it to any other external system.
	IdempotencyKey string
	// Attempt counts the compensation attempts at this event, this one
	// included (1 = first).
	Attempt int
	// Log is tagged with the event key, provider, tenant, type, handler and step.
	Log *slog.Logger

	transport http.RoundTripper
}

// newUndo returns the Undo of the journaled forward step of c.
func newUndo(c registry.UndoCall) *Undo {
	log := c.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	e := c.Entry
	return &Undo{
		Envelope: c.Envelope, Handler: e.Handler, Step: e.Step, Result: e.Result, CompletedAt: e.CompletedAt, Run: e.Run,
		IdempotencyKey: webhook.RunKey(c.Envelope.Key, e.Handler, registry.UndoStep(e.Step), e.Run),
		Attempt:        c.Attempt, Log: log, transport: c.Transport,
	}
}

// HTTPClient returns a client that sets the Idempotency-Key header to
// [Undo.IdempotencyKey] on every request (unless the request already has
// one). It has no timeout of its own: the context's deadline applies.
func (u *Undo) HTTPClient() *http.Client { return idempotentClient(u.transport, u.IdempotencyKey) }

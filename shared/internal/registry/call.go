package registry

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/hookwall/hookwall/shared/base/webhook"
)

// Call is one run of a handler, as the processor engine passes it to
// [Entry.Run].
type Call struct {
	// Envelope is the event, payload included.
	Envelope webhook.Envelope
	// Attempt counts the attempts at this event, this one included (1 = first).
	Attempt int
	// Log is tagged with the event and the handler.
	Log *slog.Logger
	// Steps runs the handler's journaled steps.
	Steps Stepper
	// Transport is the base transport of the handler's HTTP clients.
	Transport http.RoundTripper
}

// Stepper runs journaled steps for one handler run; the processor engine
// implements it.
type Stepper interface {
	// Step runs fn once for this event, handler and step name and journals
	// its result; a step already journaled is not run and its journaled
	// result is returned. fn receives the step's idempotency key, which its
	// ctx also carries ([IdempotencyKey]).
	Step(ctx context.Context, name string, fn func(ctx context.Context, idemKey string) ([]byte, error)) ([]byte, error)
}

// UndoCall is one undo of one journaled forward step, as the compensator
// engine passes it to [Entry.Undo].
type UndoCall struct {
	// Envelope is the event as it was queued, payload included.
	Envelope webhook.Envelope
	// Entry is the forward step's journal entry.
	Entry webhook.JournalEntry
	// Attempt counts the compensation attempts, this one included (1 = first).
	Attempt int
	// Log is tagged with the event, the handler and the step.
	Log *slog.Logger
	// Transport is the base transport of the undo's HTTP client (nil:
	// http.DefaultTransport).
	Transport http.RoundTripper
}

type idemKeyCtx struct{}

// WithIdempotencyKey returns ctx carrying the idempotency key of the step
// it runs.
func WithIdempotencyKey(ctx context.Context, key string) context.Context {
	return context.WithValue(ctx, idemKeyCtx{}, key)
}

// IdempotencyKey returns the idempotency key of the step whose context ctx
// is (or derives from).
func IdempotencyKey(ctx context.Context) (string, bool) {
	k, ok := ctx.Value(idemKeyCtx{}).(string)
	return k, ok
}

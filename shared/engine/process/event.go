package process

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/hookwall/hookwall/shared/internal/registry"
)

// Event is one event as a handler of payload type T receives it.
type Event[T any] struct {
	// Key is the event key `provider#tenant#dedupKey`.
	Key string
	// Provider, Tenant and Type identify the route and the event type.
	Provider string
	Tenant   string
	Type     string
	// Attempt counts the attempts at this event, this one included (1 = first).
	Attempt int
	// ReceivedAt is when the receiver accepted the event.
	ReceivedAt time.Time
	// TraceID is the receiver's trace id, if any.
	TraceID string
	// Data is the decoded payload.
	Data T
	// Log is tagged with the event key, provider, tenant, type, attempt and handler.
	Log *slog.Logger

	call registry.Call
}

func newEvent[T any](c registry.Call) *Event[T] {
	env := c.Envelope
	return &Event[T]{
		Key: env.Key, Provider: env.Provider, Tenant: env.Tenant, Type: env.Type,
		Attempt: c.Attempt, ReceivedAt: env.ReceivedAt, TraceID: env.TraceID,
		Log: c.Log, call: c,
	}
}

// Step runs fn once for this event, handler and step name, and journals its
// completion. If the step is already journaled (an earlier attempt ran it),
// fn is not called and Step returns nil. fn receives the step's idempotency
// key, which it must pass to the external system; its ctx also carries the
// key for [Event.HTTPClient].
//
// A step that ran but could not be journaled (crash, lost lease, journal
// write failure) runs again on the next attempt with the same key. Step names
// must be unique within one handler run, non-empty, without '#' and not
// start with '$'. Return Step's error as it is (or wrapped with %w): when
// the attempt lost its lease, it says so.
//
//	err := ev.Step(ctx, "create-lead", func(ctx context.Context, idemKey string) error {
//		return api.CreateLead(ctx, idemKey, ev.Data.Source.UserID)
//	})
func (e *Event[T]) Step(ctx context.Context, name string, fn func(ctx context.Context, idemKey string) error) error {
	_, err := e.call.Steps.Step(ctx, name, func(ctx context.Context, key string) ([]byte, error) {
		return nil, fn(ctx, key)
	})
	return err
}

// HTTPClient returns a client that sets the Idempotency-Key header, on every
// request made with a context inside a step, to that step's idempotency key
// (unless the request already has one). Outside a step it adds nothing. It
// has no timeout of its own: the context's deadline applies.
func (e *Event[T]) HTTPClient() *http.Client { return idempotentClient(e.call.Transport, "") }

package process

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/hookwall/hookwall/shared/webhook"
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

	run *handlerRun
}

// eventInfo is the non-generic part of an event, built by the dispatcher.
type eventInfo struct {
	env     webhook.Envelope
	attempt int
	log     *slog.Logger
	run     *handlerRun
}

func newEvent[T any](info eventInfo) *Event[T] {
	return &Event[T]{
		Key: info.env.Key, Provider: info.env.Provider, Tenant: info.env.Tenant, Type: info.env.Type,
		Attempt: info.attempt, ReceivedAt: info.env.ReceivedAt, TraceID: info.env.TraceID,
		Log: info.log, run: info.run,
	}
}

// Step runs fn once for this event, handler and step name, and journals its
// completion. If the step is already journaled (an earlier attempt ran it),
// fn is not called and Step returns nil. fn receives the step's idempotency
// key ([IdempotencyKey]), which it must pass to the external system; its ctx
// also carries the key for [Event.HTTPClient].
//
// A step that ran but could not be journaled (crash, lost lease, journal
// write failure) runs again on the next attempt with the same key. Step names
// must be unique within one handler run, non-empty, without '#' and not
// start with '$'. If the attempt lost its lease, Step returns [ErrLeaseLost].
func (e *Event[T]) Step(ctx context.Context, name string, fn func(ctx context.Context, idemKey string) error) error {
	_, err := e.run.step(ctx, name, func(ctx context.Context, key string) ([]byte, error) {
		return nil, fn(ctx, key)
	})
	return err
}

// StepResult is [Event.Step] for a step with a result: the result is stored
// (as JSON) in the journal and returned on replay without calling fn.
func StepResult[R, T any](ctx context.Context, ev *Event[T], name string, fn func(ctx context.Context, idemKey string) (R, error)) (R, error) {
	var zero R
	b, err := ev.run.step(ctx, name, func(ctx context.Context, key string) ([]byte, error) {
		r, err := fn(ctx, key)
		if err != nil {
			return nil, err
		}
		b, err := json.Marshal(r)
		if err != nil {
			return nil, Permanent(fmt.Errorf("step %s: encode result: %w", name, err))
		}
		return b, nil
	})
	if err != nil {
		return zero, err
	}
	var r R
	if len(b) > 0 {
		if err := json.Unmarshal(b, &r); err != nil {
			return zero, Permanent(fmt.Errorf("step %s: decode journaled result: %w", name, err))
		}
	}
	return r, nil
}

// IdempotencyKey returns the key of step name of this event and handler.
func (e *Event[T]) IdempotencyKey(step string) string {
	return IdempotencyKey(e.Key, e.run.handler, step)
}

// HTTPClient returns a client that sets the Idempotency-Key header, on every
// request made with a context inside a Step, to that step's idempotency key
// (unless the request already has one). Outside a Step it adds nothing. It
// has no timeout of its own: the context's deadline applies.
func (e *Event[T]) HTTPClient() *http.Client {
	return &http.Client{Transport: &idemTransport{base: e.run.att.d.transport}}
}

// IdempotencyKey derives the idempotency key of one step of one handler for
// one event: the first 16 bytes of SHA-256(eventKey 0x00 handler 0x00 step),
// written as a version-8 UUID (RFC 9562: 36 characters, lower-case hex), so it
// fits every API's idempotency header, including those that demand a UUID.
// It is the same on every attempt, in every worker, forever.
func IdempotencyKey(eventKey, handler, step string) string {
	h := sha256.New()
	h.Write([]byte(eventKey))
	h.Write([]byte{0})
	h.Write([]byte(handler))
	h.Write([]byte{0})
	h.Write([]byte(step))
	var b [16]byte
	copy(b[:], h.Sum(nil))
	b[6] = b[6]&0x0f | 0x80 // version 8
	b[8] = b[8]&0x3f | 0x80 // variant 10
	var out [36]byte
	hex.Encode(out[0:8], b[0:4])
	out[8] = '-'
	hex.Encode(out[9:13], b[4:6])
	out[13] = '-'
	hex.Encode(out[14:18], b[6:8])
	out[18] = '-'
	hex.Encode(out[19:23], b[8:10])
	out[23] = '-'
	hex.Encode(out[24:36], b[10:16])
	return string(out[:])
}

// HeaderIdempotencyKey is the header [Event.HTTPClient] sets.
const HeaderIdempotencyKey = "Idempotency-Key"

type idemKeyCtx struct{}

// IdempotencyKeyFrom returns the idempotency key of the step whose context
// ctx is (or derives from), for clients other than [Event.HTTPClient].
func IdempotencyKeyFrom(ctx context.Context) (string, bool) {
	k, ok := ctx.Value(idemKeyCtx{}).(string)
	return k, ok
}

type idemTransport struct{ base http.RoundTripper }

func (t *idemTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if k, ok := IdempotencyKeyFrom(req.Context()); ok && req.Header.Get(HeaderIdempotencyKey) == "" {
		req = req.Clone(req.Context())
		req.Header.Set(HeaderIdempotencyKey, k)
	}
	return t.base.RoundTrip(req)
}

func validStepName(name string) error {
	if name == "" || strings.Contains(name, "#") || strings.HasPrefix(name, "$") {
		return Permanent(fmt.Errorf("step name %q: must be non-empty, without '#', not starting with '$'", name))
	}
	return nil
}

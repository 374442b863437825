package process

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/hookwall/hookwall/shared/webhook"
)

// Registry holds the registered handlers, by name and by (provider, event
// type), and the catch-all handlers of [HandleAll]. Build it once at
// start-up; it is safe for concurrent use.
type Registry struct {
	mu     sync.RWMutex
	byName map[string]*Registration
	byType map[typeKey][]*Registration
	all    []*Registration // HandleAll registrations
	seq    int             // registrations so far: the run order across byType and all
}

type typeKey struct{ provider, name string }

// NewRegistry returns an empty Registry.
func NewRegistry() *Registry {
	return &Registry{byName: map[string]*Registration{}, byType: map[typeKey][]*Registration{}}
}

// Registration is one registered handler. Its methods configure it further.
type Registration struct {
	name        string
	provider    string
	eventType   string
	maxAttempts int
	timeout     time.Duration
	run         func(ctx context.Context, info eventInfo) error
	compensate  UndoFunc
	tenants     func(tenant string) bool // nil: every tenant
	seq         int
}

// AnyType is what [Registration.Provider] and [Registration.EventType]
// return for a catch-all handler registered with [HandleAll].
const AnyType = "*"

// Name returns the handler's stable name.
func (r *Registration) Name() string { return r.name }

// Provider returns the provider of the event type the handler serves
// ([AnyType] for a catch-all handler).
func (r *Registration) Provider() string { return r.provider }

// EventType returns the event type the handler serves ([AnyType] for a
// catch-all handler).
func (r *Registration) EventType() string { return r.eventType }

// Serves reports whether the handler runs for events of tenant (see [ForTenants]).
func (r *Registration) Serves(tenant string) bool { return r.tenants == nil || r.tenants(tenant) }

// MaxAttempts returns the handler's attempt limit (0: the dispatcher's default).
func (r *Registration) MaxAttempts() int { return r.maxAttempts }

// Timeout returns the handler's time limit per attempt (0: the dispatcher's default).
func (r *Registration) Timeout() time.Duration { return r.timeout }

// Compensation returns the undo function set with [Registration.Compensate],
// or nil if the handler registered none.
func (r *Registration) Compensation() UndoFunc { return r.compensate }

// Compensate sets the function the compensator runs to undo the handler's
// journaled steps when an event it took part in ends on the dead-letter
// path (FAILED, or redriven by SQS). fn is called once per journaled step of
// this handler, newest first, each inside a compensation step of its own
// (see [Undo]). A nil fn panics. It returns r.
func (r *Registration) Compensate(fn UndoFunc) *Registration {
	if fn == nil {
		panic(fmt.Sprintf("process: Compensate %q: nil function", r.name))
	}
	r.compensate = fn
	return r
}

// Option configures one registration.
type Option func(*Registration)

// MaxAttempts limits the attempts for an event this handler fails: when the
// handler returns an error on attempt n ≥ MaxAttempts, the event is FAILED and
// goes to the dead-letter queue. n < 1 panics.
func MaxAttempts(n int) Option {
	if n < 1 {
		panic(fmt.Sprintf("process: MaxAttempts(%d): must be at least 1", n))
	}
	return func(r *Registration) { r.maxAttempts = n }
}

// Timeout limits how long one attempt of the handler may run; past it the
// handler's context is cancelled and the attempt counts as a retryable error.
// d <= 0 panics.
func Timeout(d time.Duration) Option {
	if d <= 0 {
		panic(fmt.Sprintf("process: Timeout(%v): must be positive", d))
	}
	return func(r *Registration) { r.timeout = d }
}

// ForTenants restricts a handler to the events of the tenants for which
// accept returns true; for the others it is not matched at all, so an event
// that no other handler serves counts as unhandled. accept is called for
// every event and must be fast and safe for concurrent use. A nil accept
// panics.
func ForTenants(accept func(tenant string) bool) Option {
	if accept == nil {
		panic("process: ForTenants(nil)")
	}
	return func(r *Registration) { r.tenants = accept }
}

// Handle registers fn under name for events of typ, whose payload decodes
// into T. The name is the handler's identity in the journal, the idempotency
// keys, logs and metrics: renaming a handler makes a new one. Several handlers
// may serve one event type; they run in registration order.
//
// Handle panics on a programmer error: a nil registry or function, an empty
// name, a name containing '#', or a name already registered.
func Handle[T any](r *Registry, name string, typ webhook.Type[T], fn func(ctx context.Context, ev *Event[T]) error, opts ...Option) *Registration {
	switch {
	case r == nil:
		panic("process: Handle: nil Registry")
	case fn == nil:
		panic(fmt.Sprintf("process: Handle %q: nil function", name))
	case name == "" || strings.ContainsAny(name, "#"):
		panic(fmt.Sprintf("process: Handle %q: name must be non-empty and contain no '#'", name))
	case typ.Provider == "" || typ.Name == "":
		panic(fmt.Sprintf("process: Handle %q: event type needs a provider and a name", name))
	}
	reg := &Registration{name: name, provider: typ.Provider, eventType: typ.Name}
	reg.run = func(ctx context.Context, info eventInfo) error {
		ev := newEvent[T](info)
		if len(info.env.Payload) > 0 {
			if err := json.Unmarshal(info.env.Payload, &ev.Data); err != nil {
				return Permanent(fmt.Errorf("decode %s/%s payload: %w", typ.Provider, typ.Name, err))
			}
		}
		return fn(ctx, ev)
	}
	r.add(reg, opts, false)
	return reg
}

// HandleAll registers fn under name for the events of every provider and
// event type, such as the built-in forwarding handler. Its event's Data is
// the whole envelope, payload undecoded. Restrict it with [ForTenants]. It
// runs with the typed handlers of the event, all in registration order, and
// like them is skipped on a retry once it has completed.
//
// HandleAll panics on the programmer errors [Handle] panics on.
func HandleAll(r *Registry, name string, fn func(ctx context.Context, ev *Event[webhook.Envelope]) error, opts ...Option) *Registration {
	switch {
	case r == nil:
		panic("process: HandleAll: nil Registry")
	case fn == nil:
		panic(fmt.Sprintf("process: HandleAll %q: nil function", name))
	case name == "" || strings.ContainsAny(name, "#"):
		panic(fmt.Sprintf("process: HandleAll %q: name must be non-empty and contain no '#'", name))
	}
	reg := &Registration{name: name, provider: AnyType, eventType: AnyType}
	reg.run = func(ctx context.Context, info eventInfo) error {
		ev := newEvent[webhook.Envelope](info)
		ev.Data = info.env
		return fn(ctx, ev)
	}
	r.add(reg, opts, true)
	return reg
}

// add applies opts and files reg, by type or as a catch-all; a duplicate
// name panics.
func (r *Registry) add(reg *Registration, opts []Option, catchAll bool) {
	for _, o := range opts {
		o(reg)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.byName[reg.name]; dup {
		panic(fmt.Sprintf("process: Handle: handler name %q registered twice", reg.name))
	}
	r.seq++
	reg.seq = r.seq
	r.byName[reg.name] = reg
	if catchAll {
		r.all = append(r.all, reg)
		return
	}
	k := typeKey{reg.provider, reg.eventType}
	r.byType[k] = append(r.byType[k], reg)
}

// Match returns the handlers that run for an event of tenant and
// (provider, eventType): the typed handlers of the event type and the
// catch-all handlers, those that serve tenant, in registration order.
func (r *Registry) Match(provider, tenant, eventType string) []*Registration {
	r.mu.RLock()
	defer r.mu.RUnlock()
	typed := r.byType[typeKey{provider, eventType}]
	out := make([]*Registration, 0, len(typed)+len(r.all))
	i, j := 0, 0
	for i < len(typed) || j < len(r.all) {
		var next *Registration
		if j == len(r.all) || (i < len(typed) && typed[i].seq < r.all[j].seq) {
			next, i = typed[i], i+1
		} else {
			next, j = r.all[j], j+1
		}
		if next.Serves(tenant) {
			out = append(out, next)
		}
	}
	return out
}

// Handler returns the handler registered under name, or nil.
func (r *Registry) Handler(name string) *Registration {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.byName[name]
}

// Handlers returns every registration, in no particular order.
func (r *Registry) Handlers() []*Registration {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]*Registration, 0, len(r.byName))
	for _, reg := range r.byName {
		out = append(out, reg)
	}
	return out
}

package process

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/internal/registry"
)

// Registry holds the registered handlers and the values of the teams'
// settings. A team's package fills it in its Register (its platform.Team's):
//
//	func Register(r *process.Registry, d platform.Deps)
//
// with [Handle] and [HandleAll], reading its settings with [Registry.String],
// [Registry.Duration] or [Registry.Int]; its dependencies are d's fields.
// The processor and the compensator build it once per cold start
// (platform.Build); it is safe for concurrent use.
type Registry registry.Table

// NewRegistry returns an empty Registry of no team, for a test that
// registers its handlers itself: it holds no setting. platform.Build makes the
// registry of a list of teams.
func NewRegistry() *Registry { return (*Registry)(registry.New()) }

// table is r as the engines see it.
func (r *Registry) table() *registry.Table { return (*registry.Table)(r) }

// Option configures one handler at registration: [MaxAttempts], [Timeout],
// [ForTenants], [Target], [Compensate].
type Option struct{ apply func(*registry.Entry) }

// MaxAttempts limits the attempts for an event this handler fails: when the
// handler returns an error on attempt n ≥ MaxAttempts, the event is FAILED and
// goes to the dead-letter queue. n < 1 panics.
func MaxAttempts(n int) Option {
	if n < 1 {
		panic(fmt.Sprintf("process: MaxAttempts(%d): must be at least 1", n))
	}
	return Option{func(e *registry.Entry) { e.MaxAttempts = n }}
}

// Timeout limits how long one attempt of the handler may run; past it the
// handler's context is cancelled and the attempt counts as a retryable error.
// d <= 0 panics.
func Timeout(d time.Duration) Option {
	if d <= 0 {
		panic(fmt.Sprintf("process: Timeout(%v): must be positive", d))
	}
	return Option{func(e *registry.Entry) { e.Timeout = d }}
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
	return Option{func(e *registry.Entry) { e.Tenants = accept }}
}

// Target names the target the handler's calls go to: the unit of the
// circuit breaker, the rate limit and the pause of a target that Hookwall
// keeps for every processor instance (a URL host, a team's service name).
// "{tenant}" in pattern is replaced by the event's tenant, so that each
// tenant's target has its own breaker:
//
//	process.HandleAll(r, "forward", f.forward, process.Target("forward/{tenant}"))
//
// A target that does not name the tenant (no "{tenant}", or no Target) is
// shared by the tenants, its breaker is not: each tenant's calls to it have
// their own, keyed "<target>/@<tenant>" (failure counts, probes and holds),
// so that one tenant's failing events never hold another's. Its rate limit
// and a pause of target/<target> cover every tenant.
//
// While a handler's target is unavailable (its breaker open) or paused, the
// events it would run for are held, not failed: no call is made, no attempt
// spent, and they drain at the target's rate once it is back. Without
// Target, the target is the handler's name. An empty pattern panics, and
// so does one that gives a target name a pause could not name (the rule of
// handler names: at most 256 bytes, no '#', no control character, no
// empty, "." or ".." part between slashes) for the longest tenant name.
func Target(pattern string) Option {
	if strings.TrimSpace(pattern) == "" {
		panic("process: Target(\"\"): the pattern must not be empty")
	}
	if longest := strings.ReplaceAll(pattern, "{tenant}", strings.Repeat("t", 64)); !registry.ValidName(longest) {
		panic(fmt.Sprintf("process: Target(%q): a target name must be %s (with a 64-byte tenant)", pattern, registry.NameRule))
	}
	if !strings.Contains(pattern, "{tenant}") {
		return Option{func(e *registry.Entry) { e.Target = func(string) string { return pattern } }}
	}
	return Option{func(e *registry.Entry) {
		e.Target = func(tenant string) string { return strings.ReplaceAll(pattern, "{tenant}", tenant) }
		e.TargetNamesTenant = true
	}}
}

// Compensate sets the function the compensator runs to undo the handler's
// journaled steps when an event it took part in ends on the dead-letter
// path (FAILED, or redriven by SQS). fn is called once per journaled step of
// this handler, newest first, each inside a compensation step of its own
// (see [Undo]). A nil fn panics.
//
//	process.Handle(r, "crm.lead-from-follow", line.Follow, c.createLead, process.Compensate(c.deleteLead))
func Compensate(fn UndoFunc) Option {
	if fn == nil {
		panic("process: Compensate(nil)")
	}
	return Option{func(e *registry.Entry) {
		e.Undo = func(ctx context.Context, c registry.UndoCall) error { return fn(ctx, newUndo(c)) }
	}}
}

// Handle registers fn under name for events of typ, whose payload decodes
// into T. The name is the handler's identity in the journal, the idempotency
// keys, logs and metrics: renaming a handler makes a new one. Several handlers
// may serve one event type; they run in registration order.
//
// Handle panics on a programmer error: a nil registry or function, a name
// that is empty, longer than 256 bytes, or holds '#', a control character
// or an empty, "." or ".." part between slashes (a name a pause could not
// name), or a name already registered.
func Handle[T any](r *Registry, name string, typ webhook.Type[T], fn func(ctx context.Context, ev *Event[T]) error, opts ...Option) {
	checkHandler("Handle", r, name, fn != nil)
	if typ.Provider == "" || typ.Name == "" {
		panic(fmt.Sprintf("process: Handle %q: event type needs a provider and a name", name))
	}
	e := &registry.Entry{Name: name, Provider: typ.Provider, EventType: typ.Name}
	e.Run = func(ctx context.Context, c registry.Call) error {
		ev := newEvent[T](c)
		if len(c.Envelope.Payload) > 0 {
			if err := json.Unmarshal(c.Envelope.Payload, &ev.Data); err != nil {
				return Permanent(fmt.Errorf("decode %s/%s payload: %w", typ.Provider, typ.Name, err))
			}
		}
		return fn(ctx, ev)
	}
	r.add(e, opts)
}

// HandleAll registers fn under name for the events of every provider and
// event type, such as the built-in forwarding handler. Its event's Data is
// the whole envelope, payload undecoded. Restrict it with [ForTenants]. It
// runs with the typed handlers of the event, all in registration order, and
// like them is skipped on a retry once it has completed.
//
// HandleAll panics on the programmer errors [Handle] panics on.
func HandleAll(r *Registry, name string, fn func(ctx context.Context, ev *Event[webhook.Envelope]) error, opts ...Option) {
	checkHandler("HandleAll", r, name, fn != nil)
	e := &registry.Entry{Name: name, Provider: registry.AnyType, EventType: registry.AnyType}
	e.Run = func(ctx context.Context, c registry.Call) error {
		ev := newEvent[webhook.Envelope](c)
		ev.Data = c.Envelope
		return fn(ctx, ev)
	}
	r.add(e, opts)
}

// checkHandler panics, as caller (Handle or HandleAll), on a nil registry,
// a missing function (hasFunc false) or an unusable name.
func checkHandler(caller string, r *Registry, name string, hasFunc bool) {
	switch {
	case r == nil:
		panic("process: " + caller + ": nil Registry")
	case !hasFunc:
		panic(fmt.Sprintf("process: %s %q: nil function", caller, name))
	case !registry.ValidName(name):
		panic(fmt.Sprintf("process: %s %q: name must be %s", caller, name, registry.NameRule))
	}
}

// add applies opts and files e; a duplicate name panics.
func (r *Registry) add(e *registry.Entry, opts []Option) {
	for _, o := range opts {
		o.apply(e)
	}
	r.table().Add(e)
}

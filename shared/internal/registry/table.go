package registry

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// AnyType is the provider and event type of a catch-all handler.
const AnyType = "*"

// Entry is one registered handler.
type Entry struct {
	// Name is the handler's stable name: its identity in the journal, the
	// idempotency keys, logs and metrics.
	Name string
	// Provider and EventType are the event type it serves ([AnyType] for a
	// catch-all handler).
	Provider  string
	EventType string
	// MaxAttempts is its attempt limit (0: the engine's default).
	MaxAttempts int
	// Timeout is its time limit per attempt (0: the engine's default).
	Timeout time.Duration
	// Tenants accepts the tenants it serves (nil: every tenant).
	Tenants func(tenant string) bool
	// Run runs the handler on one event.
	Run func(ctx context.Context, c Call) error
	// Undo undoes one of its journaled forward steps (nil: no compensation).
	Undo func(ctx context.Context, c UndoCall) error
	// Owner is the package of the team that registered it, e.g.
	// functions/processor/handlers/crm (the team's platform.Team.Owner).
	Owner string
	// Target names the target its calls go to for an event of tenant: the
	// unit of the circuit breaker, the rate limit and a target pause (nil:
	// the handler's name; see [Entry.TargetOf]).
	Target func(tenant string) string
	// TargetNamesTenant says Target's answer is the tenant's own (its
	// pattern has "{tenant}"): the breaker key is then the target itself
	// (see [Entry.BreakerOf]).
	TargetNamesTenant bool

	seq int
}

// TargetOf returns the target of the handler's calls for an event of
// tenant: Target's answer, or the handler's name when it has none (or
// Target answers "").
func (e *Entry) TargetOf(tenant string) string {
	if e.Target != nil {
		if t := e.Target(tenant); t != "" {
			return t
		}
	}
	return e.Name
}

// BreakerOf returns the key of the circuit breaker (and of the holds it
// makes) of the handler's calls for an event of tenant: its target when the
// target names the tenant ([Entry.TargetNamesTenant]), else
// [BreakerKey](target, tenant), so that a breaker never crosses tenants.
func (e *Entry) BreakerOf(tenant string) string {
	t := e.TargetOf(tenant)
	if e.TargetNamesTenant {
		return t
	}
	return BreakerKey(t, tenant)
}

// TenantMark begins the last part of a breaker key that a tenant was added
// to: "<target>/@<tenant>".
const TenantMark = "/@"

// BreakerKey returns the breaker key of target, shared by several tenants,
// for tenant: "<target>/@<tenant>" (target itself when tenant is empty).
// Failure counts, probes and holds are per tenant: one tenant's failing
// events cannot open the breaker that holds another's.
func BreakerKey(target, tenant string) string {
	if tenant == "" {
		return target
	}
	return target + TenantMark + tenant
}

// SplitBreakerKey returns the target and tenant of a key [BreakerKey]
// made; a key without a tenant part (a target that names its tenant, or a
// key from before breakers were per tenant) is its own target, tenant "".
func SplitBreakerKey(key string) (target, tenant string) {
	i := strings.LastIndex(key, TenantMark)
	if i <= 0 || strings.Contains(key[i+len(TenantMark):], "/") || key[i+len(TenantMark):] == "" {
		return key, ""
	}
	return key[:i], key[i+len(TenantMark):]
}

// Serves reports whether the handler runs for events of tenant.
func (e *Entry) Serves(tenant string) bool { return e.Tenants == nil || e.Tenants(tenant) }

// Table holds the registered handlers, by name and by (provider, event
// type), and the catch-all handlers. It is built once at start-up and is
// safe for concurrent use.
type Table struct {
	mu     sync.RWMutex
	byName map[string]*Entry
	byType map[typeKey][]*Entry
	all    []*Entry // catch-all entries
	seq    int      // entries so far: the run order across byType and all

	owner  string            // the team registering now ([Table.Begin])
	values map[string]string // the values of the settings it declared
}

type typeKey struct{ provider, name string }

// New returns an empty Table.
func New() *Table {
	return &Table{byName: map[string]*Entry{}, byType: map[typeKey][]*Entry{}}
}

// Begin starts the registration of one team: the entries added from now
// on are owner's, and the settings it may read are values' (name → value).
func (t *Table) Begin(owner string, values map[string]string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.owner, t.values = owner, values
}

// Value returns the value of the setting name for the team registering
// now, and whether that team declared it.
func (t *Table) Value(name string) (value string, declared bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	value, declared = t.values[name]
	return value, declared
}

// Owner returns the team registering now ("" : none).
func (t *Table) Owner() string {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.owner
}

// Add files e, as a catch-all handler if its provider and event type are
// [AnyType]; a name already registered panics.
func (t *Table) Add(e *Entry) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, dup := t.byName[e.Name]; dup {
		panic(fmt.Sprintf("process: Handle: handler name %q registered twice", e.Name))
	}
	t.seq++
	e.seq = t.seq
	e.Owner = t.owner
	t.byName[e.Name] = e
	if e.Provider == AnyType && e.EventType == AnyType {
		t.all = append(t.all, e)
		return
	}
	k := typeKey{e.Provider, e.EventType}
	t.byType[k] = append(t.byType[k], e)
}

// Match returns the handlers that run for an event of tenant and
// (provider, eventType): the typed handlers of the event type and the
// catch-all handlers, those that serve tenant, in registration order.
func (t *Table) Match(provider, tenant, eventType string) []*Entry {
	t.mu.RLock()
	defer t.mu.RUnlock()
	typed := t.byType[typeKey{provider, eventType}]
	out := make([]*Entry, 0, len(typed)+len(t.all))
	i, j := 0, 0
	for i < len(typed) || j < len(t.all) {
		var next *Entry
		if j == len(t.all) || (i < len(typed) && typed[i].seq < t.all[j].seq) {
			next, i = typed[i], i+1
		} else {
			next, j = t.all[j], j+1
		}
		if next.Serves(tenant) {
			out = append(out, next)
		}
	}
	return out
}

// Handler returns the handler registered under name, or nil.
func (t *Table) Handler(name string) *Entry {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.byName[name]
}

// Handlers returns every entry, in registration order.
func (t *Table) Handlers() []*Entry {
	t.mu.RLock()
	defer t.mu.RUnlock()
	out := make([]*Entry, 0, len(t.byName))
	for _, e := range t.byName {
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b *Entry) int { return a.seq - b.seq })
	return out
}

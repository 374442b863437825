package dispatch

import (
	"time"

	"github.com/hookwall/hookwall/shared/engine/process"
	"github.com/hookwall/hookwall/shared/internal/registry"
)

// Handler describes one handler of a registry, as the engines run it: for
// wiring logs and for the tests of the list of teams.
type Handler struct {
	// Name is the handler's registered name.
	Name string
	// Provider and EventType are the event type it serves ("*" for a
	// catch-all handler registered with process.HandleAll).
	Provider  string
	EventType string
	// MaxAttempts and Timeout are its own limits (0: the engine's defaults).
	MaxAttempts int
	Timeout     time.Duration
	// Compensated is true when it registered a compensation.
	Compensated bool
	// Owner is the package that registered it, e.g.
	// functions/processor/handlers/crm.
	Owner string

	entry *registry.Entry
}

// TargetOf returns the target of the handler's calls for an event of
// tenant (process.Target; default the handler's name).
func (h Handler) TargetOf(tenant string) string {
	if h.entry == nil {
		return h.Name
	}
	return h.entry.TargetOf(tenant)
}

// Handlers returns the handlers of r in registration order.
func Handlers(r *process.Registry) []Handler {
	return describe((*registry.Table)(r).Handlers())
}

// Match returns the handlers of r that run for an event of tenant and
// (provider, eventType), in the order they run.
func Match(r *process.Registry, provider, tenant, eventType string) []Handler {
	return describe((*registry.Table)(r).Match(provider, tenant, eventType))
}

func describe(es []*registry.Entry) []Handler {
	out := make([]Handler, len(es))
	for i, e := range es {
		out[i] = Handler{Name: e.Name, Provider: e.Provider, EventType: e.EventType,
			MaxAttempts: e.MaxAttempts, Timeout: e.Timeout, Compensated: e.Undo != nil, Owner: e.Owner, entry: e}
	}
	return out
}

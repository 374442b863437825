package dispatch

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/engine/process"
	"github.com/hookwall/hookwall/shared/internal/registry"
	"github.com/hookwall/hookwall/shared/state/store"
)

func names(hs []Handler) []string {
	var out []string
	for _, h := range hs {
		out = append(out, h.Name)
	}
	return out
}

func TestMatchMergesCatchAllsInRegistrationOrder(t *testing.T) {
	r := process.NewRegistry()
	typed := func(context.Context, *process.Event[follow]) error { return nil }
	all := func(context.Context, *process.Event[webhook.Envelope]) error { return nil }
	process.HandleAll(r, "first-all", all)
	process.Handle(r, "typed-a", followType, typed)
	process.HandleAll(r, "only-acme", all, process.ForTenants(func(tenant string) bool { return tenant == "acme" }))
	process.Handle(r, "typed-b", followType, typed, process.ForTenants(func(tenant string) bool { return tenant != "acme" }))
	process.Handle(r, "other-type", webhook.NewType[follow]("line", "unfollow"), typed)

	tests := []struct {
		provider, tenant, typ string
		want                  []string
	}{
		{"line", "acme", "follow", []string{"first-all", "typed-a", "only-acme"}},
		{"line", "globex", "follow", []string{"first-all", "typed-a", "typed-b"}},
		{"wecom", "acme", "text", []string{"first-all", "only-acme"}},
		{"wecom", "globex", "text", []string{"first-all"}},
	}
	for _, tc := range tests {
		if got := names(Match(r, tc.provider, tc.tenant, tc.typ)); !slices.Equal(got, tc.want) {
			t.Errorf("Match(%s, %s, %s): got %v, want %v", tc.provider, tc.tenant, tc.typ, got, tc.want)
		}
	}
	if h := (*registry.Table)(r).Handler("only-acme"); h == nil || h.Provider != registry.AnyType || h.EventType != registry.AnyType {
		t.Errorf("catch-all registration: got %+v, want provider and type %q", h, registry.AnyType)
	}
	if got, want := names(Handlers(r)), []string{"first-all", "typed-a", "only-acme", "typed-b", "other-type"}; !slices.Equal(got, want) {
		t.Errorf("Handlers: got %v, want %v (registration order)", got, want)
	}
}

func TestHandleAllGetsTheEnvelope(t *testing.T) {
	var got webhook.Envelope
	var gotType string
	rg := newRig(t, nil, func(r *process.Registry) {
		process.HandleAll(r, "fwd", func(_ context.Context, ev *process.Event[webhook.Envelope]) error {
			got, gotType = ev.Data, ev.Type
			return nil
		})
	})
	rg.store.Seed(store.Record{Key: "k", Status: webhook.StatusReceived})
	res := rg.d.Handle(context.Background(), delivery("k", "wecom", "anything", follow{UserID: "U1"}))
	if res.Verdict != Succeeded {
		t.Fatalf("got %v (%v), want succeeded", res.Verdict, res.Err)
	}
	if got.Key != "k" || got.Provider != "wecom" || got.Tenant != "t1" || got.Type != "anything" || gotType != "anything" ||
		string(got.Payload) != `{"userId":"U1"}` || got.ReceivedAt.IsZero() {
		t.Errorf("got envelope %+v, want the queued envelope with its payload", got)
	}
}

// A catch-all handler restricted to other tenants leaves the event unhandled,
// so UnhandledToDLQ and the Unhandled metric still apply.
func TestCatchAllForOtherTenantsLeavesTheEventUnhandled(t *testing.T) {
	ran := 0
	rg := newRig(t, nil, func(r *process.Registry) {
		process.HandleAll(r, "fwd", func(context.Context, *process.Event[webhook.Envelope]) error { ran++; return nil },
			process.ForTenants(func(tenant string) bool { return tenant == "acme" }))
	})
	rg.store.Seed(store.Record{Key: "k", Status: webhook.StatusReceived})
	res := rg.d.Handle(context.Background(), delivery("k", "line", "beacon", follow{})) // tenant t1
	if res.Verdict != Unhandled || !res.Ack || ran != 0 {
		t.Errorf("got %v ack %v, handler ran %d times; want unhandled, acked, 0", res.Verdict, res.Ack, ran)
	}
	if got := rg.metrics.Counts()[MetricUnhandled]; got != 1 {
		t.Errorf("got Unhandled %v, want 1", got)
	}
}

// A catch-all beside a typed handler: the one that completed is skipped when
// the other fails and the event is retried.
func TestCatchAllIsSkippedOnRetryOnceDone(t *testing.T) {
	var fwd, typed int
	rg := newRig(t, nil, func(r *process.Registry) {
		process.HandleAll(r, "fwd", func(context.Context, *process.Event[webhook.Envelope]) error { fwd++; return nil })
		process.Handle(r, "crm", followType, func(context.Context, *process.Event[follow]) error {
			typed++
			if typed == 1 {
				return context.DeadlineExceeded
			}
			return nil
		})
	})
	rg.store.Seed(store.Record{Key: "k", Status: webhook.StatusReceived})
	rg.d.Handle(context.Background(), delivery("k", "line", "follow", follow{}))
	res := rg.d.Handle(context.Background(), delivery("k", "line", "follow", follow{}))
	if res.Verdict != Succeeded || fwd != 1 || typed != 2 {
		t.Errorf("got %v, fwd ran %d, crm ran %d; want succeeded, 1, 2", res.Verdict, fwd, typed)
	}
}

func TestHandleAllPanics(t *testing.T) {
	fn := func(context.Context, *process.Event[webhook.Envelope]) error { return nil }
	for name, f := range map[string]func(){
		"nil registry":   func() { process.HandleAll(nil, "a", fn) },
		"nil fn":         func() { process.HandleAll(process.NewRegistry(), "a", nil) },
		"hash in name":   func() { process.HandleAll(process.NewRegistry(), "a#b", fn) },
		"nil ForTenants": func() { process.ForTenants(nil) },
		"duplicate name": func() {
			r := process.NewRegistry()
			process.Handle(r, "a", followType, func(context.Context, *process.Event[follow]) error { return nil })
			process.HandleAll(r, "a", fn)
		},
	} {
		func() {
			defer func() {
				v := recover()
				if v == nil {
					t.Errorf("%s: no panic", name)
				} else if s, _ := v.(string); !strings.HasPrefix(s, "process: ") {
					t.Errorf("%s: got panic %v, want a process: message", name, v)
				}
			}()
			f()
		}()
	}
}

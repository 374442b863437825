package process

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/internal/registry"
)

type follow struct {
	UserID string `json:"userId"`
}

var followType = webhook.NewType[follow]("line", "follow")

// Handle files an entry the engines read: its type, options and a Run that
// decodes the payload into the event.
func TestHandleFilesTheEntry(t *testing.T) {
	r := NewRegistry()
	var got *Event[follow]
	Handle(r, "crm.lead", followType, func(_ context.Context, ev *Event[follow]) error { got = ev; return nil },
		MaxAttempts(4), Timeout(time.Second), ForTenants(func(tenant string) bool { return tenant == "acme" }))
	e := r.table().Handler("crm.lead")
	if e == nil || e.Provider != "line" || e.EventType != "follow" || e.MaxAttempts != 4 || e.Timeout != time.Second ||
		!e.Serves("acme") || e.Serves("globex") || e.Undo != nil {
		t.Fatalf("got entry %+v", e)
	}
	env := webhook.Envelope{Key: "line#acme#e1", Provider: "line", Tenant: "acme", Type: "follow", Payload: []byte(`{"userId":"U1"}`)}
	if err := e.Run(context.Background(), registry.Call{Envelope: env, Attempt: 2}); err != nil {
		t.Fatal(err)
	}
	if got == nil || got.Key != env.Key || got.Tenant != "acme" || got.Attempt != 2 || got.Data.UserID != "U1" {
		t.Errorf("got event %+v", got)
	}
	env.Payload = []byte(`{"userId":`)
	if err := e.Run(context.Background(), registry.Call{Envelope: env}); !IsPermanent(err) {
		t.Errorf("undecodable payload: got %v, want a permanent error", err)
	}
}

// Target names each handler's target: the pattern with the event's tenant,
// a fixed name, or the handler's name by default; an empty pattern panics.
func TestTargetNamesTheHandlersTarget(t *testing.T) {
	r := NewRegistry()
	run := func(context.Context, *Event[webhook.Envelope]) error { return nil }
	HandleAll(r, "forward", run, Target("forward/{tenant}"))
	HandleAll(r, "crm", run, Target("crm.example.com"))
	HandleAll(r, "plain", run)
	for _, c := range []struct{ handler, tenant, want string }{
		{"forward", "acme", "forward/acme"},
		{"forward", "globex", "forward/globex"},
		{"crm", "acme", "crm.example.com"},
		{"plain", "acme", "plain"},
	} {
		if got := r.table().Handler(c.handler).TargetOf(c.tenant); got != c.want {
			t.Errorf("%s for %s: got target %q, want %q", c.handler, c.tenant, got, c.want)
		}
	}
	for _, pattern := range []string{" ", "../x", "forward//{tenant}", "forward/{tenant}/", "a#{tenant}",
		strings.Repeat("x", 200) + "/{tenant}"} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Target(%.20q): no panic", pattern)
				}
			}()
			Target(pattern)
		}()
	}
}

// A handler's name is one a pause can name: no '#', no empty, "." or ".."
// part, at most 256 bytes.
func TestHandlerNamesArePausable(t *testing.T) {
	run := func(context.Context, *Event[webhook.Envelope]) error { return nil }
	HandleAll(NewRegistry(), "team.purpose/sub-part", run)
	for _, name := range []string{"", "a#b", "../x", "a//b", "a/", strings.Repeat("x", 257), "a\x00b"} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("HandleAll(%.20q): no panic", name)
				}
			}()
			HandleAll(NewRegistry(), name, run)
		}()
	}
}

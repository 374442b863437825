package backend

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/config/setting"
	"github.com/hookwall/hookwall/shared/engine/dispatch"
	"github.com/hookwall/hookwall/shared/engine/platform"
	"github.com/hookwall/hookwall/shared/engine/process"
)

// localConfig is a backend of the local tenants document; Start builds clients
// but calls no service.
func localConfig(t *testing.T) Config {
	t.Setenv("AWS_REGION", "us-east-1")
	return Config{Function: "processor", TenantsFile: "../../../infra/local/tenants.json",
		TableName: "hookwall-events", QueueURL: "http://127.0.0.1:9324/1/q", DLQURL: "http://127.0.0.1:9324/1/dlq"}
}

var quiet = slog.New(slog.DiscardHandler)

var limit = setting.Setting{Name: "BACKEND_TEST_LIMIT", Kind: setting.KindInt, Doc: "a number", Default: "3"}

// team is a team of the tests, with the setting limit and register.
func team(register func(r *process.Registry, d platform.Deps)) []platform.Team {
	return []platform.Team{{Owner: "shared/ops/backend", Settings: []setting.Setting{limit}, Register: register}}
}

// Start gives the teams the backend's dependencies and reads their
// settings through getenv.
func TestStartBuildsTheRegistry(t *testing.T) {
	var got int
	var gotTenants bool
	register := func(r *process.Registry, d platform.Deps) {
		got = r.Int(limit)
		gotTenants = d.Tenants != nil
		process.HandleAll(r, "t.noop", func(context.Context, *process.Event[webhook.Envelope]) error { return nil })
	}
	getenv := func(k string) string {
		if k == limit.Name {
			return "7"
		}
		return ""
	}
	e, err := Start(context.Background(), localConfig(t), team(register), getenv, quiet, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if got != 7 || !gotTenants {
		t.Errorf("register saw %s=%d, tenants %v; want 7, true", limit.Name, got, gotTenants)
	}
	if hs := dispatch.Handlers(e.Registry); len(hs) != 1 || hs[0].Name != "t.noop" {
		t.Errorf("handlers %+v, want t.noop", hs)
	}
	if e.Metrics == nil || e.Table == nil || e.Queue == nil || e.DLQ == nil || e.Gate == nil {
		t.Errorf("engine %+v: want metrics, table, queues and gate", e)
	}
}

// A registration that fails (an invalid setting, a duplicate name) fails the
// start, naming the function and the cause.
func TestStartFailsOnTheRegistry(t *testing.T) {
	for name, c := range map[string]struct {
		limit    string // the value of limit
		register func(r *process.Registry, d platform.Deps)
		want     string
	}{
		"invalid setting": {"many", func(r *process.Registry, _ platform.Deps) { r.Int(limit) }, limit.Name},
		"duplicate name": {"", func(r *process.Registry, _ platform.Deps) {
			noop := func(context.Context, *process.Event[webhook.Envelope]) error { return nil }
			process.HandleAll(r, "t.noop", noop)
			process.HandleAll(r, "t.noop", noop)
		}, "t.noop"},
	} {
		t.Run(name, func(t *testing.T) {
			getenv := func(k string) string {
				if k == limit.Name {
					return c.limit
				}
				return ""
			}
			_, err := Start(context.Background(), localConfig(t), team(c.register), getenv, quiet, io.Discard)
			if err == nil || !strings.HasPrefix(err.Error(), "processor: ") || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want an error starting %q naming %s", err, "processor: ", c.want)
			}
		})
	}
}

// A backend that cannot load fails the start, naming the function.
func TestStartFailsOnTheBackend(t *testing.T) {
	c := localConfig(t)
	c.TenantsFile = t.TempDir() + "/missing.json"
	if _, err := Start(context.Background(), c, team(func(*process.Registry, platform.Deps) {}), nil, quiet, io.Discard); err == nil ||
		!strings.HasPrefix(err.Error(), "processor: ") {
		t.Errorf("got %v, want an error starting %q", err, "processor: ")
	}
}

package control_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/bus"
	"github.com/hookwall/hookwall/shared/control"
	"github.com/hookwall/hookwall/shared/drain"
	"github.com/hookwall/hookwall/shared/targets"
	"github.com/hookwall/hookwall/shared/targets/memgate"
)

var now = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

type held map[string]int

func (h held) HeldCount(_ context.Context, on string) (int, error) { return h[on], nil }

// fakeDrain answers each Release with p (reporting each release) and err.
type fakeDrain struct {
	p   drain.Progress
	err error
	ctx context.Context
}

func (d *fakeDrain) Release(ctx context.Context, _ targets.Scope, opts drain.Options) (drain.Progress, error) {
	d.ctx = ctx
	for i := range d.p.Released {
		if opts.Progress != nil {
			opts.Progress(drain.Progress{Released: i + 1})
		}
	}
	return d.p, d.err
}

type ops struct {
	got []bus.Op
	err error
}

func (o *ops) PublishOps(ctx context.Context, got []bus.Op) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	o.got = append(o.got, got...)
	return o.err
}

func setup(t *testing.T, d control.Drainer) (*control.Controller, *memgate.Gate, *ops) {
	t.Helper()
	g, err := memgate.New(targets.Config{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	o := &ops{}
	c, err := control.New(control.Config{Gate: g, Held: held{"tenant#acme": 3, "target#crm": 2}, Drain: d, Ops: o,
		Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	return c, g, o
}

func TestPauseThenResumeDrainsAndPublishes(t *testing.T) {
	d := &fakeDrain{p: drain.Progress{Released: 3}}
	c, g, o := setup(t, d)
	acme := targets.Scope{Kind: targets.KindTenant, Name: "acme"}
	ctx := context.Background()
	if res, err := c.Pause(ctx, acme, "ana", "migration"); err != nil || res.OpsErr != nil {
		t.Fatal(res, err)
	}
	p, err := c.Panel(ctx)
	if err != nil || len(p.Pauses) != 1 || !p.Pauses[0].At.Equal(now) {
		t.Fatalf("panel: %+v %v", p, err)
	}
	if p.Pauses[0].At = now; p.Pauses[0] != (control.Pause{Scope: "tenant/acme", By: "ana", Reason: "migration", At: now, Held: 3}) {
		t.Errorf("pause: %+v", p.Pauses[0])
	}
	var seen []int
	res, err := c.Resume(ctx, acme, control.ResumeOptions{Timeout: time.Minute, Progress: func(n int) { seen = append(seen, n) }})
	if err != nil || !res.WasPaused || !res.Drained || res.Released != 3 || len(seen) != 3 {
		t.Fatalf("resume: %+v %v, progress %v", res, err, seen)
	}
	if _, ok := d.ctx.Deadline(); !ok {
		t.Error("the drain ran without the Timeout")
	}
	if ps, _ := g.Pauses(ctx); len(ps) != 0 {
		t.Errorf("still paused: %v", ps)
	}
	want := []bus.Op{{Type: bus.DetailTypeControlPaused, Scope: "tenant#acme", Reason: "migration", At: now},
		{Type: bus.DetailTypeControlResumed, Scope: "tenant#acme", Count: 3, At: now}}
	if len(o.got) != 2 || o.got[0] != want[0] || o.got[1] != want[1] {
		t.Errorf("ops: %+v, want %+v", o.got, want)
	}
}

// A drain that stops early is an error with the count released, the pause
// over and the resumed event published anyway (even once the drain's
// context ended); without a drain, or with NoDrain, nothing is drained.
func TestResumeWhenTheDrainStopsEarly(t *testing.T) {
	crm := targets.Scope{Kind: targets.KindTarget, Name: "crm"}
	for _, tt := range []struct {
		name string
		d    *fakeDrain
		want string
	}{
		{"blocked again", &fakeDrain{p: drain.Progress{Released: 1, Blocked: true}}, "blocked again"},
		{"records not released", &fakeDrain{p: drain.Progress{Released: 1, Errors: 2}}, "2 event(s) could not be released"},
		{"failed", &fakeDrain{p: drain.Progress{Released: 1}, err: context.DeadlineExceeded}, "deadline exceeded"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, _, o := setup(t, tt.d)
			ctx, cancel := context.WithCancel(context.Background())
			res, err := c.Resume(ctx, crm, control.ResumeOptions{})
			cancel()
			if err == nil || !strings.Contains(err.Error(), tt.want) || res.Released != 1 || !res.Drained || res.WasPaused {
				t.Errorf("resume: %+v %v, want %q with 1 released", res, err, tt.want)
			}
			if len(o.got) != 1 || o.got[0].Count != 1 {
				t.Errorf("ops: %+v, want resumed with 1", o.got)
			}
		})
	}
	c, _, o := setup(t, &fakeDrain{p: drain.Progress{Released: 5}})
	o.err = errors.New("bus down")
	res, err := c.Resume(context.Background(), crm, control.ResumeOptions{NoDrain: true})
	if err != nil || res.Drained || res.Released != 0 || res.OpsErr == nil || !strings.Contains(res.OpsErr.Error(), "bus down") {
		t.Errorf("no drain: %+v %v, want nothing drained and the publish failure in OpsErr", res, err)
	}
	if _, err := control.New(control.Config{}); err == nil {
		t.Error("New without a Gate: no error")
	}
}

// The panel shows a tenant's breaker of a shared target as such (Of,
// Tenant) and a pause of the shared target as covering it (PausedBy: what
// resume names).
func TestPanelTenantBreakers(t *testing.T) {
	c, g, _ := setup(t, nil)
	ctx := context.Background()
	sub := targets.Subject{Handler: "crm.lead", Tenant: "acme", Target: targets.BreakerKey("crm", "acme")}
	if _, err := g.Admit(ctx, sub); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Pause(ctx, targets.Scope{Kind: targets.KindTarget, Name: "crm"}, "ana", ""); err != nil {
		t.Fatal(err)
	}
	p, err := c.Panel(ctx)
	if err != nil || len(p.Targets) != 1 {
		t.Fatalf("panel: %+v %v", p, err)
	}
	got := p.Targets[0]
	if got.Target != "crm/@acme" || got.Of != "crm" || got.Tenant != "acme" || got.Scope != "target/crm/@acme" ||
		!got.Paused || got.PausedBy != "target/crm" {
		t.Errorf("target: %+v; want crm/@acme of crm for acme, paused by target/crm", got)
	}
}

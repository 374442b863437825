package control_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/aws/bus"
	"github.com/hookwall/hookwall/shared/engine/drain"
	"github.com/hookwall/hookwall/shared/ops/control"
	"github.com/hookwall/hookwall/shared/state/targets"
	"github.com/hookwall/hookwall/shared/state/targets/memgate"
)

var now = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

type held map[string]int

func (h held) HeldCount(_ context.Context, on string) (int, error) { return h[on], nil }

// fakeDrain answers each Release with p (reporting each release) and err.
type fakeDrain struct {
	p    drain.Progress
	err  error
	ctx  context.Context
	opts drain.Options
	log  *[]string // "drain" appended at each Release
}

func (d *fakeDrain) Release(ctx context.Context, _ targets.Scope, opts drain.Options) (drain.Progress, error) {
	d.ctx, d.opts = ctx, opts
	if d.log != nil {
		*d.log = append(*d.log, "drain")
	}
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

// slept records the waits of a controller (without waiting), in the same
// log as a fakeDrain's releases.
type slept struct{ log []string }

func (s *slept) Sleep(_ context.Context, d time.Duration) error {
	s.log = append(s.log, "sleep "+d.String())
	return nil
}

func setup(t *testing.T, d control.Drainer) (*control.Controller, *memgate.Gate, *ops) {
	c, g, o, _ := setupSlept(t, d)
	return c, g, o
}

func setupSlept(t *testing.T, d control.Drainer) (*control.Controller, *memgate.Gate, *ops, *slept) {
	t.Helper()
	g, err := memgate.New(targets.Config{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	o := &ops{}
	sl := &slept{}
	if fd, ok := d.(*fakeDrain); ok {
		fd.log = &sl.log
	}
	c, err := control.New(control.Config{Gate: g, Held: held{"tenant#acme": 3, "target#crm": 2}, Drain: d, Ops: o,
		Now: func() time.Time { return now }, Sleep: sl.Sleep})
	if err != nil {
		t.Fatal(err)
	}
	return c, g, o, sl
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
	// Blocked again is what it is, not a failure.
	c, _, o := setup(t, &fakeDrain{p: drain.Progress{Released: 1, Blocked: true}})
	res, err := c.Resume(context.Background(), crm, control.ResumeOptions{})
	if err != nil || !res.Blocked || res.Released != 1 || !strings.Contains(res.Summary(crm), "blocked again") ||
		strings.Contains(res.Summary(crm), "fail") {
		t.Errorf("blocked again: %+v %v %q, want no error and Blocked said", res, err, res.Summary(crm))
	}
	c, _, o = setup(t, &fakeDrain{p: drain.Progress{Released: 5}})
	o.err = errors.New("bus down")
	res, err = c.Resume(context.Background(), crm, control.ResumeOptions{NoDrain: true})
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

// Issue 29 item 5: a resume that ended a pause waits Settle (every
// processor's copy of the pauses has expired) before it drains, so that
// what it releases is not held again; the answer counts what runs.
func TestResumeWaitsOutTheProcessorsCopiesBeforeDraining(t *testing.T) {
	d := &fakeDrain{p: drain.Progress{Released: 10, Waiting: 2}}
	c, _, o, sl := setupSlept(t, d)
	acme := targets.Scope{Kind: targets.KindTenant, Name: "acme"}
	ctx := context.Background()
	if _, err := c.Pause(ctx, acme, "ana", ""); err != nil {
		t.Fatal(err)
	}
	res, err := c.Resume(ctx, acme, control.ResumeOptions{})
	if err != nil || res.Released != 10 || res.Waiting != 2 || res.Probing {
		t.Fatalf("resume: %+v %v", res, err)
	}
	if want := []string{"sleep " + control.Settle.String(), "drain"}; strings.Join(sl.log, ",") != strings.Join(want, ",") {
		t.Errorf("resume did %v, want %v", sl.log, want)
	}
	if control.Settle <= targets.PauseCacheFor || control.Settle <= targets.BreakerCacheFor || control.Settle > 5*time.Second {
		t.Errorf("Settle %s: want over the caches (%s, %s) and far under the recheck", control.Settle, targets.PauseCacheFor, targets.BreakerCacheFor)
	}
	if sum := res.Summary(acme); !strings.Contains(sum, "released 10 held event(s), running now") || !strings.Contains(sum, "2 more wait") {
		t.Errorf("summary %q", sum)
	}
	if o.got[len(o.got)-1].Count != 12 {
		t.Errorf("resumed op %+v, want the 12 released", o.got[len(o.got)-1])
	}
	// Nothing paused, no breaker: nothing to wait for.
	sl.log = nil
	if _, err := c.Resume(ctx, acme, control.ResumeOptions{}); err != nil || strings.Join(sl.log, ",") != "drain" {
		t.Errorf("resume of what is not paused: %v, did %v, want only the drain", err, sl.log)
	}
}

// An open breaker's resume makes its probe due now and releases one
// carrier (not everything, which would only be held again), after Settle;
// the answer says so, with no "failed"; the panel never shows a probe time
// in the past.
func TestResumeOfAnOpenBreakerProbesNow(t *testing.T) {
	d := &fakeDrain{p: drain.Progress{Released: 1}}
	c, g, _, sl := setupSlept(t, d)
	clock := now
	gate, err := g.Instance(targets.Config{Now: func() time.Time { return clock }, MinCalls: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sub := targets.Subject{Handler: "h", Tenant: "acme", Target: "crm"}
	a, err := gate.Admit(ctx, sub)
	if err != nil {
		t.Fatal(err)
	}
	if tr, err := gate.Report(ctx, a, sub, true); err != nil || !tr.Opened {
		t.Fatalf("open the breaker: %+v %v", tr, err)
	}
	bs, _ := g.Breakers(ctx)
	if len(bs) != 1 || !bs[0].ProbeAt.After(now) {
		t.Fatalf("breakers %+v, want crm open with a probe later", bs)
	}
	crm := targets.Scope{Kind: targets.KindTarget, Name: "crm"}
	res, err := c.Resume(ctx, crm, control.ResumeOptions{})
	if err != nil || !res.Probing || res.Released != 1 || !d.opts.Force || d.opts.Limit != 1 {
		t.Fatalf("resume: %+v %v, drain options %+v; want one carrier released by force", res, err, d.opts)
	}
	if strings.Join(sl.log, ",") != "sleep "+control.Settle.String()+",drain" {
		t.Errorf("resume did %v, want Settle then the drain", sl.log)
	}
	if bs, _ := g.Breakers(ctx); bs[0].ProbeAt.After(now) {
		t.Errorf("probe at %v after the resume, want due now (%v)", bs[0].ProbeAt, now)
	}
	p, err := c.Panel(ctx)
	if err != nil || len(p.Targets) != 1 || p.Targets[0].ProbeAt.Before(now) || !p.Targets[0].ProbeDue {
		t.Errorf("panel %+v %v, want the probe due now, not in the past", p, err)
	}
	if a, _ := gate.Admit(ctx, sub); a.Verdict != targets.Probe {
		t.Errorf("admission after the resume: %v, want the probe", a.Verdict)
	}
	if sum := res.Summary(crm); strings.Contains(sum, "fail") || !strings.Contains(sum, "probe is made now") {
		t.Errorf("summary %q", sum)
	}
}

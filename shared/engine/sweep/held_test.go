package sweep_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/engine/drain"
	"github.com/hookwall/hookwall/shared/engine/sweep"
	"github.com/hookwall/hookwall/shared/state/targets"
	"github.com/hookwall/hookwall/shared/state/targets/memgate"
)

// heldEnv is a sweeper with a gate and a drain over the test's table.
type heldEnv struct {
	*env
	gate *memgate.Gate
}

const probeEvery = 30 * time.Second

func newHeldEnv(t *testing.T) *heldEnv {
	t.Helper()
	var gate *memgate.Gate
	e := newEnv(t, func(c *sweep.Config) {
		var err error
		gate, err = memgate.New(targets.Config{Now: c.Now, ProbeInterval: probeEvery, Rate: 100})
		if err != nil {
			t.Fatal(err)
		}
		d, err := drain.New(drain.Config{Store: c.Store.(drain.Store), Gate: gate, Queue: c.Queue, Now: c.Now})
		if err != nil {
			t.Fatal(err)
		}
		c.Gate, c.Drain = gate, d
	})
	return &heldEnv{env: e, gate: gate}
}

// hold claims key and holds it on on (target target), due for a look at
// now + recheck, as the processor does.
func (e *heldEnv) hold(key, on, target string, recheck time.Duration) {
	e.t.Helper()
	e.claim(key)
	l := e.acquire(key, time.Minute)
	ok, err := e.mem.Hold(e.ctx, l, webhook.Hold{Reason: "test", On: on, Target: target,
		RecheckAt: e.clock.Now().Add(recheck), RetainUntil: e.clock.Now().Add(window)})
	if !ok || err != nil {
		e.t.Fatalf("hold %s: %v %v", key, ok, err)
	}
}

func (e *heldEnv) status(key string) webhook.Status { return e.get(key).Status }

// openBreaker makes target's breaker open: MinCalls failed calls.
func (e *heldEnv) openBreaker(target string) {
	e.t.Helper()
	s := targets.Subject{Handler: "forward", Tenant: "t1", Target: target}
	for range targets.DefaultMinCalls {
		a, err := e.gate.Admit(e.ctx, s)
		if err != nil || a.Verdict != targets.Allow {
			e.t.Fatalf("admit: %+v %v", a, err)
		}
		if _, err := e.gate.Report(e.ctx, a, s, true); err != nil {
			e.t.Fatal(err)
		}
	}
	if blocked, _ := e.gate.Blocked(e.ctx, targets.Scope{Kind: targets.KindTarget, Name: target}); !blocked {
		e.t.Fatal("the breaker did not open")
	}
}

// A due HELD record whose scope is still blocked is never stuck: its next
// look is pushed and its TTL raised, nothing is sent; once the scope is
// resumed, the next look drains it.
func TestHeldRecordStillBlockedIsRechecked(t *testing.T) {
	e := newHeldEnv(t)
	tenant := targets.Scope{Kind: targets.KindTenant, Name: "t1"}
	if err := e.gate.Pause(e.ctx, tenant, "test", "maintenance"); err != nil {
		t.Fatal(err)
	}
	e.hold("line#t1#paused", tenant.String(), "forward/t1", time.Minute)
	e.clock.Advance(window) // days later: past the claim's window, the TTL the hold set
	e.clock.Advance(-time.Hour)
	now := e.clock.Now()
	want(t, e.run(), sweep.Report{Scanned: 1, Rechecked: 1})
	rec := e.get("line#t1#paused")
	if rec.Status != webhook.StatusHeld || rec.SweepAt != ms(now.Add(sweep.DefaultHeldRecheck)) ||
		rec.RecheckAt != rec.SweepAt || rec.ExpiresAt != now.Add(sweep.DefaultRetention).Unix() {
		t.Errorf("got %s sweepAt %d recheckAt %d expiresAt %d; want HELD, looked at again in %v, kept %v more",
			rec.Status, rec.SweepAt, rec.RecheckAt, rec.ExpiresAt, sweep.DefaultHeldRecheck, sweep.DefaultRetention)
	}
	if len(e.q.sent) != 0 || len(e.dlq.letters) != 0 {
		t.Errorf("sent %v and dead-lettered %d, want nothing", e.q.keys(), len(e.dlq.letters))
	}
	want(t, e.run(), sweep.Report{}) // not due again yet

	if err := e.gate.Resume(e.ctx, tenant); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(sweep.DefaultHeldRecheck)
	want(t, e.run(), sweep.Report{Scanned: 1, Drained: 1, Released: 1})
	if st := e.status("line#t1#paused"); st != webhook.StatusRetry || len(e.q.sent) != 1 {
		t.Errorf("after the resume: %s, sent %v; want RETRY and sent once", st, e.q.keys())
	}
}

// An open breaker whose probe is due gets exactly one probe carrier per
// run; its other held records wait. Once the breaker closes, the next run
// drains the target without waiting for the records' recheck.
func TestProbeCarrierThenDrainAfterClose(t *testing.T) {
	e := newHeldEnv(t)
	const target = "forward/t1"
	on := targets.Scope{Kind: targets.KindTarget, Name: target}.String()
	e.openBreaker(target)
	var keys []string
	for i := range 4 {
		k := fmt.Sprintf("line#t1#held-%d", i)
		e.hold(k, on, target, time.Hour)
		keys = append(keys, k)
		e.clock.Advance(time.Millisecond)
	}
	want(t, e.run(), sweep.Report{}) // the probe is not due yet
	e.clock.Advance(probeEvery)
	want(t, e.run(), sweep.Report{Released: 1, Carriers: 1})
	if got := e.q.keys(); len(got) != 1 || got[0] != keys[0] || e.status(keys[0]) != webhook.StatusRetry {
		t.Fatalf("sent %v, want the oldest held record as the carrier", got)
	}
	// The carrier reaches the processor, which wins the probe, and the
	// target answers: the breaker closes.
	s := targets.Subject{Handler: "forward", Tenant: "t1", Target: target}
	a, err := e.gate.Admit(e.ctx, s)
	if err != nil || a.Verdict != targets.Probe {
		t.Fatalf("admit the carrier: %+v %v, want the probe", a, err)
	}
	if tr, err := e.gate.Report(e.ctx, a, s, false); err != nil || !tr.Closed {
		t.Fatalf("report the probe: %+v %v, want closed", tr, err)
	}
	want(t, e.run(), sweep.Report{Released: 3})
	for _, k := range keys {
		if st := e.status(k); st != webhook.StatusRetry {
			t.Errorf("%s: %s, want RETRY", k, st)
		}
	}
	if got := e.q.keys(); len(got) != 4 {
		t.Errorf("sent %v, want each held record once", got)
	}
}

// A paused target gets no probe carrier even with its breaker open.
func TestPausedTargetGetsNoCarrier(t *testing.T) {
	e := newHeldEnv(t)
	const target = "forward/t1"
	sc := targets.Scope{Kind: targets.KindTarget, Name: target}
	e.openBreaker(target)
	if err := e.gate.Pause(e.ctx, sc, "test", ""); err != nil {
		t.Fatal(err)
	}
	e.hold("line#t1#p", sc.String(), target, time.Hour)
	e.clock.Advance(probeEvery)
	want(t, e.run(), sweep.Report{})
	if len(e.q.sent) != 0 {
		t.Errorf("sent %v, want nothing", e.q.keys())
	}
}

// Without a gate, a due held record is kept (rechecked), never requeued
// as stuck; New refuses a gate without a drain.
func TestHeldWithoutAGate(t *testing.T) {
	e := newEnv(t)
	e.claim("line#t1#h")
	l := e.acquire("line#t1#h", time.Minute)
	if ok, err := e.mem.Hold(e.ctx, l, webhook.Hold{On: "target#x", RecheckAt: e.clock.Now().Add(time.Minute),
		RetainUntil: e.clock.Now().Add(window)}); !ok || err != nil {
		t.Fatal(ok, err)
	}
	e.clock.Advance(time.Hour)
	want(t, e.run(), sweep.Report{Scanned: 1, Rechecked: 1})
	if _, err := sweep.New(sweep.Config{Store: e.st, Queue: e.q, DLQ: e.dlq, Gate: &memgate.Gate{}}); err == nil {
		t.Error("a gate without a drain: got no error")
	}
}

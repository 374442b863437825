package drain_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/base/webhook/webhooktest"
	"github.com/hookwall/hookwall/shared/engine/drain"
	"github.com/hookwall/hookwall/shared/state/store"
	"github.com/hookwall/hookwall/shared/state/store/memstore"
	"github.com/hookwall/hookwall/shared/state/targets"
	"github.com/hookwall/hookwall/shared/state/targets/memgate"
)

// Both stores and the gate satisfy the drain's ports.
var (
	_ drain.Store = (*store.Table)(nil)
	_ drain.Store = (*memstore.Store)(nil)
	_ drain.Gate  = targets.Gate(nil)
)

// sentQueue records what was sent, with the clock's time of each send.
type sentQueue struct {
	mu    sync.Mutex
	clk   *webhooktest.Clock
	keys  []string
	times []time.Time
}

func (q *sentQueue) Send(_ context.Context, envs []webhook.Envelope) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, e := range envs {
		q.keys = append(q.keys, e.Key)
		q.times = append(q.times, q.clk.Now())
	}
	return nil
}

type rig struct {
	clk  *webhooktest.Clock
	st   *memstore.Store
	gate *memgate.Gate
	q    *sentQueue
	d    *drain.Drainer
}

func newRig(t *testing.T, rate float64) *rig {
	t.Helper()
	clk := webhooktest.NewClock(time.UnixMilli(1_800_000_000_000))
	st := memstore.New(memstore.Config{Now: clk.Now})
	gate, err := memgate.New(targets.Config{Rate: rate, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	q := &sentQueue{clk: clk}
	d, err := drain.New(drain.Config{Store: st, Gate: gate, Queue: q, Now: clk.Now,
		Sleep: func(_ context.Context, d time.Duration) error { clk.Advance(d); return nil }})
	if err != nil {
		t.Fatal(err)
	}
	return &rig{clk: clk, st: st, gate: gate, q: q, d: d}
}

// hold makes n HELD records on scope on, for target, one ms apart; it
// returns their keys, oldest first.
func (r *rig) hold(t *testing.T, n int, on, target string) []string {
	t.Helper()
	ctx := context.Background()
	var keys []string
	for i := range n {
		k := fmt.Sprintf("line#acme#%s-%03d", on, i)
		if res, err := r.st.Claim(ctx, store.NewEvent{Key: k, Provider: "line", Tenant: "acme", EventType: "follow",
			PayloadHash: "h", Payload: []byte(`{}`)}, time.Hour); err != nil || res.Outcome != store.Claimed {
			t.Fatalf("claim: %v %v", res.Outcome, err)
		}
		acq, err := r.st.Acquire(ctx, k, "w", r.clk.Now().Add(time.Minute))
		if err != nil || acq.Outcome != webhook.Acquired {
			t.Fatalf("acquire: %+v %v", acq, err)
		}
		if ok, err := r.st.Hold(ctx, acq.Lease, webhook.Hold{Reason: "test", On: on, Target: target,
			RecheckAt: r.clk.Now().Add(time.Minute), RetainUntil: r.clk.Now().Add(24 * time.Hour)}); !ok || err != nil {
			t.Fatalf("hold: %v %v", ok, err)
		}
		keys = append(keys, k)
		r.clk.Advance(time.Millisecond)
	}
	return keys
}

func (r *rig) statuses(keys []string) map[webhook.Status]int {
	out := map[webhook.Status]int{}
	for _, k := range keys {
		rec, _ := r.st.Get(context.Background(), k)
		out[rec.Status]++
	}
	return out
}

// A drain releases every held record of its scope, oldest first, each sent
// once, at the target's rate: 25 records at 10/s take 1.5 s past the
// first second's burst of 10.
func TestReleaseDrainsAtTheRate(t *testing.T) {
	r := newRig(t, 10)
	on := targets.Scope{Kind: targets.KindTarget, Name: "forward/acme"}
	keys := r.hold(t, 25, on.String(), "forward/acme")
	other := r.hold(t, 2, "tenant#globex", "forward/globex")
	start := r.clk.Now()
	var calls []drain.Progress
	p, err := r.d.Release(context.Background(), on, drain.Options{Progress: func(p drain.Progress) { calls = append(calls, p) }})
	if err != nil {
		t.Fatal(err)
	}
	if p.Released != 25 || p.Seen != 25 || p.MovedOn != 0 || p.Errors != 0 || p.More || !p.Done {
		t.Errorf("got %+v, want 25 released", p)
	}
	if !slices.Equal(r.q.keys, keys) {
		t.Errorf("sent %v, want each held key once, oldest first: %v", r.q.keys, keys)
	}
	if got := r.statuses(keys); got[webhook.StatusRetry] != 25 {
		t.Errorf("statuses %v, want 25 RETRY", got)
	}
	if got := r.statuses(other); got[webhook.StatusHeld] != 2 {
		t.Errorf("the other scope: %v, want 2 still HELD", got)
	}
	// The rate: in any window of one second from the start, at most 10
	// sends beyond the burst of 10.
	for i, at := range r.q.times {
		if limit := start.Add(time.Duration(max(i+1-10, 0)) * 100 * time.Millisecond); at.Before(limit) {
			t.Errorf("send %d at +%v, before +%v: over the rate of 10/s", i, at.Sub(start), limit.Sub(start))
		}
	}
	if len(calls) < 3 || !calls[len(calls)-1].Done {
		t.Errorf("progress calls %d (last %+v), want one per batch and a last one done", len(calls), calls[len(calls)-1])
	}
	// A second drain finds nothing.
	if p, err := r.d.Release(context.Background(), on, drain.Options{}); err != nil || p.Released != 0 || p.Seen != 0 {
		t.Errorf("second drain: %+v, %v; want nothing", p, err)
	}
}

// A blocked scope is left alone unless forced; Limit bounds the release
// (the sweeper's probe carrier: Force and Limit 1).
func TestReleaseRespectsBlockedAndLimit(t *testing.T) {
	r := newRig(t, 10)
	ctx := context.Background()
	on := targets.Scope{Kind: targets.KindTenant, Name: "acme"}
	keys := r.hold(t, 3, on.String(), "forward/acme")
	if err := r.gate.Pause(ctx, on, "test", "maintenance"); err != nil {
		t.Fatal(err)
	}
	p, err := r.d.Release(ctx, on, drain.Options{})
	if err != nil || p.Released != 0 || !p.Blocked || !p.More {
		t.Errorf("paused: got %+v, %v; want nothing released, blocked", p, err)
	}
	p, err = r.d.Release(ctx, on, drain.Options{Force: true, Limit: 1})
	if err != nil || p.Released != 1 || !p.More || !slices.Equal(r.q.keys, keys[:1]) {
		t.Errorf("forced, limit 1: got %+v (sent %v), %v; want the oldest released", p, r.q.keys, err)
	}
	if err := r.gate.Resume(ctx, on); err != nil {
		t.Fatal(err)
	}
	p, err = r.d.Release(ctx, on, drain.Options{})
	if err != nil || p.Released != 2 || !slices.Equal(r.q.keys, keys) {
		t.Errorf("resumed: got %+v (sent %v), %v; want the other two", p, r.q.keys, err)
	}
	if _, err := r.d.Release(ctx, targets.Scope{Kind: "bogus", Name: "x"}, drain.Options{}); err == nil {
		t.Error("a bad scope: got no error")
	}
}

// A record released by someone else between the index read and the write
// counts as moved on and is not sent.
func TestReleaseSkipsARecordThatMovedOn(t *testing.T) {
	r := newRig(t, 10)
	ctx := context.Background()
	on := targets.Scope{Kind: targets.KindTarget, Name: "forward/acme"}
	keys := r.hold(t, 2, on.String(), "forward/acme")
	rec, _ := r.st.Get(ctx, keys[0])
	if ok, err := r.st.Release(ctx, rec, r.clk.Now()); !ok || err != nil {
		t.Fatal(ok, err)
	}
	p, err := r.d.Release(ctx, on, drain.Options{})
	if err != nil || p.Released != 1 || !slices.Equal(r.q.keys, keys[1:]) {
		t.Errorf("got %+v (sent %v), %v; want only the one still held", p, r.q.keys, err)
	}
}

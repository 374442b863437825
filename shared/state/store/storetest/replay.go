package storetest

import (
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/state/store"
)

func (e *env) replay(t *testing.T, opts store.ReplayOptions) store.ReplayResult {
	t.Helper()
	res, err := e.s.Replay(e.ctx, key, opts)
	if err != nil {
		t.Fatalf("replay: %v", err)
	}
	return res
}

// replayed replays key and fails the test unless it was.
func (e *env) replayed(t *testing.T, opts store.ReplayOptions) *store.Record {
	t.Helper()
	res := e.replay(t, opts)
	if res.Outcome != store.Replayed || res.Record == nil {
		t.Fatalf("replay: got %v, want replayed", res.Outcome)
	}
	return res.Record
}

var replayCases = []testCase{
	{"replay sends a FAILED record back to RECEIVED, ready for a first attempt", func(t *testing.T, e *env) {
		base := e.clk.Now()
		first := e.failed(t)
		e.clk.Advance(time.Minute)
		now := e.clk.Now()
		rec := e.replayed(t, store.ReplayOptions{Window: time.Minute})
		got := e.mustGet(t)
		for name, r := range map[string]*store.Record{"returned": rec, "stored": got} {
			if r.Status != webhook.StatusReceived || r.Version != 4 || r.Attempts != 0 || r.Compensations != 0 || r.LeaseOwner != "" ||
				r.LeaseUntil != 0 || r.LastError != "" || r.EnqueuedAt != now.UnixMilli() || r.UpdatedAt != now.UnixMilli() ||
				r.SweepShard != store.ShardName(shardOfKey) || r.SweepAt != now.Add(SweepAfter).UnixMilli() ||
				r.ClaimID != first.ClaimID || r.ExpiresAt != base.Add(Window).Unix() {
				t.Errorf("%s: got %+v, want RECEIVED at version 4, counters 0, no lease or error, enqueued now, swept later, the same claim and expiry", name, r)
			}
		}
		if h := describeHistory(got.History[len(got.History)-1:], base); h != "v4 FAILED→RECEIVED attempt=0 owner= error=\"\" fn=storetest @60000\n" {
			t.Errorf("history: got %s", h)
		}
		l := e.leased(t, "w2")
		if l.Attempt != 1 || l.Version != 5 {
			t.Errorf("the next acquire: got attempt %d version %d, want 1, 5", l.Attempt, l.Version)
		}
		if j := e.journal(t, l); len(j) != 1 {
			t.Errorf("the steps done before the replay: got %s, want the one journaled", describe(j))
		}
	}},
	{"replay of a SUCCEEDED record is refused without force and writes nothing", func(t *testing.T, e *env) {
		l := e.firstLease(t)
		held(t, "complete")(e.s.Complete(e.ctx, l, e.clk.Now().Add(Window)))
		before := e.mustGet(t)
		res := e.replay(t, store.ReplayOptions{Window: Window})
		if res.Outcome != store.ReplayRefused || res.Record == nil || res.Record.Status != webhook.StatusSucceeded {
			t.Fatalf("got %v with %+v, want refused with the SUCCEEDED record", res.Outcome, res.Record)
		}
		if got := e.mustGet(t); got.Version != before.Version || got.Status != webhook.StatusSucceeded || got.SweepAt != before.SweepAt {
			t.Errorf("the refused replay wrote: %+v", got)
		}
		rec := e.replayed(t, store.ReplayOptions{Force: true, Window: Window})
		if rec.Status != webhook.StatusReceived || rec.Version != before.Version+1 || rec.SweepAt == 0 {
			t.Errorf("forced: got %+v, want RECEIVED at the next version, indexed again", rec)
		}
		if got := e.stuck(t, shardOfKey, e.clk.Now().Add(SweepAfter), 10); len(got) != 1 {
			t.Errorf("stuck after the forced replay: got %v, want the record", got)
		}
	}},
	{"replay with fresh steps starts a new journal", func(t *testing.T, e *env) {
		first := e.failed(t)
		rec := e.replayed(t, store.ReplayOptions{FreshSteps: true, Window: Window})
		if rec.ClaimID == first.ClaimID || rec.ClaimID == "" {
			t.Fatalf("got claim %q, want a new one", rec.ClaimID)
		}
		if j := e.journal(t, e.leased(t, "w2")); len(j) != 0 {
			t.Errorf("the new claim's journal: got %s, want empty", describe(j))
		}
	}},
	{"replay of a live lease is refused, of an expired one allowed", func(t *testing.T, e *env) {
		e.claimed(t)
		e.leased(t, "w1")
		if res := e.replay(t, store.ReplayOptions{Force: true}); res.Outcome != store.ReplayRefused || res.Record.LeaseOwner != "w1" {
			t.Errorf("live processing lease: got %v, want refused with the record", res.Outcome)
		}
		e.clk.Advance(LeaseFor + time.Millisecond)
		if rec := e.replayed(t, store.ReplayOptions{}); rec.Version != 3 {
			t.Errorf("got version %d, want 3", rec.Version)
		}
		e.compensating(t, "c1")
		if res := e.replay(t, store.ReplayOptions{}); res.Outcome != store.ReplayRefused {
			t.Errorf("live compensation lease: got %v, want refused", res.Outcome)
		}
	}},
	{"replay takes DEAD, COMPENSATED, RETRY and RECEIVED records", func(t *testing.T, e *env) {
		e.failed(t)
		l := e.compensating(t, "c1").Lease
		held(t, "dead")(e.s.Dead(e.ctx, l, "gave up", e.clk.Now().Add(Window)))
		for i, next := range []func(){
			func() {}, // DEAD
			func() { // RECEIVED (the replay left it so)
			},
			func() { // RETRY
				held(t, "retry")(e.s.Retry(e.ctx, e.leased(t, "w2"), "x"))
			},
			func() { // COMPENSATED
				held(t, "compensated")(e.s.Compensated(e.ctx, e.compensating(t, "c2").Lease, e.clk.Now().Add(Window)))
			},
		} {
			next()
			from := e.mustGet(t).Status
			if rec := e.replayed(t, store.ReplayOptions{}); rec.History[len(rec.History)-1].From != from {
				t.Errorf("replay %d: the history says from %s, want %s", i, rec.History[len(rec.History)-1].From, from)
			}
		}
	}},
	{"replay from given states refuses a record in another state and writes nothing", func(t *testing.T, e *env) {
		e.failed(t)
		from := []webhook.Status{webhook.StatusFailed}
		if rec := e.replayed(t, store.ReplayOptions{From: from, Window: Window}); rec.Status != webhook.StatusReceived {
			t.Fatalf("from FAILED: got %s, want RECEIVED", rec.Status)
		}
		before := e.mustGet(t)
		res := e.replay(t, store.ReplayOptions{From: from, Window: Window})
		if res.Outcome != store.ReplayRefused || res.Record == nil || res.Record.Status != webhook.StatusReceived {
			t.Fatalf("a second replay from FAILED: got %v with %+v, want refused with the RECEIVED record", res.Outcome, res.Record)
		}
		if got := e.mustGet(t); got.Version != before.Version {
			t.Errorf("the refused replay wrote: version %d, want %d", got.Version, before.Version)
		}
	}},
	{"replay of a key never claimed or expired is missing", func(t *testing.T, e *env) {
		if res := e.replay(t, store.ReplayOptions{Force: true}); res.Outcome != store.ReplayMissing || res.Record != nil {
			t.Errorf("never claimed: got %v, want missing", res.Outcome)
		}
		e.failed(t)
		e.clk.Advance(Window + 2*time.Second)
		if res := e.replay(t, store.ReplayOptions{Force: true, Window: Window}); res.Outcome != store.ReplayMissing {
			t.Errorf("expired: got %v, want missing", res.Outcome)
		}
	}},
	{"replay extends the expiry to the window and never shortens it", func(t *testing.T, e *env) {
		rec := e.claimed(t)
		if got := e.replayed(t, store.ReplayOptions{Window: time.Minute}); got.ExpiresAt != rec.ExpiresAt {
			t.Errorf("short window: got expiresAt %d, want %d kept", got.ExpiresAt, rec.ExpiresAt)
		}
		if got := e.replayed(t, store.ReplayOptions{Window: 3 * Window}); got.ExpiresAt != e.clk.Now().Add(3*Window).Unix() {
			t.Errorf("long window: got expiresAt %d, want %d", got.ExpiresAt, e.clk.Now().Add(3*Window).Unix())
		}
	}},
}

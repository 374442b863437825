package storetest

import (
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/base/format"
	"github.com/hookwall/hookwall/shared/base/release"
	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/state/store"
)

var claimCases = []testCase{
	{"a first claim creates a RECEIVED record at version 1 with a claim id", func(t *testing.T, e *env) {
		now := e.clk.Now()
		ev := newEvent(key, "h1")
		ev.OccurredAt = now.Add(-time.Minute)
		e.ops()
		res, err := e.s.Claim(e.ctx, ev, Window)
		if err != nil || res.Outcome != store.Claimed || res.Record == nil {
			t.Fatalf("got %v, %v; want claimed", res.Outcome, err)
		}
		e.expectOps(t, "claim", map[string]int{"PutItem": 1})
		want := store.Record{Key: key, SK: store.SKEvent, Status: webhook.StatusReceived, Version: 1,
			Provider: "line", Tenant: "acme", EventType: "follow", ReceivedAt: now.UnixMilli(), UpdatedAt: now.UnixMilli(),
			EnqueuedAt: now.UnixMilli(), ExpiresAt: now.Add(Window).Unix(), OccurredAt: now.Add(-time.Minute).UnixMilli(),
			PayloadHash: "h1", Payload: store.Payload(ev.Payload), TraceID: "trace-1", ClaimID: res.Record.ClaimID,
			SweepShard: store.ShardName(store.ShardOf(key)), SweepAt: now.Add(SweepAfter).UnixMilli(),
			History:    []webhook.HistoryEntry{{At: time.UnixMilli(now.UnixMilli()), To: webhook.StatusReceived, Function: Function, Version: 1}},
			Deliveries: 1, LastDeliveryAt: now.UnixMilli(), Format: format.ItemVersion, Release: release.Version}
		if res.Record.ClaimID == "" || res.Counted {
			t.Errorf("the claim has no claim id, or says it counted a duplicate")
		}
		if !reflect.DeepEqual(*res.Record, want) {
			t.Errorf("claimed record:\n got %+v\nwant %+v", *res.Record, want)
		}
		if got := e.mustGet(t); !reflect.DeepEqual(*got, want) {
			t.Errorf("stored record:\n got %+v\nwant %+v", *got, want)
		}
	}},
	{"a claim of a live key with the same payload hash is a duplicate, counted by a second write, carrying the record", func(t *testing.T, e *env) {
		first := e.claimed(t)
		e.clk.Advance(time.Second)
		e.ops()
		res := e.claim(t, "h1")
		e.expectOps(t, "duplicate claim", map[string]int{"PutItem": 1, "UpdateItem": 1})
		want := *first
		want.Deliveries, want.LastDeliveryAt = 2, e.clk.Now().UnixMilli()
		if res.Outcome != store.Duplicate || !res.Counted || res.Record == nil || !reflect.DeepEqual(*res.Record, want) {
			t.Fatalf("got %v (counted %v) with %+v, want a counted duplicate with the first record %+v", res.Outcome, res.Counted, res.Record, want)
		}
		if got := e.mustGet(t); !reflect.DeepEqual(*got, want) {
			t.Errorf("the duplicate changed the record beyond its count:\n got %+v\nwant %+v", got, want)
		}
	}},
	{"a duplicate's claim never sets an attribute the record lacks: it only counts the delivery", func(t *testing.T, e *env) {
		bare := newEvent(key, "h1")
		bare.TraceID = ""
		if res, err := e.s.Claim(e.ctx, bare, Window); err != nil || res.Outcome != store.Claimed {
			t.Fatalf("claim: %v, %v", res.Outcome, err)
		}
		want := *e.mustGet(t)
		for _, c := range []struct {
			what string
			edit func(ev *store.NewEvent)
		}{
			{"a trace id", func(ev *store.NewEvent) { ev.TraceID = "trace-2" }},
			{"an occurrence time", func(ev *store.NewEvent) { ev.TraceID, ev.OccurredAt = "", e.clk.Now() }},
		} {
			e.clk.Advance(time.Second)
			ev := newEvent(key, "h1")
			c.edit(&ev)
			e.ops()
			res, err := e.s.Claim(e.ctx, ev, Window)
			e.expectOps(t, "claim", map[string]int{"PutItem": 1, "UpdateItem": 1})
			want.Deliveries, want.LastDeliveryAt = want.DeliveryCount()+1, e.clk.Now().UnixMilli()
			if err != nil || res.Outcome != store.Duplicate || !res.Counted || !reflect.DeepEqual(*res.Record, want) {
				t.Fatalf("duplicate with %s: got %v (counted %v), %v, record %+v; want a counted duplicate with %+v",
					c.what, res.Outcome, res.Counted, err, res.Record, want)
			}
			if got := e.mustGet(t); !reflect.DeepEqual(*got, want) {
				t.Errorf("duplicate with %s changed the record beyond its count:\n got %+v\nwant %+v", c.what, got, want)
			}
		}
	}},
	{"concurrent first claims of a key: exactly one claims, every other is a counted duplicate of its record", func(t *testing.T, e *env) {
		const n = 8
		results := make([]store.ClaimResult, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { results[i], errs[i] = e.s.Claim(e.ctx, newEvent(key, "h1"), Window) })
		}
		wg.Wait()
		var owner *store.Record
		for i, res := range results {
			if errs[i] != nil {
				t.Fatalf("claim %d: %v", i, errs[i])
			}
			if res.Outcome == store.Claimed {
				if owner != nil {
					t.Fatalf("two claims own the key: %s and %s", owner.ClaimID, res.Record.ClaimID)
				}
				owner = res.Record
			}
		}
		if owner == nil {
			t.Fatalf("no claim owns the key: %+v", results)
		}
		for i, res := range results {
			if res.Outcome == store.Claimed {
				continue
			}
			if res.Outcome != store.Duplicate || !res.Counted || res.Record.ClaimID != owner.ClaimID {
				t.Errorf("claim %d: got %v (counted %v), want a counted duplicate of claim %s", i, res.Outcome, res.Counted, owner.ClaimID)
			}
		}
		got := e.mustGet(t)
		if got.ClaimID != owner.ClaimID || got.Deliveries != n || got.Version != 1 || got.EnqueuedAt != owner.EnqueuedAt {
			t.Errorf("stored: claim %s, %d deliveries, version %d; want claim %s, %d deliveries, version 1", got.ClaimID,
				got.Deliveries, got.Version, owner.ClaimID, n)
		}
	}},
	{"a duplicate counted between a claim and its unclaim does not keep the unclaim from deleting", func(t *testing.T, e *env) {
		rec := e.claimed(t)
		if res := e.claim(t, "h1"); res.Outcome != store.Duplicate || !res.Counted {
			t.Fatalf("duplicate: got %v (counted %v), want a counted duplicate", res.Outcome, res.Counted)
		}
		if !held(t, "unclaim")(e.s.Unclaim(e.ctx, rec)) {
			t.Fatalf("unclaim after a counted duplicate: got false, want true")
		}
		if res := e.claim(t, "h1"); res.Outcome != store.Claimed || res.Record.ClaimID == rec.ClaimID || res.Record.Deliveries != 1 {
			t.Errorf("claim after unclaim: got %v with %+v, want a new claim counting 1", res.Outcome, res.Record)
		}
	}},
	{"a claim of a live key with another payload hash is a conflict carrying the record", func(t *testing.T, e *env) {
		first := e.claimed(t)
		res := e.claim(t, "h2")
		if res.Outcome != store.Conflict || res.Record == nil || res.Record.PayloadHash != "h1" || res.Record.ClaimID != first.ClaimID {
			t.Fatalf("got %v with %+v, want conflict with the first record", res.Outcome, res.Record)
		}
		if res.Counted {
			t.Errorf("the conflict was counted as a delivery")
		}
		if got := e.mustGet(t); !reflect.DeepEqual(got, first) {
			t.Errorf("the conflict changed the record:\n got %+v\nwant %+v", got, first)
		}
	}},
	{"a record is still live in the second of its expiresAt", func(t *testing.T, e *env) {
		e.claimed(t)
		e.clk.Advance(Window)
		if e.get(t) == nil {
			t.Fatalf("get: got nothing at expiresAt, want the record")
		}
		if res := e.claim(t, "h1"); res.Outcome != store.Duplicate || !res.Counted {
			t.Errorf("claim at expiresAt: got %v (counted %v), want a counted duplicate", res.Outcome, res.Counted)
		}
	}},
	{"a record past its expiresAt counts as absent and a claim starts over", func(t *testing.T, e *env) {
		first := e.claimed(t)
		e.clk.Advance(Window + 2*time.Second)
		if rec := e.get(t); rec != nil {
			t.Errorf("get after the TTL: got %+v, want nil", rec)
		}
		for i, hash := range []string{"h2", "h1"} { // another payload, then the same
			if i > 0 {
				e.clk.Advance(Window + 2*time.Second)
			}
			e.ops()
			res := e.claim(t, hash)
			e.expectOps(t, "claim of an expired record", map[string]int{"PutItem": 1})
			if res.Outcome != store.Claimed || res.Record.ClaimID == first.ClaimID || res.Record.Version != 1 ||
				res.Record.ReceivedAt != e.clk.Now().UnixMilli() || res.Record.Deliveries != 1 {
				t.Fatalf("claim of %s after the TTL: got %v with %+v, want a new claim (new claim id, version 1, received now, 1 delivery)",
					hash, res.Outcome, res.Record)
			}
			if got := e.mustGet(t); !reflect.DeepEqual(got, res.Record) {
				t.Errorf("stored:\n got %+v\nwant the new claim %+v", got, res.Record)
			}
			first = res.Record
		}
	}},
	{"get of a key never claimed is nil", func(t *testing.T, e *env) {
		if rec := e.get(t); rec != nil {
			t.Errorf("got %+v, want nil", rec)
		}
	}},
	{"a large payload is stored and read back whole", func(t *testing.T, e *env) {
		payload := []byte(`{"text":"` + strings.Repeat("hookwall ", 3000) + `"}`) // over CompressAbove
		ev := newEvent(key, "h1")
		ev.Payload = payload
		if res, err := e.s.Claim(e.ctx, ev, Window); err != nil || res.Outcome != store.Claimed {
			t.Fatalf("claim: %v, %v", res.Outcome, err)
		}
		if got := e.mustGet(t); string(got.Payload) != string(payload) {
			t.Errorf("get: got %d payload bytes, want %d", len(got.Payload), len(payload))
		}
		if acq := e.acquire(t, "w1"); string(acq.Payload) != string(payload) {
			t.Errorf("acquire: got %d payload bytes, want %d", len(acq.Payload), len(payload))
		}
	}},
	{"a payload too large to store is refused before anything is written", func(t *testing.T, e *env) {
		ev := newEvent(key, "h1")
		ev.Payload = randomBytes(store.MaxItemBytes) // incompressible
		res, err := e.s.Claim(e.ctx, ev, Window)
		if !errors.Is(err, webhook.ErrTooLarge) || res.Outcome != 0 {
			t.Fatalf("got %v, %v; want an error wrapping ErrTooLarge", res.Outcome, err)
		}
		if rec := e.get(t); rec != nil {
			t.Errorf("a record was written: %+v", rec)
		}
	}},
	{"unclaim deletes the claim it made so that a retry claims afresh", func(t *testing.T, e *env) {
		rec := e.claimed(t)
		if !held(t, "unclaim")(e.s.Unclaim(e.ctx, rec)) {
			t.Fatalf("unclaim: got false, want true")
		}
		if got := e.get(t); got != nil {
			t.Errorf("get after unclaim: got %+v, want nil", got)
		}
		if res := e.claim(t, "h1"); res.Outcome != store.Claimed {
			t.Errorf("claim after unclaim: got %v, want claimed", res.Outcome)
		}
	}},
	{"unclaim leaves a record that a later claim made", func(t *testing.T, e *env) {
		old := e.claimed(t)
		e.clk.Advance(Window + 2*time.Second)
		cur := e.claimed(t)
		if held(t, "unclaim")(e.s.Unclaim(e.ctx, old)) {
			t.Fatalf("unclaim of the old claim: got true, want false")
		}
		if got := e.mustGet(t); got.ClaimID != cur.ClaimID {
			t.Errorf("got claim %s, want the later claim %s", got.ClaimID, cur.ClaimID)
		}
	}},
	{"unclaim leaves a record that moved on", func(t *testing.T, e *env) {
		rec := e.claimed(t)
		e.leased(t, "w1")
		if held(t, "unclaim")(e.s.Unclaim(e.ctx, rec)) {
			t.Fatalf("unclaim: got true, want false")
		}
		if got := e.mustGet(t); got.Status != webhook.StatusProcessing {
			t.Errorf("got %s, want PROCESSING", got.Status)
		}
	}},
	{"unclaim leaves a record whose enqueue another delivery took over", func(t *testing.T, e *env) {
		rec, _ := e.tookOver(t)
		if held(t, "unclaim")(e.s.Unclaim(e.ctx, rec)) {
			t.Fatalf("unclaim: got true, want false")
		}
		if e.get(t) == nil {
			t.Errorf("the record is gone")
		}
	}},
	{"unclaim of a key never claimed reports false", func(t *testing.T, e *env) {
		if held(t, "unclaim")(e.s.Unclaim(e.ctx, &store.Record{Key: key, ClaimID: "c", Status: webhook.StatusReceived, Version: 1})) {
			t.Errorf("got true, want false")
		}
	}},
}

var takeOverCases = []testCase{
	{"a take-over inside the grace is refused and writes nothing", func(t *testing.T, e *env) {
		rec := e.claimed(t)
		e.clk.Advance(Grace - time.Millisecond)
		dup := e.takeOver(t, rec, false)
		if dup.EnqueuedAt != rec.EnqueuedAt || dup.Status != webhook.StatusReceived {
			t.Errorf("the caller's copy changed: %+v", dup)
		}
		if got := e.mustGet(t); got.EnqueuedAt != rec.EnqueuedAt {
			t.Errorf("enqueuedAt: got %d, want %d", got.EnqueuedAt, rec.EnqueuedAt)
		}
	}},
	{"after the grace exactly one of two duplicates takes the enqueue over", func(t *testing.T, e *env) {
		rec := e.claimed(t)
		e.clk.Advance(Grace)
		now := e.clk.Now().UnixMilli()
		a, b := *rec, *rec
		if !held(t, "take over a")(e.s.TakeOverEnqueue(e.ctx, &a, Grace)) || a.EnqueuedAt != now {
			t.Fatalf("first duplicate: want it to win with enqueuedAt %d, got %d", now, a.EnqueuedAt)
		}
		if held(t, "take over b")(e.s.TakeOverEnqueue(e.ctx, &b, Grace)) {
			t.Fatalf("second duplicate: got true, want false")
		}
		if b.Status != webhook.StatusReceived || b.EnqueuedAt != now {
			t.Errorf("the loser sees %s enqueued at %d, want RECEIVED enqueued at %d (another delivery is sending)", b.Status, b.EnqueuedAt, now)
		}
		if got := e.mustGet(t); got.EnqueuedAt != now || got.Version != 1 {
			t.Errorf("stored: enqueuedAt %d version %d, want %d and 1", got.EnqueuedAt, got.Version, now)
		}
	}},
	{"a duplicate that finds the record moved on learns its status and version", func(t *testing.T, e *env) {
		rec := e.claimed(t)
		e.leased(t, "w1")
		e.clk.Advance(Grace)
		dup := e.takeOver(t, rec, false)
		if dup.Status != webhook.StatusProcessing || dup.Version != 2 {
			t.Errorf("got %s version %d, want PROCESSING version 2", dup.Status, dup.Version)
		}
	}},
	{"a duplicate that finds the claim undone learns that it is gone", func(t *testing.T, e *env) {
		rec := e.claimed(t)
		if !held(t, "unclaim")(e.s.Unclaim(e.ctx, rec)) {
			t.Fatalf("unclaim failed")
		}
		e.clk.Advance(Grace)
		if dup := e.takeOver(t, rec, false); dup.Status != "" {
			t.Errorf("got status %q, want empty (gone)", dup.Status)
		}
	}},
	{"a duplicate that finds the record expired learns that it is gone", func(t *testing.T, e *env) {
		rec := e.claimed(t)
		e.leased(t, "w1")
		e.clk.Advance(Window + 2*time.Second)
		if dup := e.takeOver(t, rec, false); dup.Status != "" {
			t.Errorf("got status %q, want empty (gone)", dup.Status)
		}
	}},
	{"a reverted take-over lets the next duplicate take over at once", func(t *testing.T, e *env) {
		rec, a := e.tookOver(t)
		if err := e.s.RevertEnqueue(e.ctx, &a, rec.EnqueuedAt); err != nil {
			t.Fatalf("revert: %v", err)
		}
		if got := e.mustGet(t); got.EnqueuedAt != rec.EnqueuedAt {
			t.Errorf("enqueuedAt after revert: got %d, want %d", got.EnqueuedAt, rec.EnqueuedAt)
		}
		e.takeOver(t, rec, true) // the next duplicate
	}},
	{"a revert after the record moved on changes nothing", func(t *testing.T, e *env) {
		rec, a := e.tookOver(t)
		e.leased(t, "w1")
		if err := e.s.RevertEnqueue(e.ctx, &a, rec.EnqueuedAt); err != nil {
			t.Fatalf("revert: %v", err)
		}
		if got := e.mustGet(t); got.EnqueuedAt != a.EnqueuedAt || got.Status != webhook.StatusProcessing {
			t.Errorf("got %s enqueued at %d, want PROCESSING enqueued at %d", got.Status, got.EnqueuedAt, a.EnqueuedAt)
		}
	}},
}

// takeOver has a duplicate of rec try to take its enqueue over, fails the
// test unless the store answers won, and returns the duplicate's copy of rec
// as the store left it (updated with what it found).
func (e *env) takeOver(t *testing.T, rec *store.Record, won bool) store.Record {
	t.Helper()
	dup := *rec
	if got := held(t, "take over")(e.s.TakeOverEnqueue(e.ctx, &dup, Grace)); got != won {
		t.Fatalf("take over: got %v, want %v", got, won)
	}
	return dup
}

// tookOver claims key and, after the grace, has a duplicate take its
// enqueue over: it returns the claimed record and the duplicate's copy.
func (e *env) tookOver(t *testing.T) (rec *store.Record, dup store.Record) {
	t.Helper()
	rec = e.claimed(t)
	e.clk.Advance(Grace)
	return rec, e.takeOver(t, rec, true)
}

package storetest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/state/store"
)

// keysInShard returns n event keys of the given sweep shard.
func keysInShard(shard, n int) []string {
	var keys []string
	for i := 0; len(keys) < n; i++ {
		if k := fmt.Sprintf("line#acme#S%d", i); store.ShardOf(k) == shard {
			keys = append(keys, k)
		}
	}
	return keys
}

// stuck pages through the whole of shard up to before, limit entries a
// page, and returns the keys listed (at most 20 pages).
func (e *env) stuck(t *testing.T, shard int, before time.Time, limit int32) []string {
	t.Helper()
	return e.stuckAfter(t, shard, time.Time{}, before, limit)
}

// stuckAfter is stuck from after (exclusive).
func (e *env) stuckAfter(t *testing.T, shard int, after, before time.Time, limit int32) []string {
	t.Helper()
	return allPages(t, "stuck", limit, func(r store.StuckRecord) string { return r.Key },
		func(cursor map[string]types.AttributeValue) ([]store.StuckRecord, map[string]types.AttributeValue, error) {
			return e.s.Stuck(e.ctx, shard, after, before, limit, cursor)
		})
}

// allPages reads a sparse index page after page (at most 20) and returns
// the keys of its entries, failing t on an error or a page over limit.
func allPages[R any](t *testing.T, op string, limit int32, key func(R) string,
	page func(cursor map[string]types.AttributeValue) ([]R, map[string]types.AttributeValue, error)) []string {
	t.Helper()
	var keys []string
	var cursor map[string]types.AttributeValue
	for range 20 {
		recs, next, err := page(cursor)
		if err != nil {
			t.Fatalf("%s: %v", op, err)
		}
		if len(recs) > int(limit) {
			t.Fatalf("%s: got a page of %d, over the limit %d", op, len(recs), limit)
		}
		for _, r := range recs {
			keys = append(keys, key(r))
		}
		if next == nil {
			return keys
		}
		cursor = next
	}
	t.Fatalf("%s: no end after 20 pages", op)
	return nil
}

// shardOfKey is the sweep shard of the suite's key.
var shardOfKey = store.ShardOf(key)

var sweepCases = []testCase{
	{"a claim indexes the record in its shard, due SweepAfter later", func(t *testing.T, e *env) {
		now := e.clk.Now()
		rec := e.claimed(t)
		if rec.SweepShard != store.ShardName(shardOfKey) || rec.SweepAt != now.Add(SweepAfter).UnixMilli() {
			t.Errorf("got shard %q, sweepAt %d; want %s, %d", rec.SweepShard, rec.SweepAt, store.ShardName(shardOfKey), now.Add(SweepAfter).UnixMilli())
		}
		if got := e.stuck(t, shardOfKey, now.Add(SweepAfter-time.Millisecond), 10); len(got) != 0 {
			t.Errorf("before its sweepAt: got %v, want none", got)
		}
		if got := e.stuck(t, shardOfKey, now.Add(SweepAfter), 10); !slices.Equal(got, []string{key}) {
			t.Errorf("at its sweepAt: got %v, want [%s]", got, key)
		}
		if got := e.stuck(t, (shardOfKey+1)%store.SweepShards, now.Add(time.Hour), 10); len(got) != 0 {
			t.Errorf("another shard: got %v, want none", got)
		}
	}},
	{"acquire, heartbeat, retry and fail keep sweepAt", func(t *testing.T, e *env) {
		rec := e.claimed(t)
		l := e.leased(t, "w1")
		held(t, "heartbeat")(e.s.Heartbeat(e.ctx, l, e.clk.Now().Add(LeaseFor)))
		held(t, "retry")(e.s.Retry(e.ctx, l, "x"))
		l = e.leased(t, "w1")
		held(t, "fail")(e.s.Fail(e.ctx, l, "y"))
		if got := e.mustGet(t); got.SweepShard != rec.SweepShard || got.SweepAt != rec.SweepAt {
			t.Errorf("got shard %q sweepAt %d, want %q %d", got.SweepShard, got.SweepAt, rec.SweepShard, rec.SweepAt)
		}
	}},
	{"a completed record keeps its sweep entry, unchanged", func(t *testing.T, e *env) {
		rec := e.claimed(t)
		l := e.leased(t, "w1")
		e.ops()
		held(t, "complete")(e.s.Complete(e.ctx, l, e.clk.Now().Add(Window)))
		e.expectOps(t, "complete", map[string]int{"UpdateItem": 1})
		if got := e.mustGet(t); got.SweepShard != rec.SweepShard || got.SweepAt != rec.SweepAt {
			t.Errorf("got shard %q sweepAt %d, want the claim's %q %d", got.SweepShard, got.SweepAt, rec.SweepShard, rec.SweepAt)
		}
		if got := e.stuck(t, shardOfKey, e.clk.Now().Add(time.Hour), 10); !slices.Equal(got, []string{key}) {
			t.Errorf("stuck: got %v, want the terminal entry [%s] (the sweeper passes it)", got, key)
		}
	}},
	{"stuck honours after: only entries after it, up to before", func(t *testing.T, e *env) {
		keys := keysInShard(5, 4)
		var ats []time.Time
		for _, k := range keys {
			if res, err := e.s.Claim(e.ctx, newEvent(k, "h"), Window); err != nil || res.Outcome != store.Claimed {
				t.Fatalf("claim %s: %v, %v", k, res.Outcome, err)
			}
			ats = append(ats, e.clk.Now().Add(SweepAfter))
			e.clk.Advance(time.Second)
		}
		end := ats[3].Add(time.Hour)
		for _, c := range []struct {
			name          string
			after, before time.Time
			want          []string
		}{
			{"after zero: from the start", time.Time{}, end, keys},
			{"after the first entry's sweepAt", ats[0], end, keys[1:]},
			{"one ms before the second's", ats[1].Add(-time.Millisecond), end, keys[1:]},
			{"up to the third's", ats[0], ats[2], keys[1:3]},
			{"after the last", ats[3], end, nil},
			{"an empty range", ats[2], ats[2], nil},
			{"after past before", ats[3], ats[1], nil},
		} {
			for _, limit := range []int32{1, 10} {
				if got := e.stuckAfter(t, 5, c.after, c.before, limit); !slices.Equal(got, c.want) {
					t.Errorf("%s, limit %d: got %v, want %v", c.name, limit, got, c.want)
				}
			}
		}
	}},
	{"the sweep cursor starts at zero and only moves forward, per shard", func(t *testing.T, e *env) {
		at, err := e.s.SweepCursor(e.ctx, 7)
		if err != nil || !at.IsZero() {
			t.Fatalf("fresh cursor: got %v, %v; want zero", at, err)
		}
		t1 := e.clk.Now()
		for _, c := range []struct {
			name string
			to   time.Time
			want bool
			at   time.Time
		}{
			{"first advance", t1, true, t1},
			{"the same time again", t1, false, t1},
			{"backwards", t1.Add(-time.Millisecond), false, t1},
			{"forward by 1 ms", t1.Add(time.Millisecond), true, t1.Add(time.Millisecond)},
			{"forward by an hour", t1.Add(time.Hour), true, t1.Add(time.Hour)},
			{"back to the first", t1, false, t1.Add(time.Hour)},
		} {
			moved, err := e.s.AdvanceSweepCursor(e.ctx, 7, c.to)
			if err != nil || moved != c.want {
				t.Errorf("%s: got %v, %v; want %v", c.name, moved, err, c.want)
			}
			if at, err := e.s.SweepCursor(e.ctx, 7); err != nil || !at.Equal(c.at) {
				t.Errorf("%s: the cursor is %v (%v), want %v", c.name, at, err, c.at)
			}
		}
		if at, err := e.s.SweepCursor(e.ctx, 8); err != nil || !at.IsZero() {
			t.Errorf("another shard: got %v, %v; want zero", at, err)
		}
		for _, shard := range []int{-1, store.SweepShards} {
			if _, err := e.s.SweepCursor(e.ctx, shard); err == nil {
				t.Errorf("read shard %d: got no error", shard)
			}
			if _, err := e.s.AdvanceSweepCursor(e.ctx, shard, t1); err == nil {
				t.Errorf("advance shard %d: got no error", shard)
			}
		}
		// The cursor item is no event: the sweep index does not list it.
		if got := e.stuck(t, 7, t1.Add(1000*time.Hour), 10); len(got) != 0 {
			t.Errorf("stuck lists %v", got)
		}
	}},
	{"get many reads records in the order asked, nil for the absent", func(t *testing.T, e *env) {
		keys := keysInShard(9, 3)
		for _, k := range keys[:2] {
			if _, err := e.s.Claim(e.ctx, newEvent(k, "h"), Window); err != nil {
				t.Fatal(err)
			}
		}
		ask := []string{keys[1], keys[2], keys[0], keys[1]}
		got, err := e.s.GetMany(e.ctx, ask)
		if err != nil || len(got) != len(ask) {
			t.Fatalf("get many: got %d records, %v", len(got), err)
		}
		for i, k := range ask {
			switch {
			case k == keys[2] && got[i] != nil:
				t.Errorf("%d: the absent %s: got %+v", i, k, got[i])
			case k != keys[2] && (got[i] == nil || got[i].Key != k || got[i].Status != webhook.StatusReceived):
				t.Errorf("%d: got %+v, want %s RECEIVED", i, got[i], k)
			}
		}
		if got, err := e.s.GetMany(e.ctx, nil); err != nil || len(got) != 0 {
			t.Errorf("no keys: got %v, %v", got, err)
		}
		e.clk.Advance(Window + 2*time.Second)
		if got, err := e.s.GetMany(e.ctx, keys[:1]); err != nil || got[0] != nil {
			t.Errorf("expired: got %+v, %v; want nil", got, err)
		}
		if _, err := e.s.GetMany(e.ctx, make([]string, store.MaxGetMany+1)); err == nil {
			t.Errorf("%d keys: got no error", store.MaxGetMany+1)
		}
	}},
	{"writes that set sweepAt never set it before now", func(t *testing.T, e *env) {
		rec := e.claimed(t)
		e.clk.Advance(time.Minute)
		now := e.clk.Now()
		if !held(t, "resweep")(e.s.Resweep(e.ctx, rec, now.Add(-time.Hour))) {
			t.Fatalf("resweep: got false")
		}
		if got := e.mustGet(t); got.SweepAt != now.UnixMilli() || rec.SweepAt != now.UnixMilli() {
			t.Errorf("resweep to an hour ago: stored %d, rec %d; want now %d", got.SweepAt, rec.SweepAt, now.UnixMilli())
		}
		l := e.leased(t, "w1")
		if !held(t, "hold")(e.s.Hold(e.ctx, l, webhook.Hold{On: "target#t1", RecheckAt: now.Add(-time.Hour), Reason: "x", RetainUntil: now.Add(Window)})) {
			t.Fatalf("hold: lease lost")
		}
		h := e.mustGet(t)
		if h.SweepAt != now.UnixMilli() {
			t.Errorf("hold with a recheck an hour ago: sweepAt %d, want now %d", h.SweepAt, now.UnixMilli())
		}
		e.clk.Advance(time.Second)
		now = e.clk.Now()
		if !held(t, "recheck")(e.s.Recheck(e.ctx, h, now.Add(-time.Hour), now.Add(Window))) {
			t.Fatalf("recheck: got false")
		}
		if got := e.mustGet(t); got.SweepAt != now.UnixMilli() || h.SweepAt != now.UnixMilli() {
			t.Errorf("recheck to an hour ago: stored %d, rec %d; want now %d", got.SweepAt, h.SweepAt, now.UnixMilli())
		}
		e.clk.Advance(time.Second)
		now = e.clk.Now()
		if !held(t, "release")(e.s.Release(e.ctx, h, now.Add(-time.Hour))) {
			t.Fatalf("release: got false")
		}
		if got := e.mustGet(t); got.SweepAt != now.UnixMilli() || h.SweepAt != now.UnixMilli() {
			t.Errorf("release with a sweepAt an hour ago: stored %d, rec %d; want now %d", got.SweepAt, h.SweepAt, now.UnixMilli())
		}
	}},
	{"stuck pages through its shard, oldest sweepAt first", func(t *testing.T, e *env) {
		keys := keysInShard(3, 5)
		for _, k := range slices.Backward(keys) { // claimed newest key first: the order is sweepAt's, not the key's
			if res, err := e.s.Claim(e.ctx, newEvent(k, "h"), Window); err != nil || res.Outcome != store.Claimed {
				t.Fatalf("claim %s: %v, %v", k, res.Outcome, err)
			}
			e.clk.Advance(time.Second)
		}
		other := keysInShard(4, 1)[0]
		if _, err := e.s.Claim(e.ctx, newEvent(other, "h"), Window); err != nil {
			t.Fatal(err)
		}
		slices.Reverse(keys)
		before := e.clk.Now().Add(SweepAfter)
		for _, limit := range []int32{1, 2, 5, 10} {
			if got := e.stuck(t, 3, before, limit); !slices.Equal(got, keys) {
				t.Errorf("limit %d: got %v, want %v", limit, got, keys)
			}
		}
		// Due 5 s earlier: only the one claimed first.
		if got := e.stuck(t, 3, before.Add(-5*time.Second), 2); !slices.Equal(got, keys[:1]) {
			t.Errorf("due earlier: got %v, want %v", got, keys[:1])
		}
	}},
	{"stuck refuses a shard out of range and a limit below 1", func(t *testing.T, e *env) {
		for _, c := range []struct {
			shard int
			limit int32
		}{{-1, 10}, {store.SweepShards, 10}, {0, 0}} {
			if _, _, err := e.s.Stuck(e.ctx, c.shard, time.Time{}, e.clk.Now(), c.limit, nil); err == nil {
				t.Errorf("shard %d limit %d: got no error", c.shard, c.limit)
			}
		}
	}},
	{"mark requeued moves enqueuedAt and sweepAt, without a transition", func(t *testing.T, e *env) {
		rec := e.claimed(t)
		seen := *rec
		e.clk.Advance(time.Minute)
		e.ops()
		if ok := held(t, "mark requeued")(e.s.MarkRequeued(e.ctx, rec)); !ok {
			t.Fatalf("mark requeued: got false")
		}
		e.expectOps(t, "mark requeued", map[string]int{"UpdateItem": 1})
		now := e.clk.Now()
		if rec.EnqueuedAt != now.UnixMilli() || rec.SweepAt != now.Add(SweepAfter).UnixMilli() {
			t.Errorf("rec: got enqueuedAt %d sweepAt %d, want now and now+SweepAfter", rec.EnqueuedAt, rec.SweepAt)
		}
		got := e.mustGet(t)
		if got.EnqueuedAt != now.UnixMilli() || got.SweepAt != now.Add(SweepAfter).UnixMilli() || got.Version != 1 || len(got.History) != 1 {
			t.Errorf("stored: got enqueuedAt %d sweepAt %d version %d, %d history entries; want now, now+SweepAfter, 1, 1",
				got.EnqueuedAt, got.SweepAt, got.Version, len(got.History))
		}
		if held(t, "mark requeued")(e.s.MarkRequeued(e.ctx, &seen)) {
			t.Errorf("mark requeued with the enqueuedAt of before: got true, want false")
		}
	}},
	{"mark requeued leaves a record that moved on or is final", func(t *testing.T, e *env) {
		rec := e.claimed(t)
		l := e.leased(t, "w1")
		if held(t, "mark requeued")(e.s.MarkRequeued(e.ctx, rec)) {
			t.Errorf("after an acquire: got true")
		}
		cur := e.mustGet(t)
		held(t, "complete")(e.s.Complete(e.ctx, l, e.clk.Now().Add(Window)))
		done := e.mustGet(t)
		for name, r := range map[string]*store.Record{"the leased record as read": cur, "the final record": done} {
			if held(t, "mark requeued")(e.s.MarkRequeued(e.ctx, r)) {
				t.Errorf("%s: got true", name)
			}
		}
		if got := e.mustGet(t); got.SweepShard != done.SweepShard || got.SweepAt != done.SweepAt {
			t.Errorf("the final record's sweep attributes moved: %q %d, want %q %d", got.SweepShard, got.SweepAt, done.SweepShard, done.SweepAt)
		}
	}},
	{"resweep moves sweepAt, fenced on the version", func(t *testing.T, e *env) {
		rec := e.claimed(t)
		at := e.clk.Now().Add(time.Hour)
		if !held(t, "resweep")(e.s.Resweep(e.ctx, rec, at)) {
			t.Fatalf("resweep: got false")
		}
		if got := e.mustGet(t); got.SweepAt != at.UnixMilli() || got.Version != 1 {
			t.Errorf("got sweepAt %d version %d, want %d, 1", got.SweepAt, got.Version, at.UnixMilli())
		}
		if got := e.stuck(t, shardOfKey, at.Add(-time.Millisecond), 10); len(got) != 0 {
			t.Errorf("before the new sweepAt: got %v", got)
		}
		e.leased(t, "w1")
		if held(t, "resweep")(e.s.Resweep(e.ctx, rec, e.clk.Now())) {
			t.Errorf("resweep of a record that moved on: got true")
		}
		if got := e.mustGet(t); got.SweepAt != at.UnixMilli() {
			t.Errorf("the refused resweep wrote sweepAt %d", got.SweepAt)
		}
	}},
	{"resweep of a final record writes nothing", func(t *testing.T, e *env) {
		l := e.firstLease(t)
		held(t, "complete")(e.s.Complete(e.ctx, l, e.clk.Now().Add(Window)))
		done := e.mustGet(t)
		if held(t, "resweep")(e.s.Resweep(e.ctx, done, e.clk.Now().Add(time.Hour))) {
			t.Errorf("got true")
		}
		if got := e.mustGet(t); got.SweepAt != done.SweepAt || got.Status != webhook.StatusSucceeded {
			t.Errorf("got %s sweepAt %d, want SUCCEEDED at %d", got.Status, got.SweepAt, done.SweepAt)
		}
	}},
}

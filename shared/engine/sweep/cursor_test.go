package sweep_test

import (
	"errors"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/engine/sweep"
	"github.com/hookwall/hookwall/shared/state/store"
)

// cursorOf reads key's shard cursor.
func (e *env) cursorOf(key string) time.Time {
	e.t.Helper()
	at, err := e.mem.SweepCursor(e.ctx, store.ShardOf(key))
	if err != nil {
		e.t.Fatal(err)
	}
	return at
}

// complete runs key's happy path: acquire and complete.
func (e *env) complete(key string) {
	e.t.Helper()
	l := e.acquire(key, time.Minute)
	if ok, err := e.mem.Complete(e.ctx, l, e.clock.Now().Add(window)); !ok || err != nil {
		e.t.Fatalf("complete %s: %v, %v", key, ok, err)
	}
}

// A completed record keeps its entry: the run passes it without a Get, and
// the cursor moves past it (to now - SweepLag), so the next run reads
// nothing.
func TestRunPassesTerminalEntriesAndMovesTheCursor(t *testing.T) {
	e := newEnv(t)
	const key = "line#t1#done"
	e.claim(key)
	e.complete(key)
	e.clock.Advance(sweepAfter + sweep.DefaultSweepLag)
	rep := e.run()
	want(t, rep, sweep.Report{Passed: 1})
	if e.st.gets != 0 {
		t.Errorf("%d strongly consistent reads, want 0", e.st.gets)
	}
	if got, w := e.cursorOf(key), e.clock.Now().Add(-sweep.DefaultSweepLag); !got.Equal(w) {
		t.Errorf("cursor at %v, want now - SweepLag %v", got, w)
	}
	if rep.CursorLag != sweep.DefaultSweepLag {
		t.Errorf("cursor lag %v, want %v", rep.CursorLag, sweep.DefaultSweepLag)
	}
	if got := e.metrics.Counts()[sweep.MetricPassed]; got != 1 {
		t.Errorf("%s = %v, want 1", sweep.MetricPassed, got)
	}
	want(t, e.run(), sweep.Report{})
}

// The cursor never passes an entry within SweepLag of now, even one the run
// read: a terminal one is read again, a record stuck there is handled as
// before (at its sweepAt, not SweepLag later).
func TestRunKeepsTheCursorSweepLagBehind(t *testing.T) {
	e := newEnv(t)
	const key = "line#t1#recent"
	e.claim(key)
	e.complete(key)
	e.clock.Advance(sweepAfter)
	want(t, e.run(), sweep.Report{Passed: 1})
	if got := e.cursorOf(key); got.UnixMilli() >= ms(t0.Add(sweepAfter)) {
		t.Errorf("cursor at %v, passed the entry at %v within SweepLag of now", got, t0.Add(sweepAfter))
	}
	want(t, e.run(), sweep.Report{Passed: 1})
	e.clock.Advance(sweep.DefaultSweepLag)
	want(t, e.run(), sweep.Report{Passed: 1})
	want(t, e.run(), sweep.Report{})
}

// A record whose handling failed stops the cursor before it: the next run
// reads it again and handles it, then the cursor passes it.
func TestRunFailedRecordHoldsTheCursor(t *testing.T) {
	e := newEnv(t)
	const key = "line#t1#fails"
	e.claim(key)
	e.clock.Advance(sweepAfter + sweep.DefaultSweepLag)
	e.st.getErr = map[string]error{key: errors.New("throttled")}
	rep, err := e.sw.Run(e.ctx)
	if err == nil || rep.Errors != 1 {
		t.Fatalf("run: %+v, %v; want one error", rep, err)
	}
	if got := e.cursorOf(key); got.UnixMilli() >= ms(t0.Add(sweepAfter)) {
		t.Errorf("cursor at %v, passed the failed entry at %v", got, t0.Add(sweepAfter))
	}
	e.st.getErr = nil
	want(t, e.run(), sweep.Report{Scanned: 1, Requeued: 1})
	if len(e.q.sent) != 1 {
		t.Errorf("sent %d, want 1", len(e.q.sent))
	}
}

// A record re-enqueued (its entry moved to now + SweepAfter) is found again
// after the cursor passed its old sweepAt, and a stranded claim (RECEIVED,
// never sent) is re-enqueued each SweepAfter until it moves.
func TestRunFindsAMovedEntryAfterTheCursorPassedItsOldPlace(t *testing.T) {
	e := newEnv(t)
	const key = "line#t1#stranded"
	old := e.claim(key)
	e.clock.Advance(sweepAfter + sweep.DefaultSweepLag)
	want(t, e.run(), sweep.Report{Scanned: 1, Requeued: 1})
	if c := e.cursorOf(key); c.UnixMilli() < old.SweepAt {
		t.Fatalf("cursor at %v, before the handled entry at %d", c, old.SweepAt)
	}
	e.clock.Advance(sweepAfter + sweep.DefaultSweepLag)
	want(t, e.run(), sweep.Report{Scanned: 1, Requeued: 1})
	if len(e.q.sent) != 2 {
		t.Errorf("sent %d, want 2", len(e.q.sent))
	}
}

// A run stopped by its Limit in the middle of a shard loses nothing: the
// cursor stops before the first record not handled, and the next run
// handles the rest; terminal entries do not count against the Limit.
func TestRunStoppedAtItsLimitLosesNothing(t *testing.T) {
	e := newEnv(t, func(c *sweep.Config) { c.Limit = 2 })
	keys := keysInShard(3, 5)
	for i, k := range keys {
		e.claim(k)
		if i%2 == 1 {
			e.complete(k)
		}
		e.clock.Advance(time.Millisecond) // distinct sweepAts
	}
	e.clock.Advance(sweepAfter + sweep.DefaultSweepLag)
	rep := e.run()
	if rep.Scanned != 2 || rep.Requeued != 2 || !rep.More {
		t.Errorf("first run: %+v, want 2 requeued and more", rep)
	}
	rep = e.run()
	if rep.Scanned != 1 || rep.Requeued != 1 {
		t.Errorf("second run: %+v, want the third requeued", rep)
	}
	want(t, e.run(), sweep.Report{})
	sent := map[string]bool{}
	for _, k := range e.q.keys() {
		sent[k] = true
	}
	for i, k := range keys {
		if rec := e.get(k); (rec.Status == webhook.StatusReceived) != sent[k] || (i%2 == 0) != sent[k] {
			t.Errorf("%s (%s): sent %v", k, rec.Status, sent[k])
		}
	}
}

// A run that stops at MaxPassed after passing entries only starts the next
// run after the last shard it read from, as after handled records: new
// finished events in the shards it read do not hold the later shards back.
func TestRunStoppedAtMaxPassedStartsTheNextAfterIt(t *testing.T) {
	e := newEnv(t, func(c *sweep.Config) { c.MaxPassed = 4 })
	done := func(keys ...string) {
		for _, k := range keys {
			e.claim(k)
			e.complete(k)
		}
	}
	for shard := range 4 {
		done(keysInShard(shard, 2)...)
	}
	e.clock.Advance(sweepAfter + sweep.DefaultSweepLag)
	want(t, e.run(), sweep.Report{Passed: 4, More: true}) // shards 0 and 1
	if c := e.cursorOf(keysInShard(2, 1)[0]); !c.IsZero() {
		t.Fatalf("shard 2's cursor at %v after the first run, want none", c)
	}
	newer := keysInShard(1, 4)[2:] // two new finished events in shard 1
	done(newer...)
	e.clock.Advance(sweepAfter + sweep.DefaultSweepLag)
	want(t, e.run(), sweep.Report{Passed: 4, More: true}) // shards 2 and 3
	if c := e.cursorOf(keysInShard(3, 1)[0]); c.IsZero() {
		t.Error("shard 3 not read by the second run: the run started again at shard 1")
	}
}

// keysInShard returns n event keys of sweep shard shard.
func keysInShard(shard, n int) []string {
	var keys []string
	for i := 0; len(keys) < n; i++ {
		if k := "line#t1#k" + time.Duration(i).String(); store.ShardOf(k) == shard {
			keys = append(keys, k)
		}
	}
	return keys
}

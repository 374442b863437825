package storetest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/state/store"
)

// describeHistory renders history entries for comparison, one per line:
// v<version> <from>→<to> attempt=<n> owner=<o> error=<e> fn=<f> @<ms offset from base>.
func describeHistory(h []webhook.HistoryEntry, base time.Time) string {
	var b strings.Builder
	for _, e := range h {
		fmt.Fprintf(&b, "v%d %s→%s attempt=%d owner=%s error=%q fn=%s @%d\n",
			e.Version, e.From, e.To, e.Attempt, e.Owner, e.Error, e.Function, e.At.Sub(base).Milliseconds())
	}
	return b.String()
}

// expectHistory fails the test unless rec's history is want (lines as
// describeHistory writes them, times relative to base) and it reports
// dropped entries dropped.
func expectHistory(t *testing.T, rec *store.Record, base time.Time, dropped int, want ...string) {
	t.Helper()
	w := ""
	for _, l := range want {
		w += l + "\n"
	}
	if got := describeHistory(rec.History, base); got != w {
		t.Errorf("history:\n got %s\nwant %s", got, w)
	}
	if got := rec.HistoryDropped(); got != dropped {
		t.Errorf("history dropped: got %d, want %d", got, dropped)
	}
}

var historyCases = []testCase{
	{"a claim writes the record's first history entry in its one write", func(t *testing.T, e *env) {
		base := e.clk.Now()
		e.ops()
		rec := e.claimed(t)
		e.expectOps(t, "claim", map[string]int{"PutItem": 1})
		expectHistory(t, rec, base, 0, `v1 →RECEIVED attempt=0 owner= error="" fn=storetest @0`)
		expectHistory(t, e.mustGet(t), base, 0, `v1 →RECEIVED attempt=0 owner= error="" fn=storetest @0`)
	}},
	{"every transition adds its entry in the same write, in order", func(t *testing.T, e *env) {
		base := e.clk.Now()
		e.claimed(t)
		e.ops()
		e.clk.Advance(time.Second)
		l := e.leased(t, "w1")
		e.expectOps(t, "acquire", map[string]int{"UpdateItem": 1})
		e.clk.Advance(time.Second)
		if !held(t, "retry")(e.s.Retry(e.ctx, l, "crm down")) {
			t.Fatalf("retry: lease lost")
		}
		e.expectOps(t, "retry", map[string]int{"UpdateItem": 1})
		e.clk.Advance(time.Second)
		l = e.leased(t, "w2")
		e.expectOps(t, "acquire of the RETRY record", map[string]int{"UpdateItem": 1})
		e.clk.Advance(time.Second)
		if !held(t, "complete")(e.s.Complete(e.ctx, l, e.clk.Now().Add(Window))) {
			t.Fatalf("complete: lease lost")
		}
		e.expectOps(t, "complete", map[string]int{"UpdateItem": 1})
		expectHistory(t, e.mustGet(t), base, 0,
			`v1 →RECEIVED attempt=0 owner= error="" fn=storetest @0`,
			`v2 RECEIVED→PROCESSING attempt=1 owner=w1 error="" fn=storetest @1000`,
			`v3 PROCESSING→RETRY attempt=1 owner=w1 error="crm down" fn=storetest @2000`,
			`v4 RETRY→PROCESSING attempt=2 owner=w2 error="" fn=storetest @3000`,
			`v5 PROCESSING→SUCCEEDED attempt=2 owner=w2 error="" fn=storetest @4000`)
	}},
	{"a take-over of an expired lease is a transition PROCESSING → PROCESSING", func(t *testing.T, e *env) {
		base := e.clk.Now()
		e.claimed(t)
		e.leased(t, "w1")
		e.clk.Advance(LeaseFor + time.Millisecond)
		l := e.leased(t, "w2")
		held(t, "fail")(e.s.Fail(e.ctx, l, "blocked"))
		ms := (LeaseFor + time.Millisecond).Milliseconds()
		expectHistory(t, e.mustGet(t), base, 0,
			`v1 →RECEIVED attempt=0 owner= error="" fn=storetest @0`,
			`v2 RECEIVED→PROCESSING attempt=1 owner=w1 error="" fn=storetest @0`,
			fmt.Sprintf(`v3 PROCESSING→PROCESSING attempt=2 owner=w2 error="" fn=storetest @%d`, ms),
			fmt.Sprintf(`v4 PROCESSING→FAILED attempt=2 owner=w2 error="blocked" fn=storetest @%d`, ms))
	}},
	{"the history keeps the newest HistoryKeep entries and counts the dropped", func(t *testing.T, e *env) {
		base := e.clk.Now()
		e.claimed(t)
		for i := range 3 {
			e.clk.Advance(time.Second)
			l := e.leased(t, fmt.Sprint("w", i))
			e.clk.Advance(time.Second)
			held(t, "retry")(e.s.Retry(e.ctx, l, fmt.Sprint("e", i)))
		}
		rec := e.mustGet(t)
		if rec.Version != 7 {
			t.Fatalf("got version %d, want 7", rec.Version)
		}
		expectHistory(t, rec, base, 7-HistoryKeep,
			`v3 PROCESSING→RETRY attempt=1 owner=w0 error="e0" fn=storetest @2000`,
			`v4 RETRY→PROCESSING attempt=2 owner=w1 error="" fn=storetest @3000`,
			`v5 PROCESSING→RETRY attempt=2 owner=w1 error="e1" fn=storetest @4000`,
			`v6 RETRY→PROCESSING attempt=3 owner=w2 error="" fn=storetest @5000`,
			`v7 PROCESSING→RETRY attempt=3 owner=w2 error="e2" fn=storetest @6000`)
	}},
	{"a history entry keeps at most 256 bytes of the error, lastError keeps it all", func(t *testing.T, e *env) {
		l := e.firstLease(t)
		long := strings.Repeat("é", 300) // 600 bytes
		held(t, "retry")(e.s.Retry(e.ctx, l, long))
		rec := e.mustGet(t)
		last := rec.History[len(rec.History)-1]
		if last.Error != strings.Repeat("é", 128) {
			t.Errorf("history error: got %d bytes, want the first 256 (128 runes)", len(last.Error))
		}
		if rec.LastError != long {
			t.Errorf("lastError: got %d bytes, want %d", len(rec.LastError), len(long))
		}
	}},
	{"a lost race writes no history", func(t *testing.T, e *env) {
		base := e.clk.Now()
		e.claimed(t)
		old := e.leased(t, "w1")
		if acq := e.acquire(t, "w2"); acq.Outcome != webhook.AcquireBusy {
			t.Fatalf("acquire: got %v, want busy", acq.Outcome)
		}
		e.clk.Advance(LeaseFor + time.Millisecond)
		e.leased(t, "w2")
		e.writes(t, old)
		ms := (LeaseFor + time.Millisecond).Milliseconds()
		expectHistory(t, e.mustGet(t), base, 0,
			`v1 →RECEIVED attempt=0 owner= error="" fn=storetest @0`,
			`v2 RECEIVED→PROCESSING attempt=1 owner=w1 error="" fn=storetest @0`,
			fmt.Sprintf(`v3 PROCESSING→PROCESSING attempt=2 owner=w2 error="" fn=storetest @%d`, ms))
	}},
	{"heartbeats, take-overs of the enqueue and journal entries are not transitions", func(t *testing.T, e *env) {
		base := e.clk.Now()
		rec := e.claimed(t)
		e.clk.Advance(Grace)
		if won, err := e.s.TakeOverEnqueue(e.ctx, rec, Grace); err != nil || !won {
			t.Fatalf("take over: got %v, %v", won, err)
		}
		l := e.leased(t, "w1")
		held(t, "heartbeat")(e.s.Heartbeat(e.ctx, l, e.clk.Now().Add(LeaseFor)))
		e.save(t, l, "h", "s", "")
		got := e.mustGet(t)
		if got.Version != 2 {
			t.Errorf("got version %d, want 2", got.Version)
		}
		ms := Grace.Milliseconds()
		expectHistory(t, got, base, 0,
			`v1 →RECEIVED attempt=0 owner= error="" fn=storetest @0`,
			fmt.Sprintf(`v2 RECEIVED→PROCESSING attempt=1 owner=w1 error="" fn=storetest @%d`, ms))
	}},
}

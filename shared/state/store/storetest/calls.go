package storetest

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/state/store"
)

// addCalls adds to l, as its attempt's, n calls starting at the suite's
// clock, numbered from first (in their target and latency), as a handler's
// transport records them: every third answered 503 with a snippet, every
// third no answer. It returns them.
func (e *env) addCalls(l *webhook.Lease, first, n int) []webhook.Call {
	var out []webhook.Call
	for i := first; i < first+n; i++ {
		c := webhook.Call{At: e.clk.Now().Add(time.Duration(i) * time.Millisecond), Target: fmt.Sprintf("crm-%d.example", i),
			Status: 200, Latency: time.Duration(10+i) * time.Millisecond}
		switch i % 3 {
		case 1:
			c.Status, c.Error, c.Snippet = 503, "503 Service Unavailable", `{"error":"maintenance, back at 10:00 – ünïcode"}`
		case 2:
			c.Status, c.Error = 0, "context deadline exceeded"
		}
		out = append(out, c)
	}
	l.AddCalls(out, len(out))
	return out
}

func expectCalls(t *testing.T, what string, got []webhook.Call, gotCount int64, want []webhook.Call, wantCount int64) {
	t.Helper()
	if len(got) == 0 && len(want) == 0 {
		got, want = nil, nil
	}
	for i := range got { // compare times as instants
		if i < len(want) && got[i].At.Equal(want[i].At) {
			got[i].At = want[i].At
		}
	}
	if !reflect.DeepEqual(got, want) || gotCount != wantCount {
		t.Errorf("%s: got %d calls (count %d) %+v\nwant %d (count %d) %+v", what, len(got), gotCount, got, len(want), wantCount, want)
	}
}

// expectStoredCalls fails the test unless key's record stores want and
// counts wantCount calls.
func (e *env) expectStoredCalls(t *testing.T, want []webhook.Call, wantCount int64) {
	t.Helper()
	got := e.mustGet(t)
	expectCalls(t, "stored", got.Calls, got.CallCount, want, wantCount)
}

var callCases = []testCase{
	{"the settling write stores the attempt's calls and their count, in its one write", func(t *testing.T, e *env) {
		l := e.firstLease(t)
		if len(l.Calls) != 0 || l.CallCount != 0 {
			t.Errorf("a new record's lease carries calls: %+v, %d", l.Calls, l.CallCount)
		}
		calls := e.addCalls(&l, 0, 3)
		e.ops()
		if !held(t, "retry")(e.s.Retry(e.ctx, l, "crm down")) {
			t.Fatal("retry: lease lost")
		}
		e.expectOps(t, "retry with calls", map[string]int{"UpdateItem": 1})
		e.expectStoredCalls(t, calls, 3)
	}},
	{"calls add up over attempts and the newest MaxCalls are kept", func(t *testing.T, e *env) {
		l := e.firstLease(t)
		first := e.addCalls(&l, 0, 5)
		held(t, "retry")(e.s.Retry(e.ctx, l, "crm down"))
		l2 := e.leased(t, "w2")
		expectCalls(t, "the next lease", l2.Calls, int64(l2.CallCount), first, 5)
		second := e.addCalls(&l2, 5, 6)
		if !held(t, "complete")(e.s.Complete(e.ctx, l2, e.clk.Now().Add(Window))) {
			t.Fatal("complete: lease lost")
		}
		all := append(first, second...)
		e.expectStoredCalls(t, all[len(all)-webhook.MaxCalls:], 11)
	}},
	{"an attempt that made no call leaves the record's calls as they are", func(t *testing.T, e *env) {
		l := e.firstLease(t)
		calls := e.addCalls(&l, 0, 2)
		held(t, "retry")(e.s.Retry(e.ctx, l, "crm down"))
		l2 := e.leased(t, "w2")
		l2.AddCalls(nil, 0)
		if !held(t, "fail")(e.s.Fail(e.ctx, l2, "blocked")) {
			t.Fatal("fail: lease lost")
		}
		e.expectStoredCalls(t, calls, 2)
	}},
	{"a hold stores the calls of the handlers that ran before it", func(t *testing.T, e *env) {
		l := e.firstLease(t)
		calls := e.addCalls(&l, 0, 2)
		if !held(t, "hold")(e.s.Hold(e.ctx, l, webhook.Hold{Reason: "circuit open: crm", On: "target#crm", Target: "crm",
			RecheckAt: e.clk.Now().Add(time.Minute), RetainUntil: e.clk.Now().Add(Window)})) {
			t.Fatal("hold: lease lost")
		}
		e.expectStoredCalls(t, calls, 2)
	}},
	{"a lost lease stores none of its calls", func(t *testing.T, e *env) {
		l := e.firstLease(t)
		e.clk.Advance(LeaseFor + time.Millisecond)
		e.leased(t, "w2")
		e.addCalls(&l, 0, 2)
		if held(t, "complete")(e.s.Complete(e.ctx, l, e.clk.Now().Add(Window))) {
			t.Fatal("complete by the lost lease: held")
		}
		e.expectStoredCalls(t, nil, 0)
	}},
	{"the compensation lease carries the calls of the processing attempts", func(t *testing.T, e *env) {
		l := e.firstLease(t)
		calls := e.addCalls(&l, 0, 2)
		held(t, "fail")(e.s.Fail(e.ctx, l, "blocked"))
		acq := e.taken(t, "acquire compensation", Store.AcquireCompensation, "c1")
		expectCalls(t, "compensation lease", acq.Lease.Calls, int64(acq.Lease.CallCount), calls, 2)
		if !held(t, "dead")(e.s.Dead(e.ctx, acq.Lease, "gave up", e.clk.Now().Add(Window))) {
			t.Fatal("dead: lease lost")
		}
		e.expectStoredCalls(t, calls, 2)
	}},
}

var deliveryCases = []testCase{
	{"a claimed record counts one delivery, at its claim, in its claim's write", func(t *testing.T, e *env) {
		e.claimed(t)
		got := e.mustGet(t)
		if got.DeliveryCount() != 1 || got.LastDelivery() != got.ReceivedAt || got.Deliveries != 1 || got.LastDeliveryAt != got.ReceivedAt {
			t.Errorf("got %d deliveries, last %d (stored %d, %d); want 1 at %d, stored",
				got.DeliveryCount(), got.LastDelivery(), got.Deliveries, got.LastDeliveryAt, got.ReceivedAt)
		}
	}},
	{"each duplicate's claim adds a delivery and its time, in its second write, no transition", func(t *testing.T, e *env) {
		e.claimed(t)
		before := e.mustGet(t)
		for i, want := range []int64{2, 3} {
			e.clk.Advance(time.Second)
			e.ops()
			res := e.claim(t, "h1")
			e.expectOps(t, "duplicate claim", map[string]int{"PutItem": 1, "UpdateItem": 1})
			if res.Outcome.String() != "duplicate" || !res.Counted {
				t.Fatalf("claim %d: got %v (counted %v), want a counted duplicate", i+2, res.Outcome, res.Counted)
			}
			if res.Record.Deliveries != want || res.Record.LastDeliveryAt != e.clk.Now().UnixMilli() {
				t.Errorf("duplicate %d: record says %d at %d, want %d at %d", i+2, res.Record.Deliveries, res.Record.LastDeliveryAt,
					want, e.clk.Now().UnixMilli())
			}
		}
		got := e.mustGet(t)
		if got.DeliveryCount() != 3 || got.LastDelivery() != e.clk.Now().UnixMilli() {
			t.Errorf("stored: got %d deliveries, last %d; want 3 at %d", got.DeliveryCount(), got.LastDelivery(), e.clk.Now().UnixMilli())
		}
		got.Deliveries, got.LastDeliveryAt = before.Deliveries, before.LastDeliveryAt
		if !reflect.DeepEqual(got, before) {
			t.Errorf("a count changed the record beyond its count:\n before %+v\n after  %+v", before, got)
		}
	}},
	{"count delivery adds a delivery and its time in one write, no transition", func(t *testing.T, e *env) {
		e.claimed(t)
		before := e.mustGet(t)
		e.clk.Advance(time.Second)
		e.ops()
		rec := *before
		if counted, err := e.s.CountDelivery(e.ctx, &rec); err != nil || !counted {
			t.Fatalf("count delivery: got %v, %v; want counted", counted, err)
		}
		e.expectOps(t, "count delivery", map[string]int{"UpdateItem": 1})
		if rec.Deliveries != 2 || rec.LastDeliveryAt != e.clk.Now().UnixMilli() {
			t.Errorf("record says %d at %d, want 2 at %d", rec.Deliveries, rec.LastDeliveryAt, e.clk.Now().UnixMilli())
		}
		got := e.mustGet(t)
		if !reflect.DeepEqual(got, &rec) {
			t.Errorf("stored:\n got %+v\nwant %+v", got, rec)
		}
	}},
	{"a duplicate of a finished record is counted by its claim and leaves the record, sweep entry included, as the completion did", func(t *testing.T, e *env) {
		rec := e.claimed(t)
		l := e.leased(t, "w1")
		held(t, "complete")(e.s.Complete(e.ctx, l, e.clk.Now().Add(Window)))
		before := e.mustGet(t)
		e.clk.Advance(time.Second)
		res := e.claim(t, "h1")
		if res.Outcome != store.Duplicate {
			t.Fatalf("claim: got %v, want duplicate", res.Outcome)
		}
		if !res.Counted { // (a record lacking an attribute the claim sets is counted apart; the check below fails then)
			if counted, err := e.s.CountDelivery(e.ctx, res.Record); err != nil || !counted {
				t.Fatalf("count delivery: got %v, %v", counted, err)
			}
		}
		got := e.mustGet(t)
		if !res.Counted || got.SweepShard != rec.SweepShard || got.SweepAt != rec.SweepAt {
			t.Errorf("counted by the claim %v, sweep %q %d; want counted (the completion keeps the sweep entry), the claim's %q %d",
				res.Counted, got.SweepShard, got.SweepAt, rec.SweepShard, rec.SweepAt)
		}
		if got.DeliveryCount() != 2 || got.LastDelivery() != e.clk.Now().UnixMilli() || got.Status != webhook.StatusSucceeded {
			t.Errorf("got %d deliveries at %d, status %s; want 2 at %d, SUCCEEDED", got.DeliveryCount(), got.LastDelivery(), got.Status,
				e.clk.Now().UnixMilli())
		}
		got.Deliveries, got.LastDeliveryAt = before.Deliveries, before.LastDeliveryAt
		if !reflect.DeepEqual(got, before) {
			t.Errorf("the duplicate changed the finished record beyond its count:\n before %+v\n after  %+v", before, got)
		}
	}},
	{"a delivery of a record since gone or claimed anew is not counted and creates nothing", func(t *testing.T, e *env) {
		old := e.claimed(t)
		e.clk.Advance(Window + 2*time.Second)
		e.claimed(t) // expired: claimed anew
		if counted, err := e.s.CountDelivery(e.ctx, old); err != nil || counted {
			t.Errorf("count on the old claim: got %v, %v; want not counted", counted, err)
		}
		if got := e.mustGet(t); got.DeliveryCount() != 1 {
			t.Errorf("the new claim got %d deliveries, want 1", got.DeliveryCount())
		}
		gone := *old
		gone.Key = "line#acme#never"
		if counted, err := e.s.CountDelivery(e.ctx, &gone); err != nil || counted {
			t.Errorf("count on a key never claimed: got %v, %v; want not counted", counted, err)
		}
		if rec, err := e.s.Get(e.ctx, gone.Key); err != nil || rec != nil {
			t.Errorf("count on a key never claimed: got record %+v, %v; want none", rec, err)
		}
	}},
}

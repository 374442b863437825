package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/state/store"
)

var leaseCases = []testCase{
	{"every settling write records the lease's target; an empty one keeps the record's", func(t *testing.T, e *env) {
		for i, settle := range []struct {
			name  string
			write func(webhook.Lease) (bool, error)
		}{
			{"retry", func(l webhook.Lease) (bool, error) { return e.s.Retry(e.ctx, l, "crm down") }},
			{"fail", func(l webhook.Lease) (bool, error) { return e.s.Fail(e.ctx, l, "crm said 400") }},
		} {
			if i == 0 {
				e.claimed(t)
			} else {
				e.clk.Advance(time.Millisecond)
			}
			l := e.leased(t, fmt.Sprintf("w%d", i))
			l.Target = "forward/" + settle.name
			if !held(t, settle.name)(settle.write(l)) {
				t.Fatalf("%s: lease lost", settle.name)
			}
			if got := e.mustGet(t); got.Target != l.Target || got.HeldOn != "" {
				t.Errorf("after %s: target %q held on %q; want %q, not held", settle.name, got.Target, got.HeldOn, l.Target)
			}
		}
		k2 := key + "-2"
		if res, err := e.s.Claim(e.ctx, newEvent(k2, "h"), Window); err != nil || res.Outcome != store.Claimed {
			t.Fatalf("claim %s: %v %v", k2, res.Outcome, err)
		}
		acq, err := e.s.Acquire(e.ctx, k2, "w1", e.clk.Now().Add(LeaseFor))
		if err != nil || acq.Outcome != webhook.Acquired {
			t.Fatalf("acquire %s: %v %v", k2, acq.Outcome, err)
		}
		l := acq.Lease
		l.Target = "crm.lead"
		held(t, "retry")(e.s.Retry(e.ctx, l, "crm down"))
		if acq, err = e.s.Acquire(e.ctx, k2, "w2", e.clk.Now().Add(LeaseFor)); err != nil || acq.Outcome != webhook.Acquired {
			t.Fatalf("acquire %s again: %v %v", k2, acq.Outcome, err)
		}
		// A hold names its target twice, in the lease and the hold: one write.
		hl := acq.Lease
		hl.Target = "crm.lead"
		if !held(t, "hold")(e.s.Hold(e.ctx, hl, webhook.Hold{Reason: "circuit open: crm.lead", On: "target#crm.lead", Target: "crm.lead",
			RecheckAt: e.clk.Now().Add(time.Minute), RetainUntil: e.clk.Now().Add(Window)})) {
			t.Fatal("hold: lease lost")
		}
		if got, err := e.s.Get(e.ctx, k2); err != nil || got.Target != "crm.lead" || got.Status != webhook.StatusHeld {
			t.Fatalf("after hold: %+v %v; want HELD, target crm.lead", got, err)
		}
		rec, err := e.s.Get(e.ctx, k2)
		if err != nil {
			t.Fatal(err)
		}
		if ok, err := e.s.Release(e.ctx, rec, e.clk.Now()); !ok || err != nil {
			t.Fatalf("release: %v %v", ok, err)
		}
		if acq, err = e.s.Acquire(e.ctx, k2, "w3", e.clk.Now().Add(LeaseFor)); err != nil || acq.Outcome != webhook.Acquired {
			t.Fatalf("acquire %s after its release: %v %v", k2, acq.Outcome, err)
		}
		held(t, "complete")(e.s.Complete(e.ctx, acq.Lease, e.clk.Now().Add(Window))) // no target: an attempt that ran no handler
		if got, err := e.s.Get(e.ctx, k2); err != nil || got.Target != "crm.lead" || got.Status != webhook.StatusSucceeded {
			t.Errorf("after complete: %+v %v; want SUCCEEDED, target crm.lead kept", got, err)
		}
	}},
	{"acquire leases a RECEIVED record and returns its payload", func(t *testing.T, e *env) {
		rec := e.claimed(t)
		now := e.clk.Now()
		until := now.Add(LeaseFor)
		acq, err := e.s.Acquire(e.ctx, key, "w1", until)
		if err != nil || acq.Outcome != webhook.Acquired {
			t.Fatalf("got %v, %v; want acquired", acq.Outcome, err)
		}
		l := acq.Lease
		if l.Key != key || l.Owner != "w1" || l.Version != 2 || l.ClaimID != rec.ClaimID || l.Attempt != 1 ||
			!l.Until.Equal(until) || !l.ExpiresAt.Equal(time.Unix(rec.ExpiresAt, 0)) {
			t.Errorf("lease: got %+v, want owner w1, version 2, claim %s, attempt 1, until %v, expires %v",
				l, rec.ClaimID, until, time.Unix(rec.ExpiresAt, 0))
		}
		if acq.Status != webhook.StatusProcessing || acq.Attempts != 1 || string(acq.Payload) != string(rec.Payload) {
			t.Errorf("got status %s, attempts %d, payload %q; want PROCESSING, 1, %q", acq.Status, acq.Attempts, acq.Payload, rec.Payload)
		}
		got := e.mustGet(t)
		if got.Status != webhook.StatusProcessing || got.LeaseOwner != "w1" || got.LeaseUntil != until.UnixMilli() ||
			got.Version != 2 || got.Attempts != 1 || got.UpdatedAt != now.UnixMilli() {
			t.Errorf("stored: got %+v", got)
		}
	}},
	{"acquire of a record leased to another worker is busy for the rest of the lease", func(t *testing.T, e *env) {
		e.claimed(t)
		e.leased(t, "w1")
		e.clk.Advance(4 * time.Second)
		acq := e.acquire(t, "w2")
		if acq.Outcome != webhook.AcquireBusy || acq.RetryAfter != LeaseFor-4*time.Second || acq.Status != webhook.StatusProcessing || acq.Attempts != 1 {
			t.Errorf("got %+v, want busy for %v", acq, LeaseFor-4*time.Second)
		}
		if got := e.mustGet(t); got.LeaseOwner != "w1" || got.Version != 2 || got.Attempts != 1 {
			t.Errorf("the busy acquire wrote: %+v", got)
		}
	}},
	{"a lease is still held in its last millisecond", func(t *testing.T, e *env) {
		e.claimed(t)
		e.leased(t, "w1")
		e.clk.Advance(LeaseFor)
		if acq := e.acquire(t, "w2"); acq.Outcome != webhook.AcquireBusy || acq.RetryAfter != 0 {
			t.Errorf("got %v retry after %v, want busy, 0", acq.Outcome, acq.RetryAfter)
		}
	}},
	{"acquire after the lease ran out takes over as the next attempt", func(t *testing.T, e *env) {
		e.claimed(t)
		e.leased(t, "w1")
		e.clk.Advance(LeaseFor + time.Millisecond)
		l := e.leased(t, "w2")
		if l.Owner != "w2" || l.Attempt != 2 || l.Version != 3 {
			t.Errorf("got %+v, want owner w2, attempt 2, version 3", l)
		}
	}},
	{"acquire of a RETRY record leases it again with its last error", func(t *testing.T, e *env) {
		l := e.firstLease(t)
		if !held(t, "retry")(e.s.Retry(e.ctx, l, "crm down")) {
			t.Fatalf("retry: lease lost")
		}
		acq := e.acquire(t, "w2")
		if acq.Outcome != webhook.Acquired || acq.Lease.Attempt != 2 || acq.Lease.Version != 4 || acq.LastError != "crm down" {
			t.Errorf("got %+v, want acquired, attempt 2, version 4, last error kept", acq)
		}
	}},
	{"acquire of a SUCCEEDED record is already done", func(t *testing.T, e *env) {
		l := e.firstLease(t)
		held(t, "complete")(e.s.Complete(e.ctx, l, e.clk.Now().Add(Window)))
		if acq := e.acquire(t, "w2"); acq.Outcome != webhook.AcquireDone || acq.Status != webhook.StatusSucceeded || acq.Attempts != 1 {
			t.Errorf("got %+v, want done, SUCCEEDED, 1 attempt", acq)
		}
	}},
	{"acquire of a FAILED record reports the failed state and its last error", func(t *testing.T, e *env) {
		l := e.firstLease(t)
		held(t, "fail")(e.s.Fail(e.ctx, l, "blocked"))
		if acq := e.acquire(t, "w2"); acq.Outcome != webhook.AcquireFailedState || acq.Status != webhook.StatusFailed || acq.LastError != "blocked" {
			t.Errorf("got %+v, want failed state with the last error", acq)
		}
	}},
	{"acquire of a key never claimed is missing", func(t *testing.T, e *env) {
		if acq := e.acquire(t, "w1"); acq.Outcome != webhook.AcquireMissing {
			t.Errorf("got %+v, want missing", acq)
		}
	}},
	{"acquire of an expired record is missing", func(t *testing.T, e *env) {
		e.claimed(t)
		e.clk.Advance(Window + 2*time.Second)
		if acq := e.acquire(t, "w1"); acq.Outcome != webhook.AcquireMissing {
			t.Errorf("got %+v, want missing", acq)
		}
	}},
	{"of concurrent acquires exactly one wins", func(t *testing.T, e *env) {
		e.claimed(t)
		const n = 8
		outcomes := make([]webhook.AcquireOutcome, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				acq, err := e.s.Acquire(e.ctx, key, "w"+string(rune('a'+i)), e.clk.Now().Add(LeaseFor))
				if err != nil {
					t.Errorf("acquire: %v", err)
				}
				outcomes[i] = acq.Outcome
			})
		}
		wg.Wait()
		won, busy := 0, 0
		for _, o := range outcomes {
			switch o {
			case webhook.Acquired:
				won++
			case webhook.AcquireBusy:
				busy++
			}
		}
		if won != 1 || busy != n-1 {
			t.Errorf("got %d acquired and %d busy, want 1 and %d", won, busy, n-1)
		}
		if got := e.mustGet(t); got.Version != 2 || got.Attempts != 1 {
			t.Errorf("got version %d, attempts %d; want 2 and 1", got.Version, got.Attempts)
		}
	}},
	{"a heartbeat extends the lease and keeps the version", func(t *testing.T, e *env) {
		l := e.firstLease(t)
		e.clk.Advance(5 * time.Second)
		until := e.clk.Now().Add(LeaseFor)
		if !held(t, "heartbeat")(e.s.Heartbeat(e.ctx, l, until)) {
			t.Fatalf("heartbeat: lease lost")
		}
		got := e.mustGet(t)
		if got.LeaseUntil != until.UnixMilli() || got.Version != 2 || got.UpdatedAt != e.clk.Now().UnixMilli() {
			t.Errorf("got lease until %d, version %d, updated %d; want %d, 2, now", got.LeaseUntil, got.Version, got.UpdatedAt, until.UnixMilli())
		}
		e.clk.Advance(LeaseFor - time.Second) // past the first lease, inside the extended one
		if acq := e.acquire(t, "w2"); acq.Outcome != webhook.AcquireBusy {
			t.Errorf("acquire inside the extended lease: got %v, want busy", acq.Outcome)
		}
		if !held(t, "complete")(e.s.Complete(e.ctx, l, e.clk.Now().Add(Window))) {
			t.Errorf("complete after heartbeats: lease lost")
		}
	}},
	{"complete moves to SUCCEEDED, drops the lease and last error, and keeps the record until retainUntil", func(t *testing.T, e *env) {
		l := e.firstLease(t)
		held(t, "retry")(e.s.Retry(e.ctx, l, "first try failed"))
		l = e.leased(t, "w1")
		retain := e.clk.Now().Add(2 * Window)
		if !held(t, "complete")(e.s.Complete(e.ctx, l, retain)) {
			t.Fatalf("complete: lease lost")
		}
		got := e.mustGet(t)
		if got.Status != webhook.StatusSucceeded || got.Version != 5 || got.LeaseOwner != "" || got.LeaseUntil != 0 ||
			got.LastError != "" || got.ExpiresAt != retain.Unix() || got.Attempts != 2 {
			t.Errorf("got %+v, want SUCCEEDED, version 5, no lease, no last error, expires %d, 2 attempts", got, retain.Unix())
		}
		e.clk.Advance(Window + time.Minute) // past the claim's window, inside the retention
		if e.get(t) == nil {
			t.Errorf("the completed record expired with the claim's window, not at retainUntil")
		}
	}},
	givenBack("retry", webhook.StatusRetry, Store.Retry),
	givenBack("fail", webhook.StatusFailed, Store.Fail),
}

// givenBack is the case of op, a fenced write that ends a processing
// attempt with an error: it moves the record to status at version 3 with
// the error as lastError, and drops the lease.
func givenBack(op string, status webhook.Status, write func(Store, context.Context, webhook.Lease, string) (bool, error)) testCase {
	return testCase{fmt.Sprintf("%s moves to %s with the last error and drops the lease", op, status), func(t *testing.T, e *env) {
		l := e.firstLease(t)
		const why = "crm down"
		if !held(t, op)(write(e.s, e.ctx, l, why)) {
			t.Fatalf("%s: lease lost", op)
		}
		got := e.mustGet(t)
		if got.Status != status || got.Version != 3 || got.LastError != why || got.LeaseOwner != "" || got.LeaseUntil != 0 {
			t.Errorf("got %+v, want %s, version 3, the last error, no lease", got, status)
		}
	}}
}

// writes tries every fenced write with l and returns which were held.
func (e *env) writes(t *testing.T, l webhook.Lease) map[string]bool {
	t.Helper()
	now := e.clk.Now()
	return map[string]bool{
		"heartbeat": held(t, "heartbeat")(e.s.Heartbeat(e.ctx, l, now.Add(LeaseFor))),
		"save step": e.save(t, l, "h", "s", `"late"`),
		"complete":  held(t, "complete")(e.s.Complete(e.ctx, l, now.Add(Window))),
		"retry":     held(t, "retry")(e.s.Retry(e.ctx, l, "late")),
		"fail":      held(t, "fail")(e.s.Fail(e.ctx, l, "late")),
	}
}

var fenceCases = []testCase{
	{"a worker whose lease was taken over can no longer write", func(t *testing.T, e *env) {
		e.claimed(t)
		old := e.leased(t, "w1")
		e.clk.Advance(LeaseFor + time.Millisecond)
		cur := e.leased(t, "w2")
		for op, ok := range e.writes(t, old) {
			if ok {
				t.Errorf("%s by the old owner: got held, want lost", op)
			}
		}
		got := e.mustGet(t)
		if got.Status != webhook.StatusProcessing || got.LeaseOwner != "w2" || got.Version != 3 || got.LastError != "" {
			t.Errorf("got %+v, want the new owner's PROCESSING record at version 3, untouched", got)
		}
		if j := e.journal(t, cur); len(j) != 0 {
			t.Errorf("the old owner journaled %v", j)
		}
	}},
	{"a lease of an earlier attempt by the same owner is stale by its version", func(t *testing.T, e *env) {
		e.claimed(t)
		old := e.leased(t, "w")
		held(t, "retry")(e.s.Retry(e.ctx, old, "x"))
		cur := e.leased(t, "w")
		if held(t, "complete")(e.s.Complete(e.ctx, old, e.clk.Now().Add(Window))) ||
			held(t, "retry")(e.s.Retry(e.ctx, old, "late")) ||
			held(t, "fail")(e.s.Fail(e.ctx, old, "late")) ||
			e.save(t, old, "h", "s", "") {
			t.Errorf("a write with the stale version was held")
		}
		if got := e.mustGet(t); got.Status != webhook.StatusProcessing || got.Version != cur.Version {
			t.Errorf("got %s version %d, want PROCESSING version %d", got.Status, got.Version, cur.Version)
		}
	}},
	{"a heartbeat is fenced on the owner and status, not on the version", func(t *testing.T, e *env) {
		e.claimed(t)
		old := e.leased(t, "w")
		held(t, "retry")(e.s.Retry(e.ctx, old, "x"))
		if held(t, "heartbeat")(e.s.Heartbeat(e.ctx, old, e.clk.Now().Add(LeaseFor))) {
			t.Errorf("heartbeat of a RETRY record: got held")
		}
		cur := e.leased(t, "w")
		if !held(t, "heartbeat")(e.s.Heartbeat(e.ctx, old, e.clk.Now().Add(LeaseFor))) {
			t.Errorf("heartbeat by the same owner with an older version: got lost, want held")
		}
		if got := e.mustGet(t); got.Version != cur.Version {
			t.Errorf("the heartbeat changed the version: got %d, want %d", got.Version, cur.Version)
		}
	}},
	{"nothing moves a record out of a final state", func(t *testing.T, e *env) {
		l := e.firstLease(t)
		if !held(t, "complete")(e.s.Complete(e.ctx, l, e.clk.Now().Add(Window))) {
			t.Fatalf("complete: lease lost")
		}
		for op, ok := range e.writes(t, l) {
			if ok {
				t.Errorf("%s after completion: got held", op)
			}
		}
		if got := e.mustGet(t); got.Status != webhook.StatusSucceeded || got.Version != 3 {
			t.Errorf("got %s version %d, want SUCCEEDED version 3", got.Status, got.Version)
		}
	}},
	{"no lease can write to a key never claimed", func(t *testing.T, e *env) {
		l := webhook.Lease{Key: key, Owner: "w1", Version: 2, ClaimID: "c", Attempt: 1, Until: e.clk.Now().Add(LeaseFor)}
		for op, ok := range e.writes(t, l) {
			if ok {
				t.Errorf("%s: got held", op)
			}
		}
		if rec := e.get(t); rec != nil {
			t.Errorf("a record appeared: %+v", rec)
		}
	}},
}

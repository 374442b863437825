package storetest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
)

// acquireComp takes key's compensation lease for owner.
func (e *env) acquireComp(t *testing.T, owner string) webhook.Acquisition {
	t.Helper()
	return e.take(t, "acquire compensation", Store.AcquireCompensation, owner)
}

// compensating takes the compensation lease for owner and fails the test
// unless it got it.
func (e *env) compensating(t *testing.T, owner string) webhook.Acquisition {
	t.Helper()
	return e.taken(t, "acquire compensation", Store.AcquireCompensation, owner)
}

// failed claims key, leases it to w1, journals one step and fails it.
func (e *env) failed(t *testing.T) webhook.Lease {
	t.Helper()
	l := e.firstLease(t)
	if !e.save(t, l, "crm.lead", "create", `{"id":"L1"}`) {
		t.Fatalf("save step: lease lost")
	}
	if !held(t, "fail")(e.s.Fail(e.ctx, l, "blocked")) {
		t.Fatalf("fail: lease lost")
	}
	return l
}

// compWrites tries every write of the compensation lease l and returns which were held.
func (e *env) compWrites(t *testing.T, l webhook.Lease) map[string]bool {
	t.Helper()
	now := e.clk.Now()
	return map[string]bool{
		"heartbeat compensation": held(t, "heartbeat compensation")(e.s.HeartbeatCompensation(e.ctx, l, now.Add(LeaseFor))),
		"save step":              e.save(t, l, "crm.lead", "$undo:create", ""),
		"retry compensation":     held(t, "retry compensation")(e.s.RetryCompensation(e.ctx, l, "late")),
		"requeue compensation":   held(t, "requeue compensation")(e.s.RequeueCompensation(e.ctx, l, "late")),
		"dead":                   held(t, "dead")(e.s.Dead(e.ctx, l, "late", now.Add(Window))),
		"compensated":            held(t, "compensated")(e.s.Compensated(e.ctx, l, now.Add(Window))),
	}
}

var compensationCases = []testCase{
	{"requeue compensation gives a record the processor never finished back as RETRY", func(t *testing.T, e *env) {
		l := e.firstLease(t)
		e.clk.Advance(LeaseFor + time.Millisecond) // the processor's lease ran out: SQS redrove the message
		c := e.compensating(t, "c1")
		if c.Status != webhook.StatusProcessing || c.Lease.Attempt != 1 {
			t.Fatalf("got from %s attempt %d, want PROCESSING, 1", c.Status, c.Lease.Attempt)
		}
		if !held(t, "requeue compensation")(e.s.RequeueCompensation(e.ctx, c.Lease, "redriven")) {
			t.Fatalf("requeue compensation: lease lost")
		}
		got := e.mustGet(t)
		if got.Status != webhook.StatusRetry || got.LeaseOwner != "" || got.LeaseUntil != 0 || got.Version != c.Lease.Version+1 ||
			got.LastError != "redriven" || got.Compensations != 1 || got.SweepShard == "" {
			t.Errorf("stored: got %+v, want RETRY without a lease, version+1, the reason, still in the sweep index", got)
		}
		// The processor takes it again, as any RETRY record.
		if acq := e.acquire(t, "w2"); acq.Outcome != webhook.Acquired || acq.Lease.Attempt != l.Attempt+1 {
			t.Errorf("processor after requeue: got %v attempt %d, want acquired, %d", acq.Outcome, acq.Lease.Attempt, l.Attempt+1)
		}
		if held(t, "requeue compensation")(e.s.RequeueCompensation(e.ctx, c.Lease, "again")) {
			t.Error("requeue with the spent compensation lease: got held")
		}
	}},
	{"acquire compensation leases a FAILED record and says where it came from", func(t *testing.T, e *env) {
		base := e.clk.Now()
		e.failed(t)
		e.clk.Advance(time.Second)
		e.ops()
		until := e.clk.Now().Add(LeaseFor)
		acq, err := e.s.AcquireCompensation(e.ctx, key, "c1", until)
		if err != nil || acq.Outcome != webhook.Acquired {
			t.Fatalf("got %v, %v; want acquired", acq.Outcome, err)
		}
		if ops := e.ops(); ops != nil && ops["UpdateItem"] != 1 {
			t.Errorf("acquire compensation: got calls %v, want one UpdateItem (and at most one read)", ops)
		}
		l := acq.Lease
		if l.Owner != "c1" || l.Version != 4 || l.Attempt != 1 || l.Status != webhook.StatusCompensating || !l.Until.Equal(until) {
			t.Errorf("lease: got %+v, want owner c1, version 4, attempt 1, COMPENSATING", l)
		}
		if acq.Status != webhook.StatusFailed || acq.Attempts != 1 || acq.LastError != "blocked" || string(acq.Payload) != `{"type":"follow","n":1}` {
			t.Errorf("got status %s, attempts %d, last error %q, payload %q; want FAILED, 1, blocked, the payload",
				acq.Status, acq.Attempts, acq.LastError, acq.Payload)
		}
		got := e.mustGet(t)
		if got.Status != webhook.StatusCompensating || got.LeaseOwner != "c1" || got.LeaseUntil != until.UnixMilli() ||
			got.Compensations != 1 || got.Attempts != 1 || got.Version != 4 || got.LastError != "blocked" {
			t.Errorf("stored: got %+v", got)
		}
		last := describeHistory(got.History[len(got.History)-1:], base)
		if want := "v4 FAILED→COMPENSATING attempt=1 owner=c1 error=\"\" fn=storetest @1000\n"; last != want {
			t.Errorf("history: got %s, want %s", last, want)
		}
	}},
	{"acquire compensation takes RECEIVED and RETRY records", func(t *testing.T, e *env) {
		e.claimed(t)
		if acq := e.compensating(t, "c1"); acq.Status != webhook.StatusReceived || acq.Lease.Version != 2 {
			t.Errorf("got from %s at version %d, want RECEIVED, 2", acq.Status, acq.Lease.Version)
		}
	}},
	{"acquire compensation of a RETRY record", func(t *testing.T, e *env) {
		l := e.firstLease(t)
		held(t, "retry")(e.s.Retry(e.ctx, l, "x"))
		if acq := e.compensating(t, "c1"); acq.Status != webhook.StatusRetry || acq.Lease.Version != 4 || acq.Attempts != 1 {
			t.Errorf("got from %s at version %d, %d attempts; want RETRY, 4, 1", acq.Status, acq.Lease.Version, acq.Attempts)
		}
	}},
	{"a live processing lease is busy for the compensator, an expired one is taken", func(t *testing.T, e *env) {
		e.claimed(t)
		e.leased(t, "w1")
		e.clk.Advance(3 * time.Second)
		if acq := e.acquireComp(t, "c1"); acq.Outcome != webhook.AcquireBusy || acq.RetryAfter != LeaseFor-3*time.Second {
			t.Fatalf("got %v after %v, want busy for %v", acq.Outcome, acq.RetryAfter, LeaseFor-3*time.Second)
		}
		e.clk.Advance(LeaseFor)
		if acq := e.compensating(t, "c1"); acq.Status != webhook.StatusProcessing || acq.Lease.Version != 3 {
			t.Errorf("got from %s at version %d, want PROCESSING, 3", acq.Status, acq.Lease.Version)
		}
		if acq := e.acquire(t, "w2"); acq.Outcome != webhook.AcquireFailedState {
			t.Errorf("the processor's acquire of a COMPENSATING record: got %v, want failed state", acq.Outcome)
		}
	}},
	{"a live compensation lease is busy; retry compensation gives it back", func(t *testing.T, e *env) {
		base := e.clk.Now()
		e.failed(t)
		c1 := e.compensating(t, "c1").Lease
		if acq := e.acquireComp(t, "c2"); acq.Outcome != webhook.AcquireBusy || acq.RetryAfter != LeaseFor {
			t.Errorf("second compensator: got %v after %v, want busy for %v", acq.Outcome, acq.RetryAfter, LeaseFor)
		}
		e.clk.Advance(time.Second)
		if !held(t, "retry compensation")(e.s.RetryCompensation(e.ctx, c1, "crm down")) {
			t.Fatalf("retry compensation: lease lost")
		}
		got := e.mustGet(t)
		if got.Status != webhook.StatusCompensating || got.LeaseOwner != "" || got.LeaseUntil != 0 || got.Version != 5 || got.LastError != "crm down" {
			t.Errorf("stored: got %+v, want COMPENSATING without a lease at version 5 with the error", got)
		}
		e.clk.Advance(time.Second)
		c2 := e.compensating(t, "c2")
		if c2.Status != webhook.StatusCompensating || c2.Lease.Attempt != 2 || c2.Lease.Version != 6 {
			t.Errorf("got from %s, attempt %d, version %d; want COMPENSATING, 2, 6", c2.Status, c2.Lease.Attempt, c2.Lease.Version)
		}
		expectHistory(t, e.mustGet(t), base, 6-HistoryKeep,
			`v2 RECEIVED→PROCESSING attempt=1 owner=w1 error="" fn=storetest @0`,
			`v3 PROCESSING→FAILED attempt=1 owner=w1 error="blocked" fn=storetest @0`,
			`v4 FAILED→COMPENSATING attempt=1 owner=c1 error="" fn=storetest @0`,
			`v5 COMPENSATING→COMPENSATING attempt=1 owner=c1 error="crm down" fn=storetest @1000`,
			`v6 COMPENSATING→COMPENSATING attempt=2 owner=c2 error="" fn=storetest @2000`)
	}},
	{"an expired compensation lease is taken over", func(t *testing.T, e *env) {
		e.failed(t)
		old := e.compensating(t, "c1").Lease
		e.clk.Advance(LeaseFor + time.Millisecond)
		cur := e.compensating(t, "c2").Lease
		if cur.Attempt != 2 || cur.Version != old.Version+1 {
			t.Errorf("got attempt %d version %d, want 2, %d", cur.Attempt, cur.Version, old.Version+1)
		}
		for op, ok := range e.compWrites(t, old) {
			if ok {
				t.Errorf("%s by the old compensator: got held", op)
			}
		}
		if got := e.mustGet(t); got.Status != webhook.StatusCompensating || got.LeaseOwner != "c2" || got.Version != cur.Version {
			t.Errorf("got %s owner %s version %d, want the new lease's", got.Status, got.LeaseOwner, got.Version)
		}
	}},
	{"final records are done for the compensator, absent or expired ones missing", func(t *testing.T, e *env) {
		if acq := e.acquireComp(t, "c1"); acq.Outcome != webhook.AcquireMissing {
			t.Errorf("never claimed: got %v, want missing", acq.Outcome)
		}
		l := e.firstLease(t)
		held(t, "complete")(e.s.Complete(e.ctx, l, e.clk.Now().Add(Window)))
		if acq := e.acquireComp(t, "c1"); acq.Outcome != webhook.AcquireDone || acq.Status != webhook.StatusSucceeded {
			t.Errorf("SUCCEEDED: got %v (%s), want done", acq.Outcome, acq.Status)
		}
		e.clk.Advance(Window + 2*time.Second)
		if acq := e.acquireComp(t, "c1"); acq.Outcome != webhook.AcquireMissing {
			t.Errorf("expired: got %v, want missing", acq.Outcome)
		}
	}},
	{"compensated is final, keeps the reason, and keeps its sweep entry", func(t *testing.T, e *env) {
		e.failed(t)
		rec := e.mustGet(t)
		l := e.compensating(t, "c1").Lease
		retain := e.clk.Now().Add(2 * Window)
		if !held(t, "compensated")(e.s.Compensated(e.ctx, l, retain)) {
			t.Fatalf("compensated: lease lost")
		}
		got := e.mustGet(t)
		if got.Status != webhook.StatusCompensated || got.Version != l.Version+1 || got.LeaseOwner != "" || got.LeaseUntil != 0 ||
			got.ExpiresAt != retain.Unix() || got.LastError != "blocked" || got.SweepShard != rec.SweepShard || got.SweepAt != rec.SweepAt {
			t.Errorf("got %+v, want COMPENSATED, no lease, kept until retain, the reason kept, the sweep attributes unchanged", got)
		}
		if h := got.History[len(got.History)-1]; h.From != webhook.StatusCompensating || h.To != webhook.StatusCompensated || h.Owner != "c1" || h.Attempt != 1 {
			t.Errorf("history: got %+v", h)
		}
		if acq := e.acquireComp(t, "c2"); acq.Outcome != webhook.AcquireDone {
			t.Errorf("acquire compensation after: got %v, want done", acq.Outcome)
		}
		if got := e.stuck(t, shardOfKey, e.clk.Now().Add(time.Hour), 10); !slices.Equal(got, []string{key}) {
			t.Errorf("stuck: got %v, want the terminal entry [%s] (the sweeper passes it)", got, key)
		}
	}},
	{"dead is final with the reason, and keeps its sweep entry", func(t *testing.T, e *env) {
		e.failed(t)
		rec := e.mustGet(t)
		l := e.compensating(t, "c1").Lease
		retain := e.clk.Now().Add(2 * Window)
		if !held(t, "dead")(e.s.Dead(e.ctx, l, "nothing to compensate: blocked", retain)) {
			t.Fatalf("dead: lease lost")
		}
		got := e.mustGet(t)
		if got.Status != webhook.StatusDead || got.LastError != "nothing to compensate: blocked" || got.ExpiresAt != retain.Unix() ||
			got.LeaseOwner != "" || got.SweepShard != rec.SweepShard || got.SweepAt != rec.SweepAt {
			t.Errorf("got %+v, want DEAD with the reason, no lease, the sweep attributes unchanged", got)
		}
		if h := got.History[len(got.History)-1]; h.To != webhook.StatusDead || h.Error != "nothing to compensate: blocked" {
			t.Errorf("history: got %+v", h)
		}
		for op, ok := range e.compWrites(t, l) {
			if ok {
				t.Errorf("%s after dead: got held", op)
			}
		}
	}},
	{"a heartbeat extends the compensation lease and keeps the version", func(t *testing.T, e *env) {
		e.failed(t)
		l := e.compensating(t, "c1").Lease
		e.clk.Advance(5 * time.Second)
		until := e.clk.Now().Add(LeaseFor)
		if !held(t, "heartbeat compensation")(e.s.HeartbeatCompensation(e.ctx, l, until)) {
			t.Fatalf("heartbeat compensation: lease lost")
		}
		if got := e.mustGet(t); got.LeaseUntil != until.UnixMilli() || got.Version != l.Version {
			t.Errorf("got lease until %d version %d, want %d, %d", got.LeaseUntil, got.Version, until.UnixMilli(), l.Version)
		}
		e.clk.Advance(LeaseFor - time.Second)
		if acq := e.acquireComp(t, "c2"); acq.Outcome != webhook.AcquireBusy {
			t.Errorf("inside the extended lease: got %v, want busy", acq.Outcome)
		}
	}},
	{"a compensation lease of an earlier attempt by the same owner is stale by its version, heartbeat too", func(t *testing.T, e *env) {
		e.failed(t)
		old := e.compensating(t, "c").Lease
		held(t, "retry compensation")(e.s.RetryCompensation(e.ctx, old, "x"))
		cur := e.compensating(t, "c").Lease
		for op, ok := range e.compWrites(t, old) {
			if ok {
				t.Errorf("%s with the earlier attempt's lease: got held", op)
			}
		}
		if got := e.mustGet(t); got.Status != webhook.StatusCompensating || got.Version != cur.Version || got.LeaseUntil != cur.Until.UnixMilli() {
			t.Errorf("got %s version %d lease until %d, want the current lease's", got.Status, got.Version, got.LeaseUntil)
		}
	}},
	{"processor and compensator leases cannot write each other's transitions", func(t *testing.T, e *env) {
		e.claimed(t)
		p := e.leased(t, "w1")
		cp := p
		cp.Status = webhook.StatusCompensating
		for op, ok := range e.compWrites(t, cp) {
			if ok {
				t.Errorf("%s with the processor's lease: got held", op)
			}
		}
		e.clk.Advance(LeaseFor + time.Millisecond)
		c := e.compensating(t, "w1").Lease // the same owner name: the status tells them apart
		pc := c
		pc.Status = webhook.StatusProcessing
		for op, ok := range e.writes(t, pc) {
			if ok {
				t.Errorf("%s with the compensator's lease: got held", op)
			}
		}
		if got := e.mustGet(t); got.Status != webhook.StatusCompensating || got.Version != c.Version {
			t.Errorf("got %s version %d, want COMPENSATING version %d", got.Status, got.Version, c.Version)
		}
	}},
	{"the compensator journals its undo steps beside the forward ones", func(t *testing.T, e *env) {
		p := e.failed(t)
		c := e.compensating(t, "c1").Lease
		if c.ClaimID != p.ClaimID {
			t.Fatalf("the compensation lease has claim %s, want the record's %s", c.ClaimID, p.ClaimID)
		}
		e.ops()
		if !e.save(t, c, "crm.lead", "$undo:create", "") {
			t.Fatalf("save undo step: lease lost")
		}
		e.expectOps(t, "save undo step", map[string]int{"UpdateItem": 1}) // kept in the record
		ms := e.clk.Now().UnixMilli()
		want := fmt.Sprintf(`crm.lead/$undo:create=nil@%d crm.lead/create={"id":"L1"}@%d `, ms, ms)
		if got := describe(e.journal(t, c)); got != want {
			t.Errorf("journal: got %s, want %s", got, want)
		}
		e.clk.Advance(LeaseFor + time.Millisecond)
		e.compensating(t, "c2")
		if e.save(t, c, "crm.lead", "$undo:other", "") {
			t.Errorf("save by the compensator whose lease was taken over: got held")
		}
	}},
}

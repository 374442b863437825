package dispatch_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/base/webhook/webhooktest"
	"github.com/hookwall/hookwall/shared/engine/dispatch"
	"github.com/hookwall/hookwall/shared/engine/process"
	"github.com/hookwall/hookwall/shared/state/store"
	"github.com/hookwall/hookwall/shared/state/targets"
)

// poisonRig is one handler, "crm", whose target ("crm") names no tenant:
// shared by the tenants, one breaker per tenant. Its calls fail for the
// events whose userId begins with "poison" (a target answering 500 to
// their payload only) and for every event of a tenant in down.
type poisonRig struct {
	gatedRig
	clock *webhooktest.Clock

	mu   sync.Mutex
	runs map[string]int // handler runs, by event key
	down map[string]bool
}

const poisonProbe = 30 * time.Second

func newPoisonRig(t *testing.T, maxAttempts, minCalls int) *poisonRig {
	t.Helper()
	r := &poisonRig{runs: map[string]int{}, down: map[string]bool{}, clock: webhooktest.NewClock(time.Now())}
	gcfg := targets.Config{MinCalls: minCalls, FailureRate: 0.5, ProbeInterval: poisonProbe, Window: time.Hour, Now: r.clock.Now}
	r.gatedRig = newGatedRig(t, gcfg, maxAttempts, nil, func(reg *process.Registry) {
		process.Handle(reg, "crm", heldFollowType, func(ctx context.Context, ev *process.Event[heldFollow]) error {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.runs[ev.Key]++
			if strings.HasPrefix(ev.Data.UserID, "poison") || r.down[ev.Tenant] {
				return errors.New("crm answered 500")
			}
			return nil
		})
	})
	return r
}

func poisonKey(tenant, id string) string { return "line#" + tenant + "#" + id }

// add claims the event id of tenant (userId id) and processes it once.
func (r *poisonRig) add(t *testing.T, tenant, id string) dispatch.Result {
	t.Helper()
	r.claimFollow(t, poisonKey(tenant, id), tenant, `{"userId":"`+id+`"}`, id)
	return r.handle(t, tenant, id)
}

func (r *poisonRig) handle(t *testing.T, tenant, id string) dispatch.Result {
	t.Helper()
	return r.deliverFollow(poisonKey(tenant, id), tenant, `{"userId":"`+id+`"}`)
}

func (r *poisonRig) get(t *testing.T, tenant, id string) *store.Record {
	t.Helper()
	rec, err := r.st.Get(context.Background(), poisonKey(tenant, id))
	if err != nil || rec == nil {
		t.Fatal(rec, err)
	}
	return rec
}

// release releases a held record as the sweeper releases a probe carrier.
func (r *poisonRig) release(t *testing.T, rec *store.Record) {
	t.Helper()
	if ok, err := r.st.Release(context.Background(), rec, time.Now().Add(time.Minute)); !ok || err != nil {
		t.Fatal(ok, err)
	}
}

// Two poison events alone on their tenant's breaker (issue 29, problem 1):
// their calls open it, and each failed probe re-held them with the attempt
// given back, so that they took turns as probe carriers forever. Now the
// call that opens the breaker gives its attempt back once per event and a
// failed probe spends it: each ends FAILED within its attempts plus one
// call, and the breaker stops being held open by them.
func TestPoisonEventsEndFailedWithinTheirAttempts(t *testing.T) {
	const maxAttempts = 3
	r := newPoisonRig(t, maxAttempts, 2)
	ids := []string{"poison-1", "poison-2"}
	for _, id := range ids {
		r.add(t, "acme", id)
	}
	// Play the sweeper and the queue: a RETRY event is delivered again, a
	// HELD one is released as the carrier of the next probe (oldest held
	// first) once the probe is due.
	for round := 0; round < 50; round++ {
		var held []*store.Record
		done := 0
		for _, id := range ids {
			switch rec := r.get(t, "acme", id); rec.Status {
			case webhook.StatusFailed:
				done++
			case webhook.StatusRetry, webhook.StatusReceived:
				r.handle(t, "acme", id)
			case webhook.StatusHeld:
				held = append(held, rec)
			default:
				t.Fatalf("%s: status %s", id, rec.Status)
			}
		}
		if done == len(ids) {
			break
		}
		if len(held) > 0 {
			oldest := held[0]
			for _, h := range held[1:] {
				if h.HeldSince < oldest.HeldSince {
					oldest = h
				}
			}
			r.clock.Advance(poisonProbe)
			r.release(t, oldest)
			_, id, _ := strings.Cut(strings.TrimPrefix(oldest.Key, "line#"), "#")
			r.handle(t, "acme", id)
		}
	}
	for _, id := range ids {
		rec := r.get(t, "acme", id)
		if rec.Status != webhook.StatusFailed {
			t.Errorf("%s: %s after %d calls (attempts %d), want FAILED: a poison event kept alive by the breaker",
				id, rec.Status, r.runs[rec.Key], rec.Attempts)
		}
		if n := r.runs[rec.Key]; n > maxAttempts+1 {
			t.Errorf("%s: %d calls, want at most %d (its attempts plus the one given back)", id, n, maxAttempts+1)
		}
		if rec.GivenBack > 1 {
			t.Errorf("%s: %d attempts given back, want at most 1", id, rec.GivenBack)
		}
	}
}

// A failed probe spends the carrier's attempt: the event is not re-held by
// it, it settles like any failure (RETRY, with its attempt counted).
func TestFailedProbeSpendsTheAttempt(t *testing.T) {
	r := newPoisonRig(t, 5, 2)
	r.down["acme"] = true
	r.add(t, "acme", "o1") // attempt 1 failed: RETRY
	if res := r.add(t, "acme", "o2"); res.Verdict != dispatch.Held {
		t.Fatalf("the call that opened the breaker: got %v (%v), want held", res.Verdict, res.Err)
	}
	rec := r.get(t, "acme", "o2")
	if rec.Attempts != 0 || rec.GivenBack != 1 {
		t.Fatalf("opened: attempts %d, given back %d; want 0 and 1", rec.Attempts, rec.GivenBack)
	}
	r.clock.Advance(poisonProbe)
	r.release(t, rec)
	res := r.handle(t, "acme", "o2")
	if res.Verdict != dispatch.Retried {
		t.Fatalf("a failed probe: got %v (%v), want retried (its attempt spent)", res.Verdict, res.Err)
	}
	if rec = r.get(t, "acme", "o2"); rec.Status != webhook.StatusRetry || rec.Attempts != 1 {
		t.Errorf("after the failed probe: %s at attempts %d, want RETRY at 1", rec.Status, rec.Attempts)
	}
	// Its next attempt finds the breaker open: held, no call, the attempt
	// given back (the gate's hold), and it waits behind the others.
	if res := r.handle(t, "acme", "o2"); res.Verdict != dispatch.Held {
		t.Fatalf("next attempt, breaker open: got %v, want held", res.Verdict)
	}
	if rec = r.get(t, "acme", "o2"); rec.Attempts != 1 || r.runs[rec.Key] != 2 {
		t.Errorf("held by the gate: attempts %d, calls %d; want 1 and 2", rec.Attempts, r.runs[rec.Key])
	}
	// A last-attempt probe that fails ends the event FAILED.
	r2 := newPoisonRig(t, 1, 1)
	r2.down["acme"] = true
	if res := r2.add(t, "acme", "p"); res.Verdict != dispatch.Held {
		t.Fatalf("opening call: got %v, want held", res.Verdict)
	}
	r2.clock.Advance(poisonProbe)
	r2.release(t, r2.get(t, "acme", "p"))
	if res := r2.handle(t, "acme", "p"); res.Verdict != dispatch.Failed {
		t.Fatalf("failed probe on the last attempt: got %v (%v), want failed", res.Verdict, res.Err)
	}
}

// The give-back is once per event: an event that fails again after the
// breaker closed (and reopens it) spends its attempt.
func TestOpeningCallGivenBackOncePerEvent(t *testing.T) {
	r := newPoisonRig(t, 5, 1)
	if res := r.add(t, "acme", "poison-x"); res.Verdict != dispatch.Held {
		t.Fatalf("first opening: got %v, want held", res.Verdict)
	}
	// The target recovers for the others: a healthy event's probe closes it.
	r.clock.Advance(poisonProbe)
	if res := r.add(t, "acme", "ok-1"); res.Verdict != dispatch.Succeeded {
		t.Fatalf("healthy probe: got %v (%v), want succeeded", res.Verdict, res.Err)
	}
	rec := r.get(t, "acme", "poison-x")
	r.release(t, rec)
	if res := r.handle(t, "acme", "poison-x"); res.Verdict != dispatch.Retried {
		t.Fatalf("the poison event reopening the breaker: got %v (%v), want retried (given back once already)", res.Verdict, res.Err)
	}
	if rec = r.get(t, "acme", "poison-x"); rec.Attempts != 1 || rec.GivenBack != 1 {
		t.Errorf("attempts %d, given back %d; want 1 and 1", rec.Attempts, rec.GivenBack)
	}
}

// Breakers never cross tenants (issue 29, problem 2): a target that names
// no tenant has one breaker per tenant ("crm/@acme", "crm/@beta"); acme's
// failures open acme's, beta's events are never held; a pause of
// target/crm still holds every tenant's.
func TestTenantsDoNotShareABreaker(t *testing.T) {
	r := newPoisonRig(t, 5, 2)
	ctx := context.Background()
	r.down["acme"] = true
	for i, id := range []string{"a1", "a2", "a3", "a4"} {
		res := r.add(t, "acme", id)
		if i >= 1 && res.Verdict != dispatch.Held {
			t.Fatalf("acme %s: got %v, want held (acme's breaker open)", id, res.Verdict)
		}
		if res := r.add(t, "beta", "b"+id); res.Verdict != dispatch.Succeeded {
			t.Fatalf("beta b%s: got %v (%v), want succeeded: held by acme's failures", id, res.Verdict, res.Err)
		}
	}
	if rec := r.get(t, "acme", "a2"); rec.HeldOn != "target#crm/@acme" || rec.Target != "crm" {
		t.Errorf("acme's held event: heldOn %q target %q, want target#crm/@acme and crm", rec.HeldOn, rec.Target)
	}
	bs, err := r.gate.Breakers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	states := map[string]string{}
	for _, b := range bs {
		states[b.Target] = b.State
	}
	if states["crm/@acme"] != targets.StateOpen || states["crm/@beta"] != targets.StateClosed || len(states) != 2 {
		t.Errorf("breakers %v, want crm/@acme open and crm/@beta closed", states)
	}
	// A pause of the shared target covers every tenant's breaker.
	sc := targets.Scope{Kind: targets.KindTarget, Name: "crm"}
	if err := r.gate.Pause(ctx, sc, "test", "migration"); err != nil {
		t.Fatal(err)
	}
	if res := r.add(t, "beta", "b-paused"); res.Verdict != dispatch.Held {
		t.Fatalf("beta under a pause of target/crm: got %v, want held", res.Verdict)
	}
	if rec := r.get(t, "beta", "b-paused"); rec.HeldOn != "target#crm" {
		t.Errorf("held on %q, want target#crm (what resume target/crm drains)", rec.HeldOn)
	}
	if blocked, err := r.gate.Blocked(ctx, targets.Scope{Kind: targets.KindTarget, Name: "crm/@beta"}); !blocked || err != nil {
		t.Errorf("crm/@beta under a pause of target/crm: blocked %v (%v), want true", blocked, err)
	}
}

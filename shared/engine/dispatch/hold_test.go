package dispatch_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/base/webhook/webhooktest"
	"github.com/hookwall/hookwall/shared/engine/dispatch"
	"github.com/hookwall/hookwall/shared/engine/process"
	"github.com/hookwall/hookwall/shared/state/store"
	"github.com/hookwall/hookwall/shared/state/store/memstore"
	"github.com/hookwall/hookwall/shared/state/targets"
	"github.com/hookwall/hookwall/shared/state/targets/memgate"
)

type holdQueue struct{}

func (holdQueue) ChangeVisibility(context.Context, string, time.Duration) error { return nil }
func (holdQueue) SendDeadLetter(context.Context, string, []byte, string) error  { return nil }

// opsLog records the operational events published.
type opsLog struct{ webhooktest.Ops[dispatch.Op] }

func (l *opsLog) kinds() []dispatch.OpKind {
	var k []dispatch.OpKind
	for _, o := range l.All() {
		k = append(k, o.Kind)
	}
	return k
}

// gatedRig is the hold and poison tests' common set-up: a Dispatcher on
// memstore and a memgate (its breakers, buckets and pauses), the events
// claimed as the receiver claims them and delivered with their payload.
type gatedRig struct {
	st   *memstore.Store
	gate *memgate.Gate
	d    *dispatch.Dispatcher
}

// newGatedRig builds the rig's gate on gcfg and its Dispatcher on the
// handlers register registers, with maxAttempts attempts and ops (nil:
// none) for the operational events.
func newGatedRig(t *testing.T, gcfg targets.Config, maxAttempts int, ops dispatch.Ops, register func(*process.Registry)) gatedRig {
	t.Helper()
	g := gatedRig{st: memstore.New(memstore.Config{})}
	var err error
	if g.gate, err = memgate.New(gcfg); err != nil {
		t.Fatal(err)
	}
	reg := process.NewRegistry()
	register(reg)
	if g.d, err = dispatch.New(dispatch.Config{Registry: reg, Store: g.st, DLQ: holdQueue{}, Gate: g.gate, Ops: ops,
		Kernel: dispatch.Kernel{Queue: holdQueue{}, MaxAttempts: maxAttempts}}); err != nil {
		t.Fatal(err)
	}
	return g
}

// claimFollow claims the follow event key of tenant with payload (hashed
// as hash), as the receiver does.
func (g gatedRig) claimFollow(t *testing.T, key, tenant, payload, hash string) {
	t.Helper()
	if res, err := g.st.Claim(context.Background(), store.NewEvent{Key: key, Provider: "line", Tenant: tenant, EventType: "follow",
		PayloadHash: hash, Payload: []byte(payload)}, time.Hour); err != nil || res.Outcome != store.Claimed {
		t.Fatal(res.Outcome, err)
	}
}

// deliverFollow delivers the queue message of the follow event key of
// tenant, carrying payload.
func (g gatedRig) deliverFollow(key, tenant, payload string) dispatch.Result {
	b, _ := json.Marshal(webhook.Envelope{Key: key, Provider: "line", Tenant: tenant, Type: "follow", Payload: json.RawMessage(payload)})
	return g.d.Handle(context.Background(), dispatch.Message{MessageID: key, Body: b})
}

type holdRig struct {
	gatedRig
	ops  *opsLog
	runs map[string]int // handler runs, by handler
	mu   sync.Mutex
	fail map[string]error // a handler's error
}

func newHoldRig(t *testing.T, maxAttempts int) *holdRig {
	t.Helper()
	r := &holdRig{ops: &opsLog{}, runs: map[string]int{}, fail: map[string]error{}}
	r.gatedRig = newGatedRig(t, targets.Config{MinCalls: 2}, maxAttempts, r.ops, func(reg *process.Registry) {
		for _, name := range []string{"a", "b"} {
			process.Handle(reg, name, heldFollowType, func(ctx context.Context, ev *process.Event[heldFollow]) error {
				r.mu.Lock()
				defer r.mu.Unlock()
				r.runs[name]++
				return r.fail[name]
			}, process.Target(name+".example/{tenant}"))
		}
	})
	return r
}

type heldFollow struct {
	UserID string `json:"userId"`
}

var heldFollowType = webhook.NewType[heldFollow]("line", "follow")

// handle delivers the follow event key of tenant t1 ({} its payload).
func (g gatedRig) handle(t *testing.T, key string) dispatch.Result {
	t.Helper()
	return g.deliverFollow(key, "t1", `{}`)
}

// claim claims the follow event key of tenant t1 ({} its payload).
func (g gatedRig) claim(t *testing.T, key string) {
	t.Helper()
	g.claimFollow(t, key, "t1", `{}`, "h")
}

// A paused target holds the event at the handler that calls it, after the
// handlers before it ran (journaled done): no attempt spent. Released, the
// event runs only what was left, at attempt 1.
func TestPausedTargetHoldsAtItsHandler(t *testing.T) {
	r := newHoldRig(t, 5)
	ctx := context.Background()
	sc := targets.Scope{Kind: targets.KindTarget, Name: "b.example/t1"}
	if err := r.gate.Pause(ctx, sc, "test", "maintenance"); err != nil {
		t.Fatal(err)
	}
	const key = "line#t1#p1"
	r.claim(t, key)
	res := r.handle(t, key)
	if res.Verdict != dispatch.Held || !res.Ack {
		t.Fatalf("got %v (ack %v, %v), want held and acknowledged", res.Verdict, res.Ack, res.Err)
	}
	rec, _ := r.st.Get(ctx, key)
	if rec.Status != webhook.StatusHeld || rec.Attempts != 0 || rec.HeldOn != sc.String() || rec.Target != "b.example/t1" ||
		rec.HeldReason == "" || rec.RecheckAt == 0 {
		t.Fatalf("got %+v, want HELD on %s with attempts 0", rec, sc)
	}
	if res := r.handle(t, key); res.Verdict != dispatch.Held || !res.Ack {
		t.Errorf("a redelivery of the held event: got %v (ack %v), want held and acknowledged", res.Verdict, res.Ack)
	}
	if err := r.gate.Resume(ctx, sc); err != nil {
		t.Fatal(err)
	}
	if ok, err := r.st.Release(ctx, rec, time.Now().Add(time.Minute)); !ok || err != nil {
		t.Fatal(ok, err)
	}
	res = r.handle(t, key)
	if res.Verdict != dispatch.Succeeded || res.Attempt != 1 {
		t.Fatalf("after the release: got %v at attempt %d (%v), want succeeded at attempt 1", res.Verdict, res.Attempt, res.Err)
	}
	if r.runs["a"] != 1 || r.runs["b"] != 1 {
		t.Errorf("runs %v, want each handler once", r.runs)
	}
}

// A target that keeps failing opens its breaker (an operational event);
// the event whose call opened it is held, not failed, and so are later
// events; an event whose attempts ran out before that publishes attempt
// exhausted.
func TestOpenBreakerHoldsAndPublishes(t *testing.T) {
	r := newHoldRig(t, 1)
	r.fail["b"] = errors.New("503")
	for k, want := range map[string]dispatch.Verdict{"line#t1#e1": dispatch.Failed} {
		r.claim(t, k)
		if res := r.handle(t, k); res.Verdict != want {
			t.Fatalf("%s: got %v, want %v (attempts exhausted)", k, res.Verdict, want)
		}
	}
	r.claim(t, "line#t1#e2")
	if res := r.handle(t, "line#t1#e2"); res.Verdict != dispatch.Held || !res.Ack {
		t.Fatalf("the event whose call opened the breaker: got %v (%v), want held", res.Verdict, res.Err)
	}
	if rec, _ := r.st.Get(context.Background(), "line#t1#e2"); rec.Status != webhook.StatusHeld || rec.Attempts != 0 ||
		rec.HeldOn != "target#b.example/t1" {
		t.Errorf("got %+v, want HELD on target#b.example/t1 with its attempt given back", rec)
	}
	want := []dispatch.OpKind{dispatch.OpAttemptExhausted, dispatch.OpCircuitOpened}
	if got := r.ops.kinds(); !slices.Equal(got, want) {
		t.Errorf("ops %v, want %v", got, want)
	}
	r.claim(t, "line#t1#e3")
	if res := r.handle(t, "line#t1#e3"); res.Verdict != dispatch.Held {
		t.Errorf("after the breaker opened: got %v, want held", res.Verdict)
	}
	if r.runs["b"] != 2 {
		t.Errorf("b ran %d times, want 2 (MinCalls)", r.runs["b"])
	}
	// A permanent failure is no target failure and no exhaustion.
	r2 := newHoldRig(t, 3)
	r2.fail["a"] = process.Permanent(errors.New("bad request"))
	r2.claim(t, "line#t1#x")
	if res := r2.handle(t, "line#t1#x"); res.Verdict != dispatch.Failed || len(r2.ops.kinds()) != 0 {
		t.Errorf("permanent: got %v and ops %v, want failed and none", res.Verdict, r2.ops.kinds())
	}
}

// A lone event to a dead target (the model's finding 6): with MinCalls equal
// to the attempt limit, the failed call that opens the breaker is the
// event's last attempt. It must end HELD with that attempt given back, not
// FAILED by the outage alone.
func TestLoneEventIsHeldByTheCallThatOpensTheBreaker(t *testing.T) {
	r := newHoldRig(t, 2) // MinCalls 2, two attempts
	r.fail["a"] = errors.New("503")
	const key = "line#t1#lone"
	r.claim(t, key)
	if res := r.handle(t, key); res.Verdict != dispatch.Retried {
		t.Fatalf("attempt 1: got %v (%v), want retried", res.Verdict, res.Err)
	}
	res := r.handle(t, key)
	if res.Verdict != dispatch.Held {
		t.Fatalf("attempt 2, whose failure opens the breaker: got %v (%v), want held", res.Verdict, res.Err)
	}
	rec, _ := r.st.Get(context.Background(), key)
	if rec.Status != webhook.StatusHeld || rec.Attempts != 1 || rec.HeldOn != "target#a.example/t1" {
		t.Fatalf("got %+v, want HELD on target#a.example/t1 at attempts 1", rec)
	}
	if r.runs["a"] != 2 || r.runs["b"] != 0 {
		t.Errorf("runs %v, want a twice (MinCalls), b never", r.runs)
	}
}

//go:build integration

package dispatch_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/hookwall/hookwall/shared/aws/awstest"
	"github.com/hookwall/hookwall/shared/aws/queue"
	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/base/webhook/webhooktest"
	"github.com/hookwall/hookwall/shared/engine/dispatch"
	"github.com/hookwall/hookwall/shared/engine/drain"
	"github.com/hookwall/hookwall/shared/engine/process"
	"github.com/hookwall/hookwall/shared/state/targets"
	"github.com/hookwall/hookwall/shared/state/targets/targetsdb"
)

// outage is a target that answers 503 while down, and otherwise applies
// each Idempotency-Key's effect once.
type outage struct {
	down     atomic.Bool
	mu       sync.Mutex
	refused  int            // 503 answers
	requests map[string]int // answered 200, by key
	srv      *httptest.Server
}

func newOutage(t *testing.T) *outage {
	o := &outage{requests: map[string]int{}}
	o.down.Store(true)
	o.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o.mu.Lock()
		defer o.mu.Unlock()
		if o.down.Load() {
			o.refused++
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		o.requests[r.Header.Get(process.HeaderIdempotencyKey)]++
	}))
	t.Cleanup(o.srv.Close)
	return o
}

// While its target is down, an event burns no attempt and never fails:
// the breaker opens after MinCalls calls and every later event is HELD
// (attempts: only the calls made). Once the target is back, one released
// record carries the probe, which closes the breaker; the drain releases
// the rest and every event SUCCEEDS, each effect once; the target saw
// MinCalls refused calls, no more.
func TestHeldWhileTheTargetIsDownThenDrained(t *testing.T) {
	ctx := context.Background()
	s := newStack(t)
	clk := webhooktest.NewClock(time.Now())
	const minCalls, events = 5, 30
	gate, err := targetsdb.New(targetsdb.TableConfig{Client: s.db, TableName: s.name,
		Config: targets.Config{MinCalls: minCalls, ProbeInterval: time.Hour, Rate: 100, Now: clk.Now}})
	if err != nil {
		t.Fatal(err)
	}
	target := newOutage(t)
	reg := process.NewRegistry()
	process.Handle(reg, "crm.lead", followType, stepsHandler(target.srv.URL, "post"), process.Target("crm/{tenant}"))
	d, err := dispatch.New(dispatch.Config{Registry: reg, Store: s.table, DLQ: nopQueue{}, Gate: gate,
		Kernel: dispatch.Kernel{Queue: nopQueue{}, MaxAttempts: 3}})
	if err != nil {
		t.Fatal(err)
	}
	var envs []webhook.Envelope
	for i := range events {
		envs = append(envs, envelope(fmt.Sprintf("line#t1#down-%02d", i), followType.Name))
	}
	s.seed(t, envs...)

	// The outage: every event once, then every one again (the retries of
	// those that called).
	for round := range 2 {
		for _, env := range envs {
			res := d.Handle(ctx, body(t, env))
			if res.Verdict != dispatch.Retried && res.Verdict != dispatch.Held {
				t.Fatalf("round %d, %s: got %v (%v), want retried or held", round, env.Key, res.Verdict, res.Err)
			}
		}
	}
	if target.refused != minCalls {
		t.Errorf("the target saw %d calls during the outage, want MinCalls %d", target.refused, minCalls)
	}
	spent := 0
	for _, env := range envs {
		rec := s.record(t, env.Key)
		if rec.Status != webhook.StatusHeld || rec.HeldOn != "target#crm/t1" || rec.Target != "crm/t1" {
			t.Errorf("%s: got %s on %q (target %q), want HELD on target#crm/t1", env.Key, rec.Status, rec.HeldOn, rec.Target)
		}
		spent += int(rec.Attempts)
	}
	// One attempt per call made, but the call that opened the breaker: that
	// event is held with its attempt given back (the outage's, not its own).
	if spent != minCalls-1 {
		t.Errorf("attempts spent over all records: %d, want %d (one per call made but the one that opened the breaker)", spent, minCalls-1)
	}
	if n, err := s.table.HeldCount(ctx, "target#crm/t1"); err != nil || n != events {
		t.Errorf("held count: %d, %v; want %d", n, err, events)
	}

	// The target returns; the probe is due.
	target.down.Store(false)
	clk.Advance(time.Hour)
	sq := awstest.SQS(t)
	qs := awstest.NewQueues(t, sq, 5, 2*time.Second)
	q, err := queue.New(queue.Config{Client: sq, URL: qs.URL})
	if err != nil {
		t.Fatal(err)
	}
	dr, err := drain.New(drain.Config{Store: s.table, Gate: gate, Queue: q, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	sc := targets.Scope{Kind: targets.KindTarget, Name: "crm/t1"}
	if p, err := dr.Release(ctx, sc, drain.Options{}); err != nil || p.Released != 0 || !p.Blocked {
		t.Fatalf("drain of an open breaker: %+v, %v; want blocked, nothing released", p, err)
	}
	if p, err := dr.Release(ctx, sc, drain.Options{Force: true, Limit: 1}); err != nil || p.Released != 1 {
		t.Fatalf("probe carrier: %+v, %v; want one released", p, err)
	}
	var carrier string
	for _, env := range envs {
		if s.record(t, env.Key).Status == webhook.StatusRetry {
			carrier = env.Key
		}
	}
	if handled := handleQueued(ctx, t, sq, qs.URL, d, s, carrier); handled[dispatch.Failed] != 0 {
		t.Fatalf("the probe carrier %q: %v, want it succeeded", carrier, handled)
	}
	if blocked, err := gate.Blocked(ctx, sc); err != nil || blocked {
		t.Fatalf("after the probe: blocked %v, %v; want the breaker closed", blocked, err)
	}
	p, err := dr.Release(ctx, sc, drain.Options{})
	if err != nil || p.Released != events-1 {
		t.Fatalf("drain: %+v, %v; want the other %d released", p, err, events-1)
	}
	var keys []string
	for _, env := range envs {
		if env.Key != carrier {
			keys = append(keys, env.Key)
		}
	}
	if handled := handleQueued(ctx, t, sq, qs.URL, d, s, keys...); handled[dispatch.Failed] != 0 || handled[dispatch.Held] != 0 {
		t.Errorf("drained events: %v, want none failed or held again", handled)
	}
	for _, env := range envs {
		if rec := s.record(t, env.Key); rec.Status != webhook.StatusSucceeded || rec.HeldOn != "" {
			t.Errorf("%s: got %s (heldOn %q), want SUCCEEDED", env.Key, rec.Status, rec.HeldOn)
		}
		if n := target.requests[webhook.IdempotencyKey(env.Key, "crm.lead", "post")]; n != 1 {
			t.Errorf("%s: its effect was applied %d times, want once", env.Key, n)
		}
	}
	if target.refused != minCalls {
		t.Errorf("refused calls in all: %d, want %d", target.refused, minCalls)
	}
}

// handleQueued receives messages from url and handles each with d,
// deleting what it acknowledged, until the records of keys are all
// SUCCEEDED; it returns the verdicts' counts. A message that errored (a
// call to the local services failed) comes back after the queue's short
// visibility timeout, as on AWS.
func handleQueued(ctx context.Context, t *testing.T, c *sqs.Client, url string, d *dispatch.Dispatcher, s *stack, keys ...string) map[dispatch.Verdict]int {
	t.Helper()
	got := map[dispatch.Verdict]int{}
	deadline := time.Now().Add(60 * time.Second)
	pending := slices.Clone(keys)
	for len(pending) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d record(s) not SUCCEEDED in time, e.g. %s; verdicts %v", len(pending), pending[0], got)
		}
		msgs, err := awstest.Receive(ctx, c, url, 10, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs {
			res := d.Handle(ctx, dispatch.Message{MessageID: *m.MessageId, ReceiptHandle: *m.ReceiptHandle, Body: []byte(*m.Body)})
			got[res.Verdict]++
			if res.Verdict == dispatch.Errored {
				t.Logf("%s: errored (it comes back): %v", res.Key, res.Err)
			}
			if res.Ack {
				if _, err := c.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: &url, ReceiptHandle: m.ReceiptHandle}); err != nil {
					t.Fatal(err)
				}
			}
		}
		pending = slices.DeleteFunc(pending, func(k string) bool { return s.record(t, k).Status == webhook.StatusSucceeded })
	}
	return got
}

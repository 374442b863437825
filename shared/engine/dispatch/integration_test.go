//go:build integration

package dispatch_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/hookwall/hookwall/shared/aws/awstest"
	"github.com/hookwall/hookwall/shared/aws/queue"
	"github.com/hookwall/hookwall/shared/aws/sqsbatch"
	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/base/webhook/webhooktest"
	"github.com/hookwall/hookwall/shared/engine/dispatch"
	"github.com/hookwall/hookwall/shared/engine/process"
	"github.com/hookwall/hookwall/shared/state/store"
)

type lead struct {
	UserID string `json:"userId"`
}

var (
	followType  = webhook.NewType[lead]("line", "follow")
	failType    = webhook.NewType[lead]("line", "always-fails")
	permType    = webhook.NewType[lead]("line", "permanent")
	panicType   = webhook.NewType[lead]("line", "panics-once")
	noStepsType = webhook.NewType[lead]("line", "no-steps")
)

// stack is one test's own table (and, if asked, queues) on the local services.
type stack struct {
	db    *dynamodb.Client
	ops   *awstest.OpCounter
	name  string
	table *store.Table
}

func newStack(t *testing.T) *stack { return newStackAt(t, time.Now) }

// newStackAt is newStack with the table on the clock now.
func newStackAt(t *testing.T, now func() time.Time) *stack {
	t.Helper()
	ops := &awstest.OpCounter{}
	db := awstest.DynamoDB(t, ops.DynamoDBOption)
	name := awstest.NewTable(t, db)
	table, err := store.New(store.Config{Client: db, TableName: name, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	ops.Take()
	return &stack{db: db, ops: ops, name: name, table: table}
}

func envelope(key string, typ string) webhook.Envelope {
	return webhook.Envelope{Key: key, Provider: "line", Tenant: "t1", Type: typ,
		ReceivedAt: time.Now().UTC(), Payload: json.RawMessage(`{"userId":"U-` + key + `"}`)}
}

// seed writes RECEIVED records as the receiver's claim leaves them.
func (s *stack) seed(t *testing.T, envs ...webhook.Envelope) {
	t.Helper()
	for _, env := range envs {
		now := time.Now()
		item, err := attributevalue.MarshalMap(store.Record{
			Key: env.Key, SK: store.SKEvent, Status: webhook.StatusReceived, Version: 1, Provider: env.Provider,
			Tenant: env.Tenant, EventType: env.Type, ReceivedAt: env.ReceivedAt.UnixMilli(), UpdatedAt: now.UnixMilli(),
			EnqueuedAt: now.UnixMilli(), ExpiresAt: now.Add(7 * 24 * time.Hour).Unix(), PayloadHash: "h",
			Payload: store.Payload(env.Payload), ClaimID: "claim-" + env.Key,
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.db.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: &s.name, Item: item}); err != nil {
			t.Fatal(err)
		}
	}
	s.ops.Take()
}

func (s *stack) record(t *testing.T, key string) *store.Record {
	t.Helper()
	rec, err := s.table.Get(context.Background(), key)
	if err != nil || rec == nil {
		t.Fatalf("record %s: %v (nil: %v)", key, err, rec == nil)
	}
	return rec
}

// effects is the outside world: it counts requests per Idempotency-Key and
// applies each key's effect once, as an idempotent API would.
type effects struct {
	mu       sync.Mutex
	requests map[string]int
	srv      *httptest.Server
}

func newEffects(t *testing.T) *effects {
	e := &effects{requests: map[string]int{}}
	e.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		k := r.Header.Get(process.HeaderIdempotencyKey)
		if k == "" {
			http.Error(w, "no Idempotency-Key", http.StatusBadRequest)
			return
		}
		e.mu.Lock()
		e.requests[k]++
		e.mu.Unlock()
	}))
	t.Cleanup(e.srv.Close)
	return e
}

func (e *effects) snapshot() map[string]int {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make(map[string]int, len(e.requests))
	for k, v := range e.requests {
		out[k] = v
	}
	return out
}

// post is an external effect made inside a step.
func post[T any](ctx context.Context, ev *process.Event[T], url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, nil)
	if err != nil {
		return err
	}
	resp, err := ev.HTTPClient().Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("effect: status %d", resp.StatusCode)
	}
	return nil
}

// stepsHandler runs the named steps, each posting one effect.
func stepsHandler(url string, steps ...string) func(context.Context, *process.Event[lead]) error {
	return func(ctx context.Context, ev *process.Event[lead]) error {
		for _, s := range steps {
			if err := ev.Step(ctx, s, func(ctx context.Context, _ string) error { return post(ctx, ev, url) }); err != nil {
				return err
			}
		}
		return nil
	}
}

type nopQueue struct{}

func (nopQueue) ChangeVisibility(context.Context, string, time.Duration) error { return nil }
func (nopQueue) SendDeadLetter(context.Context, string, []byte, string) error  { return nil }

func body(t *testing.T, env webhook.Envelope) dispatch.Message {
	b, err := json.Marshal(env)
	if err != nil {
		t.Fatal(err)
	}
	return dispatch.Message{MessageID: env.Key, ReceiptHandle: "rh", Body: b}
}

func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Must show 1: 500 events, each delivered 3 times concurrently through the
// real queue and the SQS batch adapter: each effect once, all SUCCEEDED.
func TestEachEffectOnceUnderTripleDelivery(t *testing.T) {
	const events, copies = 500, 3
	s := newStack(t)
	sc := awstest.SQS(t)
	qs := awstest.NewQueues(t, sc, 10, 30*time.Second)
	fx := newEffects(t)
	reg := process.NewRegistry()
	process.Handle(reg, "crm.lead", followType, stepsHandler(fx.srv.URL, "create-lead", "notify"))
	mainQ, _ := queue.New(queue.Config{Client: sc, URL: qs.URL})
	dlq, _ := queue.New(queue.Config{Client: sc, URL: qs.DLQURL})
	d, err := dispatch.New(dispatch.Config{Registry: reg, Store: s.table, DLQ: dlq,
		Kernel: dispatch.Kernel{Queue: mainQ, LeaseDuration: 2 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	envs := make([]webhook.Envelope, events)
	for i := range envs {
		envs[i] = envelope(fmt.Sprintf("line#t1#ev-%04d", i), followType.Name)
	}
	s.seed(t, envs...)
	start := time.Now()
	var all []webhook.Envelope
	for i := range envs { // the copies of one event sit next to each other in the queue
		for range copies {
			all = append(all, envs[i])
		}
	}
	if err := mainQ.Send(context.Background(), all); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var acked atomic.Int64
	wg := awstest.Pump(ctx, t, sc, qs.URL, sqsbatch.New(d, 10).Handle, 6, &acked)
	waitFor(t, 2*time.Minute, "every message to be acknowledged", func() bool { return acked.Load() >= events*copies })
	cancel()
	wg.Wait()
	elapsed := time.Since(start)

	got := fx.snapshot()
	if len(got) != events*2 {
		t.Errorf("got %d distinct idempotency keys, want %d", len(got), events*2)
	}
	for _, env := range envs {
		for _, step := range []string{"create-lead", "notify"} {
			if n := got[webhook.IdempotencyKey(env.Key, "crm.lead", step)]; n != 1 {
				t.Errorf("%s/%s: effect requested %d times, want 1", env.Key, step, n)
			}
		}
		if rec := s.record(t, env.Key); rec.Status != webhook.StatusSucceeded || rec.Attempts != 1 {
			t.Errorf("%s: got %s after %d attempts, want SUCCEEDED after 1", env.Key, rec.Status, rec.Attempts)
		}
	}
	if msgs, _ := awstest.Receive(context.Background(), sc, qs.DLQURL, 10, 0); len(msgs) != 0 {
		t.Errorf("got %d dead letters, want 0", len(msgs))
	}
	t.Logf("%d events × %d deliveries (%d messages) through SQS + batch adapter: %v wall, %.0f msg/s",
		events, copies, events*copies, elapsed.Round(time.Millisecond), float64(events*copies)/elapsed.Seconds())
}

// faultAt is a store that fails the journal write of one step of attempt 1
// (after writing it when journaled is true, so the write lands but its
// answer is lost). With dead set it then drops every later write too: what
// a worker that died at that point leaves behind (its lease runs out).
type faultAt struct {
	dispatch.Store
	step      string
	journaled bool
	dead      bool

	mu    sync.Mutex
	fired string // the lease owner of the attempt the fault hit
}

var errInjected = errors.New("injected failure")

// gone reports whether l belongs to the dead worker.
func (f *faultAt) gone(l webhook.Lease) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.dead && f.fired != "" && f.fired == l.Owner
}

func (f *faultAt) SaveStep(ctx context.Context, l webhook.Lease, e webhook.JournalEntry) (bool, error) {
	if f.gone(l) {
		return false, errInjected
	}
	if l.Attempt == 1 && e.Step == f.step {
		f.mu.Lock()
		f.fired = l.Owner
		f.mu.Unlock()
		if f.journaled {
			if _, err := f.Store.SaveStep(ctx, l, e); err != nil {
				return false, err
			}
		}
		return false, errInjected
	}
	return f.Store.SaveStep(ctx, l, e)
}

func (f *faultAt) Heartbeat(ctx context.Context, l webhook.Lease, until time.Time) (bool, error) {
	if f.gone(l) {
		return false, errInjected
	}
	return f.Store.Heartbeat(ctx, l, until)
}

func (f *faultAt) Complete(ctx context.Context, l webhook.Lease, until time.Time) (bool, error) {
	if f.gone(l) {
		return false, errInjected
	}
	return f.Store.Complete(ctx, l, until)
}

func (f *faultAt) Retry(ctx context.Context, l webhook.Lease, reason string) (bool, error) {
	if f.gone(l) {
		return false, errInjected
	}
	return f.Store.Retry(ctx, l, reason)
}

func (f *faultAt) Fail(ctx context.Context, l webhook.Lease, reason string) (bool, error) {
	if f.gone(l) {
		return false, errInjected
	}
	return f.Store.Fail(ctx, l, reason)
}

// carrier is the store's way of journaling several steps in one write and
// of completing with the last ones (*store.Table has it).
type carrier interface {
	SaveSteps(ctx context.Context, l webhook.Lease, entries []webhook.JournalEntry) (bool, error)
	CompleteSteps(ctx context.Context, l webhook.Lease, retainUntil time.Time, entries []webhook.JournalEntry) (bool, error)
}

// hits reports whether entries journal the faulty step of attempt 1, and
// records the attempt it hit.
func (f *faultAt) hits(l webhook.Lease, entries []webhook.JournalEntry) bool {
	if l.Attempt != 1 || !slices.ContainsFunc(entries, func(e webhook.JournalEntry) bool { return e.Step == f.step }) {
		return false
	}
	f.mu.Lock()
	f.fired = l.Owner
	f.mu.Unlock()
	return true
}

// SaveSteps is SaveStep's fault for the store's one write of several entries.
func (f *faultAt) SaveSteps(ctx context.Context, l webhook.Lease, entries []webhook.JournalEntry) (bool, error) {
	if f.gone(l) {
		return false, errInjected
	}
	c := f.Store.(carrier)
	if f.hits(l, entries) {
		if f.journaled {
			if _, err := c.SaveSteps(ctx, l, entries); err != nil {
				return false, err
			}
		}
		return false, errInjected
	}
	return c.SaveSteps(ctx, l, entries)
}

// CompleteSteps is SaveStep's fault when the completion carries the step's
// entry: the completion fails, having landed when journaled is set.
func (f *faultAt) CompleteSteps(ctx context.Context, l webhook.Lease, until time.Time, entries []webhook.JournalEntry) (bool, error) {
	if f.gone(l) {
		return false, errInjected
	}
	c := f.Store.(carrier)
	if f.hits(l, entries) {
		if f.journaled {
			if _, err := c.CompleteSteps(ctx, l, until, entries); err != nil {
				return false, err
			}
		}
		return false, errInjected
	}
	return c.CompleteSteps(ctx, l, until, entries)
}

// Must show 2: a crash after each step in turn.
func TestCrashAfterEachStep(t *testing.T) {
	steps := []string{"reserve", "charge", "notify"}
	for _, crash := range []struct {
		name string
		dead bool
	}{{"worker crash", true}, {"journal write error", false}} {
		for i, step := range steps {
			for _, journaled := range []bool{false, true} {
				name := fmt.Sprintf("%s after %s (journaled %v)", crash.name, step, journaled)
				t.Run(name, func(t *testing.T) {
					clk := webhooktest.NewClock(time.Now())
					s := newStackAt(t, clk.Now)
					fx := newEffects(t)
					reg := process.NewRegistry()
					process.Handle(reg, "shop.order", followType, stepsHandler(fx.srv.URL, steps...))
					const lease = time.Minute // on clk: stepped over, never waited for
					d, err := dispatch.New(dispatch.Config{Registry: reg, DLQ: nopQueue{}, Store: &faultAt{Store: s.table, step: step, journaled: journaled, dead: crash.dead},
						Kernel: dispatch.Kernel{Queue: nopQueue{}, Now: clk.Now, LeaseDuration: lease}})
					if err != nil {
						t.Fatal(err)
					}
					env := envelope("line#t1#order-1", followType.Name)
					s.seed(t, env)
					first := d.Handle(context.Background(), body(t, env))
					if first.Ack || first.Verdict == dispatch.Succeeded {
						t.Fatalf("attempt 1: got %v (ack %v), want an unacknowledged failure", first.Verdict, first.Ack)
					}
					// The last step's entry rides on the completion: a fault
					// there is the completion's, which leaves the lease to
					// run out, or, when it landed, the event done.
					last := i == len(steps)-1
					completed := last && journaled
					if (crash.dead || last) && !completed {
						if rec := s.record(t, env.Key); rec.Status != webhook.StatusProcessing {
							t.Fatalf("after a crash got %s, want PROCESSING with the lease left to run out", rec.Status)
						}
						if r := d.Handle(context.Background(), body(t, env)); r.Verdict != dispatch.Busy {
							t.Fatalf("redelivered inside the dead worker's lease: got %v, want busy", r.Verdict)
						}
						clk.Advance(lease + time.Second) // the dead worker's lease runs out
					}
					second := d.Handle(context.Background(), body(t, env))
					if want := map[bool]dispatch.Verdict{false: dispatch.Succeeded, true: dispatch.Duplicate}[completed]; second.Verdict != want {
						t.Fatalf("attempt 2: got %v (%v), want %v", second.Verdict, second.Err, want)
					}
					got := fx.snapshot()
					for j, st := range steps {
						want := 1
						if j == i && !journaled {
							want = 2 // ran, not journaled: run again, with the same key
						}
						if n := got[webhook.IdempotencyKey(env.Key, "shop.order", st)]; n != want {
							t.Errorf("step %s: %d requests with its key, want %d", st, n, want)
						}
					}
					if len(got) != len(steps) {
						t.Errorf("got %d distinct keys (effects), want %d", len(got), len(steps))
					}
				})
			}
		}
	}
}

// stalled is a store whose heartbeats never get through (a partitioned or
// frozen worker).
type stalled struct{ dispatch.Store }

func (stalled) Heartbeat(context.Context, webhook.Lease, time.Time) (bool, error) {
	return false, errors.New("heartbeat: network unreachable")
}

// Must show 3: A stalls past its lease, B takes over and finishes, A's late
// completion is rejected by the fence and changes nothing.
func TestLeaseExpiryTakeover(t *testing.T) {
	clk := webhooktest.NewClock(time.Now())
	s := newStackAt(t, clk.Now)
	fx := newEffects(t)
	reached, release := make(chan struct{}), make(chan struct{})
	reg := process.NewRegistry()
	steps := stepsHandler(fx.srv.URL, "one", "two")
	process.Handle(reg, "crm.lead", followType, func(ctx context.Context, ev *process.Event[lead]) error {
		if err := steps(ctx, ev); err != nil {
			return err
		}
		if ev.Attempt == 1 { // worker A stalls after its steps, before completing
			close(reached)
			<-release
		}
		return nil
	})
	const lease = time.Minute // on clk: stepped over, never waited for
	a, _ := dispatch.New(dispatch.Config{Registry: reg, Store: stalled{s.table}, DLQ: nopQueue{},
		Kernel: dispatch.Kernel{Queue: nopQueue{}, LeaseDuration: lease, Now: clk.Now}})
	b, _ := dispatch.New(dispatch.Config{Registry: reg, Store: s.table, DLQ: nopQueue{},
		Kernel: dispatch.Kernel{Queue: nopQueue{}, LeaseDuration: lease, Now: clk.Now}})
	env := envelope("line#t1#takeover", followType.Name)
	s.seed(t, env)
	resA := make(chan dispatch.Result)
	go func() { resA <- a.Handle(context.Background(), body(t, env)) }()
	<-reached
	if r := b.Handle(context.Background(), body(t, env)); r.Verdict != dispatch.Busy {
		t.Fatalf("B inside A's lease: got %v, want busy", r.Verdict)
	}
	clk.Advance(lease + time.Second) // A's lease runs out (its heartbeats never get through)
	rb := b.Handle(context.Background(), body(t, env))
	if rb.Verdict != dispatch.Succeeded || rb.Attempt != 2 {
		t.Fatalf("B after A's lease ran out: got %v attempt %d (%v), want succeeded on attempt 2", rb.Verdict, rb.Attempt, rb.Err)
	}
	afterB := s.record(t, env.Key)
	close(release)
	ra := <-resA
	if ra.Verdict != dispatch.LeaseLost || ra.Ack || ra.Event != nil {
		t.Errorf("A's late completion: got %v ack %v event %v, want lease-lost, not acked, no event", ra.Verdict, ra.Ack, ra.Event)
	}
	if afterA := s.record(t, env.Key); !reflect.DeepEqual(afterA, afterB) {
		t.Errorf("A changed the record:\n got %+v\nwant %+v", afterA, afterB)
	}
	for _, st := range []string{"one", "two"} {
		if n := fx.snapshot()[webhook.IdempotencyKey(env.Key, "crm.lead", st)]; n != 1 {
			t.Errorf("step %s: %d requests, want 1 (B replays A's journaled steps)", st, n)
		}
	}
}

// Must show 4: the DLQ after max attempts with the reason; Permanent at
// once; a panic is retried.
func TestDeadLetterPaths(t *testing.T) {
	s := newStack(t)
	sc := awstest.SQS(t)
	qs := awstest.NewQueues(t, sc, 10, 30*time.Second)
	var panicked atomic.Bool
	reg := process.NewRegistry()
	process.Handle(reg, "ops.always-fails", failType, func(context.Context, *process.Event[lead]) error {
		return errors.New("upstream 503")
	}, process.MaxAttempts(3))
	process.Handle(reg, "ops.permanent", permType, func(context.Context, *process.Event[lead]) error {
		return process.Permanent(errors.New("user blocked the bot"))
	})
	process.Handle(reg, "ops.panics-once", panicType, func(context.Context, *process.Event[lead]) error {
		if panicked.CompareAndSwap(false, true) {
			var m map[string]int
			m["boom"]++ // nil map write
		}
		return nil
	})
	mainQ, _ := queue.New(queue.Config{Client: sc, URL: qs.URL})
	dlq, _ := queue.New(queue.Config{Client: sc, URL: qs.DLQURL})
	d, _ := dispatch.New(dispatch.Config{Registry: reg, Store: s.table, DLQ: dlq,
		Kernel: dispatch.Kernel{Queue: mainQ, RetryBase: 10 * time.Millisecond, RetryCap: 20 * time.Millisecond}})
	envs := []webhook.Envelope{envelope("line#t1#fails", failType.Name), envelope("line#t1#perm", permType.Name),
		envelope("line#t1#panic", panicType.Name)}
	s.seed(t, envs...)
	if err := mainQ.Send(context.Background(), envs); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var acked atomic.Int64
	wg := awstest.Pump(ctx, t, sc, qs.URL, sqsbatch.New(d, 10).Handle, 2, &acked)
	waitFor(t, time.Minute, "every message to be acknowledged", func() bool { return acked.Load() >= int64(len(envs)) })
	cancel()
	wg.Wait()

	dead := map[string]string{}
	for range 5 {
		msgs, err := awstest.Receive(context.Background(), sc, qs.DLQURL, 10, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs {
			key := aws.ToString(m.MessageAttributes[queue.AttrEventKey].StringValue)
			dead[key] = aws.ToString(m.MessageAttributes[queue.AttrReason].StringValue)
		}
	}
	want := map[string]string{"line#t1#fails": "upstream 503", "line#t1#perm": "permanent: user blocked the bot"}
	if !reflect.DeepEqual(dead, want) {
		t.Errorf("got dead letters (key: reason) %v, want %v", dead, want)
	}
	for key, w := range map[string]struct {
		status   webhook.Status
		attempts int64
	}{"line#t1#fails": {webhook.StatusFailed, 3}, "line#t1#perm": {webhook.StatusFailed, 1}, "line#t1#panic": {webhook.StatusSucceeded, 2}} {
		if rec := s.record(t, key); rec.Status != w.status || rec.Attempts != w.attempts {
			t.Errorf("%s: got %s after %d attempts, want %s after %d", key, rec.Status, rec.Attempts, w.status, w.attempts)
		}
	}
}

// Must show 5: DynamoDB calls per event, counted by SDK middleware.
func TestDynamoDBCallsPerEvent(t *testing.T) {
	s := newStack(t)
	fx := newEffects(t)
	var failNotify atomic.Bool
	reg := process.NewRegistry()
	process.Handle(reg, "t.no-steps", noStepsType, func(context.Context, *process.Event[lead]) error { return nil })
	process.Handle(reg, "t.two-steps", followType, func(ctx context.Context, ev *process.Event[lead]) error {
		if err := ev.Step(ctx, "one", func(ctx context.Context, _ string) error { return post(ctx, ev, fx.srv.URL) }); err != nil {
			return err
		}
		return ev.Step(ctx, "two", func(ctx context.Context, _ string) error {
			if failNotify.Load() {
				return errors.New("down")
			}
			return post(ctx, ev, fx.srv.URL)
		})
	})
	d, _ := dispatch.New(dispatch.Config{Registry: reg, Store: s.table, DLQ: nopQueue{},
		Kernel: dispatch.Kernel{Queue: nopQueue{}}})
	run := func(env webhook.Envelope, want dispatch.Verdict) map[string]int {
		t.Helper()
		s.ops.Take()
		if r := d.Handle(context.Background(), body(t, env)); r.Verdict != want {
			t.Fatalf("%s: got %v (%v), want %v", env.Key, r.Verdict, r.Err, want)
		}
		return s.ops.Take()
	}
	noSteps, twoSteps, retried := envelope("line#t1#a", noStepsType.Name), envelope("line#t1#b", followType.Name), envelope("line#t1#c", followType.Name)
	s.seed(t, noSteps, twoSteps, retried)
	cases := []struct {
		name string
		got  map[string]int
		want map[string]int
	}{
		{"no steps", run(noSteps, dispatch.Succeeded), map[string]int{"UpdateItem": 2}},
		{"two steps", run(twoSteps, dispatch.Succeeded), map[string]int{"UpdateItem": 3}},
		{"duplicate delivery", run(twoSteps, dispatch.Duplicate), map[string]int{"UpdateItem": 1}},
	}
	failNotify.Store(true)
	cases = append(cases, struct {
		name string
		got  map[string]int
		want map[string]int
	}{"attempt 1 of 2: step one done, step two fails", run(retried, dispatch.Retried), map[string]int{"UpdateItem": 3}})
	failNotify.Store(false)
	cases = append(cases, struct {
		name string
		got  map[string]int
		want map[string]int
	}{"attempt 2 of 2: journal read once, step one replayed, step two run", run(retried, dispatch.Succeeded), map[string]int{"UpdateItem": 2, "GetItem": 1, "Query": 1}})
	for _, c := range cases {
		t.Logf("DynamoDB calls, %s: %v", c.name, c.got)
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, c.got, c.want)
		}
	}
}

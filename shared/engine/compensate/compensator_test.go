package compensate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/base/obs"
	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/base/webhook/webhooktest"
	"github.com/hookwall/hookwall/shared/engine/process"
	"github.com/hookwall/hookwall/shared/internal/kernel"
	"github.com/hookwall/hookwall/shared/internal/registry"
	"github.com/hookwall/hookwall/shared/state/store"
	"github.com/hookwall/hookwall/shared/state/store/memstore/memtest"
)

type follow struct {
	UserID string `json:"userId"`
}

var followType = webhook.NewType[follow]("line", "follow")

func noop(context.Context, *process.Event[follow]) error { return nil }

// rig is a Compensator on fakes, with a registry whose undo functions
// record what they were called with.
type rig struct {
	clock   *webhooktest.Clock
	store   *memtest.Table
	queue   *webhooktest.Queue
	pub     *webhooktest.Outcomes
	metrics *obs.Metrics
	reg     *process.Registry
	c       *Compensator

	mu    sync.Mutex
	calls []*process.Undo // every undo call, in order
}

// newRig registers handlers a and b (with compensations that record their
// call and return errFor(handler/step)), c (no compensation), then lets
// more register further ones.
func newRig(t *testing.T, errFor func(id string) error, more func(r *process.Registry, rg *rig), mod ...func(*Config)) *rig {
	t.Helper()
	rg := &rig{clock: webhooktest.NewClock(time.UnixMilli(1_700_000_000_000)), queue: &webhooktest.Queue{}, pub: &webhooktest.Outcomes{},
		metrics: obs.NewMetrics(&bytes.Buffer{}, "Test", nil), reg: process.NewRegistry()}
	rg.store = memtest.New(t, rg.clock.Now)
	undo := func(ctx context.Context, u *process.Undo) error {
		rg.mu.Lock()
		rg.calls = append(rg.calls, u)
		rg.mu.Unlock()
		if errFor != nil {
			return errFor(u.Handler + "/" + u.Step)
		}
		return nil
	}
	process.Handle(rg.reg, "a", followType, noop, process.Compensate(undo))
	process.Handle(rg.reg, "b", followType, noop, process.Compensate(undo))
	process.Handle(rg.reg, "c", followType, noop)
	if more != nil {
		more(rg.reg, rg)
	}
	cfg := Config{Registry: rg.reg, Store: rg.store, Kernel: Kernel{Queue: rg.queue, Publisher: rg.pub, Metrics: rg.metrics,
		Now: rg.clock.Now, Jitter: func(n int64) int64 { return n - 1 }, LeaseDuration: time.Minute}}
	for _, m := range mod {
		m(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rg.c = c
	return rg
}

func (rg *rig) undone() []string {
	rg.mu.Lock()
	defer rg.mu.Unlock()
	var out []string
	for _, u := range rg.calls {
		out = append(out, u.Handler+"/"+u.Step)
	}
	return out
}

const key = "line#acme#ev1"

func message(t *testing.T, env webhook.Envelope) kernel.Message {
	t.Helper()
	b, err := json.Marshal(env)
	if err != nil {
		t.Fatal(err)
	}
	return kernel.Message{MessageID: "m1", ReceiptHandle: "rh1", Body: b}
}

func envelope() webhook.Envelope {
	return webhook.Envelope{Key: key, Provider: "line", Tenant: "acme", Type: "follow",
		ReceivedAt: time.UnixMilli(1_699_999_000_000).UTC(), Payload: json.RawMessage(`{"userId":"U1"}`)}
}

// step journals handler/step of the claim of key's record, completed at at,
// with result (none when empty).
func (rg *rig) step(handler, step string, at time.Time, result string) {
	e := webhook.JournalEntry{Handler: handler, Step: step, CompletedAt: at}
	if result != "" {
		e.Result = []byte(result)
	}
	rg.store.SeedJournal(key, e)
}

// failedWithSteps puts a FAILED record whose claim journaled, in this
// order: a/one, b/two, a/three (each a millisecond after the last), c/four
// (no compensation) and the done marker of a.
func (rg *rig) failedWithSteps() {
	rg.store.Seed(store.Record{Key: key, Status: webhook.StatusFailed, Attempts: 5, LastError: "permanent: boom"})
	t0 := rg.clock.Now().Add(-time.Minute)
	rg.step("a", "one", t0, `{"id":"L1"}`)
	rg.step("b", "two", t0.Add(time.Millisecond), "")
	rg.step("a", "three", t0.Add(2*time.Millisecond), "")
	rg.step("c", "four", t0.Add(3*time.Millisecond), "")
	rg.step("a", webhook.DoneStep, t0.Add(4*time.Millisecond), "")
}

func TestUndoesNewestFirstThenCompensated(t *testing.T) {
	rg := newRig(t, nil, nil)
	rg.failedWithSteps()
	res := rg.c.Handle(context.Background(), message(t, envelope()))

	if res.Verdict != Compensated || !res.Ack || res.Err != nil {
		t.Fatalf("got %s (ack %v, %v), want compensated and acked", res.Verdict, res.Ack, res.Err)
	}
	if got, want := rg.undone(), []string{"a/three", "b/two", "a/one"}; !slices.Equal(got, want) {
		t.Errorf("undo calls: got %v, want %v (newest first; c has no compensation; $done is no step)", got, want)
	}
	if want := []string{"a/$undo:three", "b/$undo:two", "a/$undo:one"}; !slices.Equal(rg.store.Saves(), want) {
		t.Errorf("journaled: got %v, want %v", rg.store.Saves(), want)
	}
	if rec := rg.store.Record(key); rec.Status != webhook.StatusCompensated || rec.LeaseOwner != "" {
		t.Errorf("record: got %+v, want COMPENSATED without a lease", rec)
	}
	evs := rg.pub.All()
	if len(evs) != 1 || evs[0].Status != webhook.StatusCompensated || evs[0].Key != key || evs[0].Type != "follow" ||
		evs[0].Attempts != 5 || evs[0].Compensations != 1 || !evs[0].At.Equal(rg.clock.Now()) {
		t.Errorf("outcomes: got %+v, want one COMPENSATED outcome of the event", evs)
	}
	counts := rg.metrics.Counts()
	if counts[MetricCompensated] != 1 || counts[MetricUndone] != 3 || counts[MetricNotCompensable] != 1 {
		t.Errorf("metrics: got %v", counts)
	}
}

func TestUndoGetsTheStepAndItsOwnKey(t *testing.T) {
	rg := newRig(t, nil, nil)
	rg.failedWithSteps()
	rg.c.Handle(context.Background(), message(t, envelope()))
	rg.mu.Lock()
	defer rg.mu.Unlock()
	u := rg.calls[2] // a/one
	if u.Handler != "a" || u.Step != "one" || string(u.Result) != `{"id":"L1"}` || u.Attempt != 1 ||
		u.Envelope.Key != key || string(u.Envelope.Payload) != `{"userId":"U1"}` || u.Log == nil {
		t.Errorf("got %+v", u)
	}
	if want := webhook.IdempotencyKey(key, "a", "$undo:one"); u.IdempotencyKey != want || u.IdempotencyKey == webhook.IdempotencyKey(key, "a", "one") {
		t.Errorf("idempotency key: got %s, want %s (not the forward step's)", u.IdempotencyKey, want)
	}
	type lead struct{ ID string }
	if l, err := process.UndoResult[lead](u); err != nil || l.ID != "L1" {
		t.Errorf("UndoResult: got %+v, %v", l, err)
	}
}

func TestTiesUndoInReverseJournalOrder(t *testing.T) {
	rg := newRig(t, nil, nil)
	rg.store.Seed(store.Record{Key: key, Status: webhook.StatusFailed, LastError: "x"})
	at := rg.clock.Now().Add(-time.Second)
	for _, s := range []string{"s1", "s2", "s3"} {
		rg.step("a", s, at, "")
	}
	rg.c.Handle(context.Background(), message(t, envelope()))
	if got, want := rg.undone(), []string{"a/s3", "a/s2", "a/s1"}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestResumesAfterJournaledUndos(t *testing.T) {
	rg := newRig(t, nil, nil)
	rg.failedWithSteps()
	// An earlier attempt undid a/three and died: COMPENSATING, its lease run out.
	rg.step("a", "$undo:three", rg.clock.Now(), "")
	rg.store.Update(key, func(r *store.Record) {
		r.Status, r.LeaseOwner, r.LeaseUntil, r.Compensations = webhook.StatusCompensating, "dead", rg.clock.Now().Add(-time.Second).UnixMilli(), 1
	})

	res := rg.c.Handle(context.Background(), message(t, envelope()))
	if res.Verdict != Compensated || res.Attempt != 2 || res.From != webhook.StatusCompensating {
		t.Fatalf("got %s on attempt %d from %s, want compensated on attempt 2 from COMPENSATING", res.Verdict, res.Attempt, res.From)
	}
	if got, want := rg.undone(), []string{"b/two", "a/one"}; !slices.Equal(got, want) {
		t.Errorf("undo calls: got %v, want %v (a/three was undone already)", got, want)
	}
	if !slices.Equal(res.Skipped, []string{"a/three"}) || !slices.Equal(res.Undone, []string{"b/two", "a/one"}) {
		t.Errorf("result: undone %v, skipped %v", res.Undone, res.Skipped)
	}
}

func TestOutcomes(t *testing.T) {
	perm := process.Permanent(errors.New("lead is locked"))
	tests := []struct {
		name       string
		errFor     func(string) error
		setup      func(rg *rig)
		want       kernel.Verdict
		wantAck    bool
		wantStatus webhook.Status
		wantError  string // in the record's lastError
		wantUndone []string
	}{
		{name: "nothing to compensate is DEAD with the reason",
			setup: func(rg *rig) {
				rg.store.Seed(store.Record{Key: key, Status: webhook.StatusFailed, LastError: "permanent: status 400"})
				rg.step("c", "only", rg.clock.Now(), "")
			},
			want: Dead, wantAck: true, wantStatus: webhook.StatusDead, wantError: "nothing to compensate: permanent: status 400"},
		{name: "a redriven record with no journal and no error is DEAD",
			setup: func(rg *rig) { rg.store.Seed(store.Record{Key: key, Status: webhook.StatusRetry}) },
			want:  Dead, wantAck: true, wantStatus: webhook.StatusDead, wantError: "nothing to compensate: record was RETRY with no error recorded"},
		{name: "a permanent undo error is DEAD at once",
			errFor: func(id string) error {
				if id == "b/two" {
					return perm
				}
				return nil
			},
			setup: (*rig).failedWithSteps,
			want:  Dead, wantAck: true, wantStatus: webhook.StatusDead,
			wantError: "compensation failed permanently: undo b/two: permanent: lead is locked", wantUndone: []string{"a/three", "b/two"}},
		{name: "a transient undo error is retried",
			errFor: func(id string) error {
				if id == "b/two" {
					return errors.New("status 503")
				}
				return nil
			},
			setup: (*rig).failedWithSteps,
			want:  kernel.Retried, wantStatus: webhook.StatusCompensating, wantError: "undo b/two: status 503",
			wantUndone: []string{"a/three", "b/two"}},
		{name: "a terminal record is acknowledged and left alone",
			setup: func(rg *rig) { rg.store.Seed(store.Record{Key: key, Status: webhook.StatusSucceeded}) },
			want:  kernel.Duplicate, wantAck: true, wantStatus: webhook.StatusSucceeded},
		{name: "a missing record is acknowledged",
			setup: func(*rig) {}, want: kernel.Absent, wantAck: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rg := newRig(t, tc.errFor, nil)
			tc.setup(rg)
			res := rg.c.Handle(context.Background(), message(t, envelope()))
			if res.Verdict != tc.want || res.Ack != tc.wantAck {
				t.Fatalf("got %s (ack %v, %v), want %s (ack %v)", res.Verdict, res.Ack, res.Err, tc.want, tc.wantAck)
			}
			if tc.wantStatus != "" {
				rec := rg.store.Record(key)
				if rec.Status != tc.wantStatus || rec.LastError != tc.wantError {
					t.Errorf("record: got %s %q, want %s %q", rec.Status, rec.LastError, tc.wantStatus, tc.wantError)
				}
			}
			if got := rg.undone(); !slices.Equal(got, tc.wantUndone) {
				t.Errorf("undo calls: got %v, want %v", got, tc.wantUndone)
			}
			evs := rg.pub.All()
			if tc.want == Dead {
				if len(evs) != 1 || evs[0].Status != webhook.StatusDead || evs[0].LastError != tc.wantError {
					t.Errorf("outcomes: got %+v, want one DEAD with the reason", evs)
				}
			} else if len(evs) != 0 {
				t.Errorf("outcomes: got %+v, want none", evs)
			}
		})
	}
}

func TestTransientErrorsRetryWithBackoffUntilTheLimit(t *testing.T) {
	fail := true
	rg := newRig(t, func(id string) error {
		if fail && id == "a/one" {
			return errors.New("status 503")
		}
		return nil
	}, nil, func(c *Config) { c.MaxAttempts = 3; c.RetryBase = 2 * time.Second; c.RetryCap = 5 * time.Second })
	rg.failedWithSteps()
	var waits []time.Duration
	for attempt := 1; attempt <= 3; attempt++ {
		res := rg.c.Handle(context.Background(), message(t, envelope()))
		if attempt < 3 {
			if res.Verdict != kernel.Retried || res.Ack || res.Attempt != attempt {
				t.Fatalf("attempt %d: got %s (ack %v) on attempt %d, want retried", attempt, res.Verdict, res.Ack, res.Attempt)
			}
			d, _ := rg.queue.Visibility("rh1")
			waits = append(waits, d)
			continue
		}
		if res.Verdict != Dead || !res.Ack {
			t.Fatalf("attempt 3: got %s, want dead", res.Verdict)
		}
	}
	// The jitter returns its bound less 1ns: the ceiling, min(cap, base·2^(n-1)).
	if want := []time.Duration{2 * time.Second, 4 * time.Second}; !slices.Equal(waits, want) {
		t.Errorf("visibility: got %v, want %v", waits, want)
	}
	rec := rg.store.Record(key)
	if rec.Status != webhook.StatusDead || rec.LastError != "compensation attempts exhausted (3): undo a/one: status 503" {
		t.Errorf("record: got %s %q", rec.Status, rec.LastError)
	}
	// Each attempt resumed: a/three and b/two were undone once.
	if got, want := rg.undone(), []string{"a/three", "b/two", "a/one", "a/one", "a/one"}; !slices.Equal(got, want) {
		t.Errorf("undo calls: got %v, want %v", got, want)
	}
	if c := rg.metrics.Counts(); c[MetricCompensationRetried] != 2 || c[MetricDead] != 1 || c[MetricUndoSkipped] != 4 {
		t.Errorf("metrics: got %v", c)
	}
}

func TestLiveLeaseComesBack(t *testing.T) {
	for _, st := range []webhook.Status{webhook.StatusProcessing, webhook.StatusCompensating} {
		t.Run(st.String(), func(t *testing.T) {
			rg := newRig(t, nil, nil)
			rg.failedWithSteps()
			rg.store.Update(key, func(r *store.Record) {
				r.Status, r.LeaseOwner, r.LeaseUntil = st, "other", rg.clock.Now().Add(10*time.Second).UnixMilli()
			})
			res := rg.c.Handle(context.Background(), message(t, envelope()))
			if res.Verdict != kernel.Busy || res.Ack || res.RetryAfter != 11*time.Second {
				t.Fatalf("got %s (ack %v) after %v, want busy, not acked, back after 11s", res.Verdict, res.Ack, res.RetryAfter)
			}
			if d, ok := rg.queue.Visibility("rh1"); !ok || d != 11*time.Second {
				t.Errorf("visibility: got %v (%v), want 11s", d, ok)
			}
			if rec := rg.store.Record(key); rec.Status != st || rec.LeaseOwner != "other" || len(rg.undone()) != 0 {
				t.Errorf("record changed: %+v; undos %v", rec, rg.undone())
			}
			// On its return, after the lease, it is compensated.
			rg.store.Update(key, func(r *store.Record) { r.Status, r.LeaseOwner = webhook.StatusFailed, "" })
			if res := rg.c.Handle(context.Background(), message(t, envelope())); res.Verdict != Compensated {
				t.Errorf("on its return: got %s, want compensated", res.Verdict)
			}
		})
	}
}

func TestMalformedIsKeptForAnOperator(t *testing.T) {
	rg := newRig(t, nil, nil)
	for _, body := range []string{`not json`, `{"provider":"line"}`} {
		res := rg.c.Handle(context.Background(), kernel.Message{MessageID: "m", ReceiptHandle: "rh-bad", Body: []byte(body)})
		if res.Verdict != kernel.Malformed || res.Ack {
			t.Errorf("%s: got %s (ack %v), want malformed, not acked", body, res.Verdict, res.Ack)
		}
		if d, _ := rg.queue.Visibility("rh-bad"); d != webhook.MaxQueueDelay {
			t.Errorf("%s: visibility %v, want %v", body, d, webhook.MaxQueueDelay)
		}
	}
	if rg.store.Count("AcquireCompensationGeneration") != 0 {
		t.Error("a malformed message reached the store")
	}
}

func TestPayloadFromTheRecord(t *testing.T) {
	rg := newRig(t, nil, nil)
	rg.failedWithSteps()
	rg.store.Update(key, func(r *store.Record) { r.Payload = store.Payload(`{"userId":"from-record"}`) })
	env := envelope()
	env.Payload, env.PayloadInRecord = nil, true
	rg.c.Handle(context.Background(), message(t, env))
	rg.mu.Lock()
	defer rg.mu.Unlock()
	if len(rg.calls) == 0 || string(rg.calls[0].Envelope.Payload) != `{"userId":"from-record"}` || rg.calls[0].Envelope.PayloadInRecord {
		t.Errorf("got %+v, want the record's payload", rg.calls)
	}
}

func TestPanicIsRetried(t *testing.T) {
	rg := newRig(t, func(id string) error {
		if id == "a/three" {
			panic("nil map")
		}
		return nil
	}, nil)
	rg.failedWithSteps()
	res := rg.c.Handle(context.Background(), message(t, envelope()))
	var pe *registry.PanicError
	if res.Verdict != kernel.Retried || !errors.As(res.Err, &pe) {
		t.Errorf("got %s (%v), want retried with a PanicError", res.Verdict, res.Err)
	}
}

func TestLostLeaseDiscardsTheOutcome(t *testing.T) {
	rg := newRig(t, nil, nil)
	rg.failedWithSteps()
	rg.store.LoseSaves()
	res := rg.c.Handle(context.Background(), message(t, envelope()))
	if res.Verdict != kernel.LeaseLost || res.Ack || res.Event != nil {
		t.Errorf("got %s (ack %v, event %v), want lease-lost, not acked, no outcome", res.Verdict, res.Ack, res.Event)
	}
	if got := rg.undone(); !slices.Equal(got, []string{"a/three"}) {
		t.Errorf("undo calls: got %v, want only the first (then the lease was found lost)", got)
	}
	if rg.store.Count("Compensated")+rg.store.Count("Dead")+rg.store.Count("RetryCompensation") != 0 {
		t.Error("an outcome was written after the lease was lost")
	}
}

func TestHeartbeatLossCancelsTheUndo(t *testing.T) {
	started := make(chan struct{})
	rg := newRig(t, nil, func(r *process.Registry, rg *rig) {
		process.Handle(r, "slow", followType, noop, process.Compensate(func(ctx context.Context, u *process.Undo) error {
			close(started)
			<-ctx.Done()
			return ctx.Err()
		}))
	}, func(c *Config) { c.LeaseDuration = 3 * time.Millisecond })
	rg.store.Seed(store.Record{Key: key, Status: webhook.StatusFailed})
	rg.step("slow", "s", rg.clock.Now(), "")
	rg.store.LoseHeartbeats()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res := rg.c.Handle(ctx, message(t, envelope()))
	<-started
	if res.Verdict != kernel.LeaseLost || !errors.Is(res.Err, registry.ErrLeaseLost) {
		t.Errorf("got %s (%v), want lease-lost", res.Verdict, res.Err)
	}
	if ctx.Err() != nil {
		t.Error("the undo ran until the test's deadline: the lost lease did not cancel it")
	}
}

func TestUndoTimeout(t *testing.T) {
	rg := newRig(t, nil, func(r *process.Registry, rg *rig) {
		process.Handle(r, "slow", followType, noop, process.Timeout(5*time.Millisecond), process.Compensate(
			func(ctx context.Context, u *process.Undo) error { <-ctx.Done(); return ctx.Err() }))
	})
	rg.store.Seed(store.Record{Key: key, Status: webhook.StatusFailed})
	rg.step("slow", "s", rg.clock.Now(), "")
	res := rg.c.Handle(context.Background(), message(t, envelope()))
	if res.Verdict != kernel.Retried || !errors.Is(res.Err, context.DeadlineExceeded) {
		t.Errorf("got %s (%v), want retried after the handler's timeout", res.Verdict, res.Err)
	}
}

func TestBatchPublishesOnce(t *testing.T) {
	rg := newRig(t, nil, nil)
	rg.failedWithSteps()
	other := envelope()
	other.Key = "line#acme#ev2"
	rg.store.Seed(store.Record{Key: other.Key, Status: webhook.StatusFailed, LastError: "x"})
	rg.store.Seed(store.Record{Key: "line#acme#done", Status: webhook.StatusSucceeded})
	done := envelope()
	done.Key = "line#acme#done"
	ms := []kernel.Message{message(t, envelope()), message(t, other), message(t, done), {MessageID: "bad", Body: []byte("x")}}
	for i := range ms {
		ms[i].MessageID = strings.Repeat("m", i+1)
	}
	results := rg.c.Batch(context.Background(), ms, 3)
	var got []kernel.Verdict
	for _, r := range results {
		got = append(got, r.Verdict)
	}
	if want := []kernel.Verdict{Compensated, Dead, kernel.Duplicate, kernel.Malformed}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if len(rg.pub.Batches()) != 1 || len(rg.pub.Batches()[0]) != 2 {
		t.Errorf("publish calls: got %v, want one call with two outcomes", rg.pub.Batches())
	}
}

func TestUndoHTTPClientSendsTheUndoKey(t *testing.T) {
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Header.Get(process.HeaderIdempotencyKey))
	}))
	defer srv.Close()
	rg := newRig(t, nil, func(r *process.Registry, rg *rig) {
		process.Handle(r, "http", followType, noop, process.Compensate(func(ctx context.Context, u *process.Undo) error {
			req, _ := http.NewRequestWithContext(ctx, http.MethodDelete, srv.URL+"/leads/1", nil)
			resp, err := u.HTTPClient().Do(req)
			if err != nil {
				return err
			}
			return resp.Body.Close()
		}))
	}, func(c *Config) { c.Transport = srv.Client().Transport })
	rg.store.Seed(store.Record{Key: key, Status: webhook.StatusFailed})
	rg.step("http", "create", rg.clock.Now(), "")
	if res := rg.c.Handle(context.Background(), message(t, envelope())); res.Verdict != Compensated {
		t.Fatalf("got %s (%v)", res.Verdict, res.Err)
	}
	if want := webhook.IdempotencyKey(key, "http", "$undo:create"); len(got) != 1 || got[0] != want {
		t.Errorf("got keys %v, want [%s]", got, want)
	}
}

func TestConfigValidate(t *testing.T) {
	ok := Config{Registry: process.NewRegistry(), Store: memtest.New(t, nil), Kernel: Kernel{Queue: &webhooktest.Queue{}}}
	if _, err := New(ok); err != nil {
		t.Fatal(err)
	}
	for name, mod := range map[string]func(*Config){
		"no registry": func(c *Config) { c.Registry = nil },
		"no store":    func(c *Config) { c.Store = nil },
		"no queue":    func(c *Config) { c.Queue = nil },
		"negative":    func(c *Config) { c.MaxAttempts = -1 },
		"cap too big": func(c *Config) { c.RetryCap = webhook.MaxQueueDelay + time.Second },
	} {
		c := ok
		mod(&c)
		if _, err := New(c); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// fakeRequeue records the envelopes sent back to the main queue.
type fakeRequeue struct {
	mu   sync.Mutex
	sent []webhook.Envelope
	err  error
}

func (q *fakeRequeue) Send(_ context.Context, envs []webhook.Envelope) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.err != nil {
		return q.err
	}
	q.sent = append(q.sent, envs...)
	return nil
}

// A dead letter whose record the processor never finished (SQS redrove it
// after maxReceiveCount receives) and that has nothing to compensate goes
// back to the main queue, its record RETRY, at most MaxRequeues times; then
// it is DEAD as before. A FAILED record with nothing to compensate is DEAD
// at once.
func TestRequeueOfARecordTheProcessorNeverFinished(t *testing.T) {
	for _, from := range []webhook.Status{webhook.StatusReceived, webhook.StatusRetry, webhook.StatusProcessing} {
		t.Run(from.String(), func(t *testing.T) {
			rq := &fakeRequeue{}
			rg := newRig(t, nil, nil, func(c *Config) { c.Requeue = rq })
			rg.store.Seed(store.Record{Key: key, Status: from, LeaseUntil: rg.clock.Now().Add(-time.Second).UnixMilli()})
			rg.step("c", "only", rg.clock.Now(), "") // journaled, no compensation: re-run skips it
			for n := 1; n <= DefaultMaxRequeues; n++ {
				res := rg.c.Handle(context.Background(), message(t, envelope()))
				if res.Verdict != Requeued || !res.Ack || res.Attempt != n {
					t.Fatalf("dead letter %d: got %s (ack %v, attempt %d, %v), want requeued", n, res.Verdict, res.Ack, res.Attempt, res.Err)
				}
				rec := rg.store.Record(key)
				if rec.Status != webhook.StatusRetry || !strings.Contains(rec.LastError, "requeued by the compensator") {
					t.Fatalf("record after requeue %d: %s %q", n, rec.Status, rec.LastError)
				}
			}
			if len(rq.sent) != DefaultMaxRequeues || rq.sent[0].Key != key || string(rq.sent[0].Payload) != `{"userId":"U1"}` {
				t.Fatalf("requeued %d envelopes: %+v", len(rq.sent), rq.sent)
			}
			if len(rg.pub.All()) != 0 {
				t.Errorf("a requeue published an outcome: %+v", rg.pub.All())
			}
			res := rg.c.Handle(context.Background(), message(t, envelope()))
			if res.Verdict != Dead || !res.Ack {
				t.Fatalf("after %d requeues: got %s, want dead", DefaultMaxRequeues, res.Verdict)
			}
			if rec := rg.store.Record(key); rec.Status != webhook.StatusDead || !strings.HasPrefix(rec.LastError, "nothing to compensate: requeued by the compensator") {
				t.Errorf("record: %s %q", rec.Status, rec.LastError)
			}
		})
	}
	t.Run("FAILED is not requeued", func(t *testing.T) {
		rq := &fakeRequeue{}
		rg := newRig(t, nil, nil, func(c *Config) { c.Requeue = rq })
		rg.store.Seed(store.Record{Key: key, Status: webhook.StatusFailed, LastError: "permanent: status 400"})
		if res := rg.c.Handle(context.Background(), message(t, envelope())); res.Verdict != Dead || len(rq.sent) != 0 {
			t.Errorf("got %s with %d requeued, want dead and none", res.Verdict, len(rq.sent))
		}
	})
	t.Run("an event older than RequeueWithin is not requeued", func(t *testing.T) {
		rq := &fakeRequeue{}
		rg := newRig(t, nil, nil, func(c *Config) { c.Requeue = rq; c.RequeueWithin = 10 * time.Minute })
		rg.store.Seed(store.Record{Key: key, Status: webhook.StatusRetry}) // received 1,000 s before the clock
		if res := rg.c.Handle(context.Background(), message(t, envelope())); res.Verdict != Dead || len(rq.sent) != 0 {
			t.Errorf("got %s with %d requeued, want dead and none", res.Verdict, len(rq.sent))
		}
	})
	t.Run("a failed send leaves the dead letter to come back", func(t *testing.T) {
		rq := &fakeRequeue{err: errors.New("sqs down")}
		rg := newRig(t, nil, nil, func(c *Config) { c.Requeue = rq })
		rg.store.Seed(store.Record{Key: key, Status: webhook.StatusRetry})
		res := rg.c.Handle(context.Background(), message(t, envelope()))
		if res.Verdict != kernel.Errored || res.Ack {
			t.Fatalf("got %s (ack %v), want errored, not acknowledged", res.Verdict, res.Ack)
		}
		if rec := rg.store.Record(key); rec.Status != webhook.StatusRetry {
			t.Errorf("record %s, want RETRY (the next dead letter, or the sweeper, sends it)", rec.Status)
		}
		rq.err = nil
		if res := rg.c.Handle(context.Background(), message(t, envelope())); res.Verdict != Requeued || len(rq.sent) != 1 {
			t.Errorf("the dead letter's return: got %s with %d sent, want requeued", res.Verdict, len(rq.sent))
		}
	})
}

// A step run again after its undo (a replay of a COMPENSATED event) is
// undone again, under the undo key of its run, and its undo journaled with
// that run; an undo journaled for that run is not run again.
func TestRunAfterAnUndoIsUndoneAgain(t *testing.T) {
	for _, tc := range []struct {
		name     string
		undoRun  int // the Run of the journaled undo of a/one (run 1 now)
		wantUndo bool
	}{
		{"its undo undid the earlier run", 0, true},
		{"its own undo is journaled", 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rg := newRig(t, nil, nil)
			rg.store.Seed(store.Record{Key: key, Status: webhook.StatusFailed, LastError: "x"})
			t0 := rg.clock.Now().Add(-time.Hour)
			rg.store.SeedJournal(key, webhook.JournalEntry{Handler: "a", Step: "$undo:one", CompletedAt: t0, Run: tc.undoRun},
				webhook.JournalEntry{Handler: "a", Step: "one", CompletedAt: t0.Add(time.Minute), Run: 1})

			res := rg.c.Handle(context.Background(), message(t, envelope()))
			if res.Verdict != Compensated {
				t.Fatalf("got %s (%v), want compensated", res.Verdict, res.Err)
			}
			if !tc.wantUndo {
				if len(rg.undone()) != 0 || !slices.Equal(res.Skipped, []string{"a/one"}) {
					t.Errorf("undo calls %v, skipped %v; want none, a/one skipped", rg.undone(), res.Skipped)
				}
				return
			}
			rg.mu.Lock()
			calls := slices.Clone(rg.calls)
			rg.mu.Unlock()
			want := webhook.RunKey(key, "a", "$undo:one", 1)
			if len(calls) != 1 || calls[0].IdempotencyKey != want || want == webhook.IdempotencyKey(key, "a", "$undo:one") {
				t.Fatalf("undo calls %d, want one with the undo key of run 1 %s", len(calls), want)
			}
			if got, ok := rg.store.Entry(key, "a", "$undo:one"); !ok || got.Run != 1 {
				t.Errorf("undo journaled for run %d (journaled: %v), want 1", got.Run, ok)
			}
		})
	}
}

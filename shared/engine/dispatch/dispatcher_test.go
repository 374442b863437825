package dispatch

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"regexp"
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

type rig struct {
	reg     *process.Registry
	store   *memtest.Table
	queue   *webhooktest.Queue
	pub     *webhooktest.Outcomes
	metrics *obs.Metrics
	d       *Dispatcher
}

func newRig(t *testing.T, mutate func(*Config), register func(r *process.Registry)) *rig {
	t.Helper()
	rg := &rig{reg: process.NewRegistry(), store: memtest.New(t, nil), queue: &webhooktest.Queue{}, pub: &webhooktest.Outcomes{},
		metrics: obs.NewMetrics(&strings.Builder{}, "test", nil)}
	register(rg.reg)
	cfg := Config{Registry: rg.reg, Store: rg.store, DLQ: rg.queue,
		Kernel: Kernel{Queue: rg.queue, Publisher: rg.pub, Outcomes: kernel.OutcomesEach, Metrics: rg.metrics, RetryBase: time.Second,
			RetryCap: time.Minute, MaxAttempts: 3, Jitter: func(n int64) int64 { return n - 1 }}}
	if mutate != nil {
		mutate(&cfg)
	}
	d, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rg.d = d
	return rg
}

func TestOutcomes(t *testing.T) {
	errBoom := errors.New("boom")
	tests := []struct {
		name        string
		status      webhook.Status // record status before
		attempts    int            // attempts already made
		fn          func(context.Context, *process.Event[follow]) error
		wantVerdict Verdict
		wantAck     bool
		wantStatus  webhook.Status
		wantDLQ     string // reason substring; "" = no dead letter
		wantVis     time.Duration
	}{
		{name: "nil is success", status: webhook.StatusReceived, fn: func(context.Context, *process.Event[follow]) error { return nil },
			wantVerdict: Succeeded, wantAck: true, wantStatus: webhook.StatusSucceeded},
		{name: "an error is retried with backoff", status: webhook.StatusReceived,
			fn:          func(context.Context, *process.Event[follow]) error { return errBoom },
			wantVerdict: Retried, wantStatus: webhook.StatusRetry, wantVis: time.Second},
		{name: "the second attempt backs off twice the base", status: webhook.StatusRetry, attempts: 1,
			fn:          func(context.Context, *process.Event[follow]) error { return errBoom },
			wantVerdict: Retried, wantStatus: webhook.StatusRetry, wantVis: 2 * time.Second},
		{name: "permanent goes to the DLQ at once", status: webhook.StatusReceived,
			fn:          func(context.Context, *process.Event[follow]) error { return process.Permanent(errBoom) },
			wantVerdict: Failed, wantAck: true, wantStatus: webhook.StatusFailed, wantDLQ: "permanent: boom"},
		{name: "exhausted attempts go to the DLQ", status: webhook.StatusRetry, attempts: 2,
			fn:          func(context.Context, *process.Event[follow]) error { return errBoom },
			wantVerdict: Failed, wantAck: true, wantStatus: webhook.StatusFailed, wantDLQ: "boom"},
		{name: "a panic is retried", status: webhook.StatusReceived,
			fn:          func(context.Context, *process.Event[follow]) error { panic("kaput") },
			wantVerdict: Retried, wantStatus: webhook.StatusRetry, wantVis: time.Second},
		{name: "a terminal record is a duplicate", status: webhook.StatusSucceeded,
			fn:          func(context.Context, *process.Event[follow]) error { t.Error("handler ran"); return nil },
			wantVerdict: Duplicate, wantAck: true, wantStatus: webhook.StatusSucceeded},
		{name: "a FAILED record is dead-lettered", status: webhook.StatusFailed,
			fn:          func(context.Context, *process.Event[follow]) error { t.Error("handler ran"); return nil },
			wantVerdict: DeadLettered, wantAck: true, wantStatus: webhook.StatusFailed, wantDLQ: "record FAILED"},
		{name: "a payload that cannot decode is permanent", status: webhook.StatusReceived,
			fn:          nil, // see below: payload is a string
			wantVerdict: Failed, wantAck: true, wantStatus: webhook.StatusFailed, wantDLQ: "decode line/follow payload"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fn := tt.fn
			var payload any = follow{UserID: "U1"}
			if fn == nil {
				fn = func(context.Context, *process.Event[follow]) error { return nil }
				payload = "not an object"
			}
			rg := newRig(t, nil, func(r *process.Registry) { process.Handle(r, "crm.follow", followType, fn) })
			rg.store.Seed(store.Record{Key: "k1", Status: tt.status, Attempts: int64(tt.attempts)})
			res := rg.d.Handle(context.Background(), delivery("k1", "line", "follow", payload))
			if res.Verdict != tt.wantVerdict || res.Ack != tt.wantAck {
				t.Fatalf("got verdict %v ack %v (err %v), want %v ack %v", res.Verdict, res.Ack, res.Err, tt.wantVerdict, tt.wantAck)
			}
			if got := rg.store.Record("k1").Status; got != tt.wantStatus {
				t.Errorf("got status %s, want %s", got, tt.wantStatus)
			}
			dead := rg.queue.DeadLetters()
			switch {
			case tt.wantDLQ == "" && len(dead) > 0:
				t.Errorf("got dead letters %+v, want none", dead)
			case tt.wantDLQ != "" && (len(dead) != 1 || !strings.Contains(dead[0].Reason, tt.wantDLQ) || dead[0].Key != "k1"):
				t.Errorf("got dead letters %+v, want one for k1 with reason containing %q", dead, tt.wantDLQ)
			}
			if got, _ := rg.queue.Visibility("rh-k1"); got != tt.wantVis {
				t.Errorf("got visibility %v, want %v", got, tt.wantVis)
			}
		})
	}
}

func TestPanicIsAPanicError(t *testing.T) {
	rg := newRig(t, nil, func(r *process.Registry) {
		process.Handle(r, "p", followType, func(context.Context, *process.Event[follow]) error { panic("kaput") })
	})
	rg.store.Seed(store.Record{Key: "k", Status: webhook.StatusReceived})
	res := rg.d.Handle(context.Background(), delivery("k", "line", "follow", follow{}))
	var pe *registry.PanicError
	if !errors.As(res.Err, &pe) || pe.Value != "kaput" || !strings.Contains(string(pe.Stack), "runHandler") {
		t.Fatalf("got err %v, want a *registry.PanicError with value and stack", res.Err)
	}
	if got := rg.store.Record("k").LastError; got != "panic: kaput" {
		t.Errorf("got lastError %q, want %q", got, "panic: kaput")
	}
}

func TestBusyLeaseComesBackAfterIt(t *testing.T) {
	rg := newRig(t, nil, func(r *process.Registry) {
		process.Handle(r, "h", followType, func(context.Context, *process.Event[follow]) error { return nil })
	})
	rg.store.Seed(store.Record{Key: "k", Status: webhook.StatusProcessing})
	rg.store.Update("k", func(r *store.Record) { r.LeaseUntil = time.Now().Add(10 * time.Second).UnixMilli() })
	res := rg.d.Handle(context.Background(), delivery("k", "line", "follow", follow{}))
	if res.Verdict != Busy || res.Ack {
		t.Fatalf("got %v ack %v, want busy, not acked", res.Verdict, res.Ack)
	}
	if v, _ := rg.queue.Visibility("rh-k"); v < 10*time.Second || v > 12*time.Second {
		t.Errorf("got visibility %v, want the remaining lease (~10s) plus a second", v)
	}
	// An expired lease is taken over.
	rg.store.Update("k", func(r *store.Record) { r.LeaseUntil = time.Now().Add(-time.Millisecond).UnixMilli() })
	if res := rg.d.Handle(context.Background(), delivery("k", "line", "follow", follow{})); res.Verdict != Succeeded {
		t.Errorf("after expiry: got %v, want succeeded", res.Verdict)
	}
}

func TestUnknownType(t *testing.T) {
	for _, toDLQ := range []bool{false, true} {
		rg := newRig(t, func(c *Config) { c.UnhandledToDLQ = toDLQ }, func(*process.Registry) {})
		rg.store.Seed(store.Record{Key: "k", Status: webhook.StatusReceived})
		res := rg.d.Handle(context.Background(), delivery("k", "line", "beacon", follow{}))
		wantVerdict, wantStatus, wantDead := Unhandled, webhook.StatusSucceeded, 0
		if toDLQ {
			wantVerdict, wantStatus, wantDead = Failed, webhook.StatusFailed, 1
		}
		if res.Verdict != wantVerdict || !res.Ack {
			t.Errorf("toDLQ=%v: got %v ack %v, want %v acked", toDLQ, res.Verdict, res.Ack, wantVerdict)
		}
		if got := rg.store.Record("k").Status; got != wantStatus {
			t.Errorf("toDLQ=%v: got status %s, want %s", toDLQ, got, wantStatus)
		}
		if got := len(rg.queue.DeadLetters()); got != wantDead {
			t.Errorf("toDLQ=%v: got %d dead letters, want %d", toDLQ, got, wantDead)
		}
		if got := rg.metrics.Counts()[MetricUnhandled]; got != 1 {
			t.Errorf("toDLQ=%v: got Unhandled %v, want 1", toDLQ, got)
		}
	}
}

func TestMalformedBodyGoesToDLQ(t *testing.T) {
	rg := newRig(t, nil, func(*process.Registry) {})
	for _, body := range []string{"{", `{"key":""}`, `[]`} {
		res := rg.d.Handle(context.Background(), Message{MessageID: "m", Body: []byte(body)})
		if res.Verdict != Malformed || !res.Ack {
			t.Errorf("body %q: got %v ack %v, want malformed, acked", body, res.Verdict, res.Ack)
		}
	}
	if got := len(rg.queue.DeadLetters()); got != 3 {
		t.Errorf("got %d dead letters, want 3", got)
	}
}

func TestMissingRecordIsAcked(t *testing.T) {
	rg := newRig(t, nil, func(*process.Registry) {})
	res := rg.d.Handle(context.Background(), delivery("nope", "line", "follow", follow{}))
	if res.Verdict != Absent || !res.Ack {
		t.Errorf("got %v ack %v, want absent, acked", res.Verdict, res.Ack)
	}
}

func TestDuplicateNamePanics(t *testing.T) {
	r := process.NewRegistry()
	fn := func(context.Context, *process.Event[follow]) error { return nil }
	process.Handle(r, "crm.follow", followType, fn)
	defer func() {
		if v := recover(); v == nil || !strings.Contains(v.(string), `"crm.follow" registered twice`) {
			t.Errorf("got panic %v, want a duplicate-name panic", v)
		}
	}()
	process.Handle(r, "crm.follow", webhook.NewType[follow]("wecom", "other"), fn)
}

func TestBadRegistrationsPanic(t *testing.T) {
	fn := func(context.Context, *process.Event[follow]) error { return nil }
	for name, f := range map[string]func(){
		"empty name":   func() { process.Handle(process.NewRegistry(), "", followType, fn) },
		"hash in name": func() { process.Handle(process.NewRegistry(), "a#b", followType, fn) },
		"nil fn":       func() { process.Handle[follow](process.NewRegistry(), "a", followType, nil) },
		"nil registry": func() { process.Handle(nil, "a", followType, fn) },
		"zero type":    func() { process.Handle(process.NewRegistry(), "a", webhook.Type[follow]{}, fn) },
		"MaxAttempts0": func() { process.MaxAttempts(0) },
		"Timeout0":     func() { process.Timeout(0) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}

func TestIdempotencyKey(t *testing.T) {
	k := webhook.IdempotencyKey("line#t1#e1", "crm.lead", "create")
	if !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`).MatchString(k) {
		t.Errorf("got %q, want a version-8 UUID", k)
	}
	if k2 := webhook.IdempotencyKey("line#t1#e1", "crm.lead", "create"); k2 != k {
		t.Errorf("not deterministic: %q then %q", k, k2)
	}
	seen := map[string]bool{k: true}
	for _, in := range [][3]string{{"line#t1#e1", "crm.lead", "create2"}, {"line#t1#e1", "crm.lea", "dcreate"},
		{"line#t1#e2", "crm.lead", "create"}, {"line#t1#e1c", "rm.lead", "create"}} {
		got := webhook.IdempotencyKey(in[0], in[1], in[2])
		if seen[got] {
			t.Errorf("%v: key %q collides", in, got)
		}
		seen[got] = true
	}
}

func TestStepsAreJournaledAndReplayed(t *testing.T) {
	var mu sync.Mutex
	runs := map[string]int{}
	failOnce := true
	rg := newRig(t, nil, func(r *process.Registry) {
		process.Handle(r, "crm.lead", followType, func(ctx context.Context, ev *process.Event[follow]) error {
			id, err := process.StepResult(ctx, ev, "create", func(ctx context.Context, key string) (string, error) {
				mu.Lock()
				runs["create"]++
				mu.Unlock()
				if k, _ := registry.IdempotencyKey(ctx); k != key {
					t.Errorf("ctx key %q, want %q", k, key)
				}
				return "lead-42", nil
			})
			if err != nil {
				return err
			}
			if id != "lead-42" {
				t.Errorf("got result %q, want lead-42 (also on replay)", id)
			}
			return ev.Step(ctx, "notify", func(ctx context.Context, key string) error {
				mu.Lock()
				defer mu.Unlock()
				runs["notify"]++
				if failOnce {
					failOnce = false
					return errors.New("notify down")
				}
				return nil
			})
		})
	})
	rg.store.Seed(store.Record{Key: "k", Status: webhook.StatusReceived})
	if res := rg.d.Handle(context.Background(), delivery("k", "line", "follow", follow{})); res.Verdict != Retried {
		t.Fatalf("attempt 1: got %v, want retried", res.Verdict)
	}
	if n := rg.store.Count("Journal"); n != 0 {
		t.Errorf("attempt 1 read the journal %d times, want 0", n)
	}
	if res := rg.d.Handle(context.Background(), delivery("k", "line", "follow", follow{})); res.Verdict != Succeeded {
		t.Fatalf("attempt 2: got %v (%v), want succeeded", res.Verdict, res.Err)
	}
	if runs["create"] != 1 || runs["notify"] != 2 {
		t.Errorf("got runs %v, want create 1, notify 2", runs)
	}
	if n := rg.store.Count("Journal"); n != 1 {
		t.Errorf("attempt 2 read the journal %d times, want 1", n)
	}
	if got := rg.metrics.Counts()[MetricStepSkipped]; got != 1 {
		t.Errorf("got StepSkipped %v, want 1", got)
	}
}

func TestCompletedHandlersAreSkippedOnRetry(t *testing.T) {
	var aRuns, bRuns int
	rg := newRig(t, nil, func(r *process.Registry) {
		process.Handle(r, "a", followType, func(context.Context, *process.Event[follow]) error { aRuns++; return nil })
		process.Handle(r, "b", followType, func(context.Context, *process.Event[follow]) error {
			bRuns++
			if bRuns == 1 {
				return errors.New("b down")
			}
			return nil
		})
	})
	rg.store.Seed(store.Record{Key: "k", Status: webhook.StatusReceived})
	rg.d.Handle(context.Background(), delivery("k", "line", "follow", follow{}))
	res := rg.d.Handle(context.Background(), delivery("k", "line", "follow", follow{}))
	if res.Verdict != Succeeded || aRuns != 1 || bRuns != 2 {
		t.Errorf("got %v, a ran %d, b ran %d; want succeeded, 1, 2", res.Verdict, aRuns, bRuns)
	}
}

func TestStepNames(t *testing.T) {
	rg := newRig(t, nil, func(r *process.Registry) {
		process.Handle(r, "h", followType, func(ctx context.Context, ev *process.Event[follow]) error {
			for _, bad := range []string{"", "a#b", "$done"} {
				if err := ev.Step(ctx, bad, func(context.Context, string) error { return nil }); !process.IsPermanent(err) {
					t.Errorf("step %q: got %v, want a permanent error", bad, err)
				}
			}
			if err := ev.Step(ctx, "x", func(context.Context, string) error { return nil }); err != nil {
				t.Error(err)
			}
			return ev.Step(ctx, "x", func(context.Context, string) error { return nil })
		})
	})
	rg.store.Seed(store.Record{Key: "k", Status: webhook.StatusReceived})
	if res := rg.d.Handle(context.Background(), delivery("k", "line", "follow", follow{})); res.Verdict != Failed {
		t.Errorf("a step name used twice: got %v, want failed", res.Verdict)
	}
}

func TestLostLeaseCancelsTheHandler(t *testing.T) {
	rg := newRig(t, func(c *Config) { c.LeaseDuration = 30 * time.Millisecond }, func(r *process.Registry) {
		process.Handle(r, "slow", followType, func(ctx context.Context, ev *process.Event[follow]) error {
			<-ctx.Done()
			if !errors.Is(context.Cause(ctx), registry.ErrLeaseLost) {
				t.Errorf("got cause %v, want ErrLeaseLost", context.Cause(ctx))
			}
			return nil // the outcome must be discarded anyway
		})
	})
	rg.store.Seed(store.Record{Key: "k", Status: webhook.StatusReceived})
	rg.store.LoseHeartbeats()
	res := rg.d.Handle(context.Background(), delivery("k", "line", "follow", follow{}))
	// One lost-lease behaviour for both engines: Err is ErrLeaseLost.
	if res.Verdict != LeaseLost || res.Ack || res.Event != nil || !errors.Is(res.Err, registry.ErrLeaseLost) {
		t.Fatalf("got %v ack %v (%v), want lease-lost with ErrLeaseLost, not acked", res.Verdict, res.Ack, res.Err)
	}
	if n := rg.store.Count("Complete") + rg.store.Count("CompleteSteps") + rg.store.Count("Retry") + rg.store.Count("Fail"); n != 0 {
		t.Errorf("got %d closing writes, want 0", n)
	}
	if got := rg.metrics.Counts()[kernel.MetricLeaseLost]; got != 1 {
		t.Errorf("got LeaseLost %v, want 1", got)
	}
}

func TestLeaseNeverOutlivesTheDeadline(t *testing.T) {
	var until time.Time
	st := memtest.New(t, nil)
	rg := newRig(t, func(c *Config) { c.Store = &leaseSpy{Table: st, until: &until} }, func(r *process.Registry) {
		process.Handle(r, "h", followType, func(context.Context, *process.Event[follow]) error { return nil })
	})
	st.Seed(store.Record{Key: "k", Status: webhook.StatusReceived})
	deadline := time.Now().Add(20 * time.Second)
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	rg.d.Handle(ctx, delivery("k", "line", "follow", follow{}))
	if !until.Equal(deadline) {
		t.Errorf("got leaseUntil %v, want the deadline %v", until, deadline)
	}
}

type leaseSpy struct {
	*memtest.Table
	until *time.Time
}

func (s *leaseSpy) AcquireGeneration(ctx context.Context, key string, _ int64, owner string, until time.Time) (webhook.Acquisition, error) {
	*s.until = until
	return s.Table.Acquire(ctx, key, owner, until)
}

func TestHandlerTimeout(t *testing.T) {
	rg := newRig(t, nil, func(r *process.Registry) {
		process.Handle(r, "h", followType, func(ctx context.Context, ev *process.Event[follow]) error {
			<-ctx.Done()
			return ctx.Err()
		}, process.Timeout(10*time.Millisecond))
	})
	rg.store.Seed(store.Record{Key: "k", Status: webhook.StatusReceived})
	res := rg.d.Handle(context.Background(), delivery("k", "line", "follow", follow{}))
	if res.Verdict != Retried || !errors.Is(res.Err, context.DeadlineExceeded) {
		t.Errorf("got %v (%v), want retried with deadline exceeded", res.Verdict, res.Err)
	}
}

func TestHTTPClientSetsIdempotencyKeyInsideSteps(t *testing.T) {
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Header.Get(process.HeaderIdempotencyKey))
		mu.Unlock()
	}))
	defer srv.Close()
	call := func(ctx context.Context, c *http.Client) error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, nil)
		resp, err := c.Do(req)
		if err != nil {
			return err
		}
		return resp.Body.Close()
	}
	rg := newRig(t, nil, func(r *process.Registry) {
		process.Handle(r, "crm.lead", followType, func(ctx context.Context, ev *process.Event[follow]) error {
			c := ev.HTTPClient()
			if err := call(ctx, c); err != nil { // outside a step: no header
				return err
			}
			return ev.Step(ctx, "create", func(ctx context.Context, _ string) error { return call(ctx, c) })
		})
	})
	rg.store.Seed(store.Record{Key: "line#t1#e1", Status: webhook.StatusReceived})
	if res := rg.d.Handle(context.Background(), delivery("line#t1#e1", "line", "follow", follow{})); res.Verdict != Succeeded {
		t.Fatalf("got %v (%v)", res.Verdict, res.Err)
	}
	want := []string{"", webhook.IdempotencyKey("line#t1#e1", "crm.lead", "create")}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("got headers %q, want %q", got, want)
	}
}

func TestProcessBatchPublishesOnce(t *testing.T) {
	rg := newRig(t, nil, func(r *process.Registry) {
		process.Handle(r, "h", followType, func(context.Context, *process.Event[follow]) error { return nil })
	})
	var ds []Message
	for _, k := range []string{"a", "b", "c"} {
		rg.store.Seed(store.Record{Key: k, Status: webhook.StatusReceived})
		ds = append(ds, delivery(k, "line", "follow", follow{}))
		ds = append(ds, delivery(k, "line", "follow", follow{})) // duplicate in the same batch
	}
	results := rg.d.Batch(context.Background(), ds, 4)
	var ok int
	for i, r := range results {
		if r.MessageID != ds[i].MessageID {
			t.Errorf("result %d is for %s, want %s", i, r.MessageID, ds[i].MessageID)
		}
		if r.Verdict == Succeeded {
			ok++
		}
	}
	if ok != 3 || len(rg.pub.All()) != 3 {
		t.Errorf("got %d succeeded and %d events, want 3 and 3", ok, len(rg.pub.All()))
	}
	for _, ev := range rg.pub.All() {
		if ev.Status != webhook.StatusSucceeded || ev.Tenant != "t1" || ev.Attempts != 1 {
			t.Errorf("got event %+v", ev)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	if _, err := New(Config{}); err == nil {
		t.Error("empty config: no error")
	}
	if _, err := New(Config{Registry: process.NewRegistry(), Store: memtest.New(t, nil), DLQ: &webhooktest.Queue{},
		Kernel: Kernel{Queue: &webhooktest.Queue{}, RetryCap: 13 * time.Hour}}); err == nil {
		t.Error("RetryCap above 12h: no error")
	}
}

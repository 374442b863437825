package kernel

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/base/obs"
	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/base/webhook/webhooktest"
)

var testNames = Names{Package: "test", Acquire: "acquire it", Duplicate: "was done", Busy: "is busy", Missing: "is gone",
	LeaseLost: "lost it", Panicked: "it panicked", AttemptLatency: "AttemptTime", Stale: "is stale", StaleMetric: "StaleTest"}

// rig is an Engine on fakes.
type rig struct {
	clock   *webhooktest.Clock
	phase   *fakePhase
	queue   *webhooktest.Queue
	pub     *webhooktest.Outcomes
	metrics *obs.Metrics
	emf     *bytes.Buffer
	logs    *webhooktest.LockedBuffer
	e       *Engine
}

func newRig(t *testing.T, names Names, mod ...func(*Config)) *rig {
	t.Helper()
	rg := &rig{clock: webhooktest.NewClock(time.UnixMilli(1_700_000_000_000)), queue: &webhooktest.Queue{}, pub: &webhooktest.Outcomes{},
		emf: &bytes.Buffer{}, logs: &webhooktest.LockedBuffer{},
		phase: &fakePhase{acq: webhook.Acquisition{Outcome: webhook.Acquired, Status: webhook.StatusReceived,
			Lease: webhook.Lease{Attempt: 2, Version: 3}}}}
	rg.metrics = obs.NewMetrics(rg.emf, "Test", nil)
	cfg := Config{Queue: rg.queue, Publisher: rg.pub, Outcomes: OutcomesEach, Metrics: rg.metrics, Now: rg.clock.Now,
		Logger: slog.New(slog.NewTextHandler(rg.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Jitter: func(n int64) int64 { return n - 1 }, LeaseDuration: time.Minute}
	for _, m := range mod {
		m(&cfg)
	}
	if err := cfg.Validate("test"); err != nil {
		t.Fatal(err)
	}
	rg.e = New(&cfg, rg.phase, rg.phase, names)
	return rg
}

const key = "line#acme#ev1"

func message(t *testing.T, id string) Message {
	t.Helper()
	b, err := json.Marshal(webhook.Envelope{Key: key, Provider: "line", Tenant: "acme", Type: "follow", TraceID: "tr",
		ReceivedAt: time.UnixMilli(1_699_999_000_000).UTC()})
	if err != nil {
		t.Fatal(err)
	}
	return Message{MessageID: id, ReceiptHandle: "rh-" + id, Body: b}
}

func TestAcquireSwitch(t *testing.T) {
	refused := webhook.AcquireFailedState
	for _, tc := range []struct {
		name       string
		acq        webhook.Acquisition
		acqErr     error
		refuse     bool
		want       Verdict
		wantAck    bool
		wantAfter  time.Duration
		wantMetric string
		wantLog    string
		wantErr    string
	}{
		{name: "a terminal record is a duplicate", acq: webhook.Acquisition{Outcome: webhook.AcquireDone, Status: webhook.StatusSucceeded},
			want: Duplicate, wantAck: true, wantMetric: MetricDuplicateDelivery, wantLog: "was done"},
		{name: "a live lease elsewhere comes back after it", acq: webhook.Acquisition{Outcome: webhook.AcquireBusy,
			Status: webhook.StatusProcessing, RetryAfter: 10 * time.Second},
			want: Busy, wantAfter: 11 * time.Second, wantMetric: MetricLeaseBusy, wantLog: "is busy"},
		{name: "a stale message is acknowledged, nothing run", acq: webhook.Acquisition{Outcome: webhook.AcquireStale,
			Status: webhook.StatusReceived, Generation: 1},
			want: Stale, wantAck: true, wantMetric: "StaleTest", wantLog: "is stale"},
		{name: "a missing record is acknowledged", acq: webhook.Acquisition{Outcome: webhook.AcquireMissing},
			want: Absent, wantAck: true, wantMetric: MetricMissing, wantLog: "is gone"},
		{name: "an outcome the phase takes", acq: webhook.Acquisition{Outcome: refused, Status: webhook.StatusFailed},
			refuse: true, want: DeadLettered, wantAck: true},
		{name: "an outcome nobody takes is an error", acq: webhook.Acquisition{Outcome: refused, Status: webhook.StatusFailed},
			want: Errored, wantLog: "acquire it", wantErr: "test: acquire " + key + ": unexpected outcome"},
		{name: "a failed call is an error", acqErr: errors.New("throttled"),
			want: Errored, wantLog: "acquire it", wantErr: "throttled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rg := newRig(t, testNames)
			rg.phase.acq, rg.phase.acqErr = tc.acq, tc.acqErr
			if tc.refuse {
				rg.phase.refuse = func(a *Attempt, res Result) (Result, bool) {
					if a.Acq.Outcome != refused || a.Env.Key != key || a.Message.MessageID != "m1" {
						t.Errorf("refused got %+v", a)
					}
					res.Verdict, res.Ack = DeadLettered, true
					return res, true
				}
			}
			res := rg.e.Handle(context.Background(), message(t, "m1"))
			if res.Verdict != tc.want || res.Ack != tc.wantAck || res.RetryAfter != tc.wantAfter || res.Key != key || res.MessageID != "m1" {
				t.Fatalf("got %+v, want %s (ack %v, after %v)", res, tc.want, tc.wantAck, tc.wantAfter)
			}
			if tc.wantErr == "" && res.Err != nil || tc.wantErr != "" && (res.Err == nil || !strings.Contains(res.Err.Error(), tc.wantErr)) {
				t.Errorf("got err %v, want %q", res.Err, tc.wantErr)
			}
			if res.From != tc.acq.Status {
				t.Errorf("got From %q, want %q", res.From, tc.acq.Status)
			}
			if tc.wantMetric != "" && rg.metrics.Counts()[tc.wantMetric] != 1 {
				t.Errorf("metrics %v, want %s 1", rg.metrics.Counts(), tc.wantMetric)
			}
			if d, ok := rg.queue.Visibility("rh-m1"); ok != (tc.wantAfter > 0) || d != tc.wantAfter {
				t.Errorf("visibility: got %v (%v), want %v", d, ok, tc.wantAfter)
			}
			if logs := rg.logs.String(); tc.wantLog != "" && !strings.Contains(logs, "msg=\""+tc.wantLog+"\"") &&
				!strings.Contains(logs, "msg="+tc.wantLog+" ") {
				t.Errorf("logs %q, want %q", logs, tc.wantLog)
			}
			if len(rg.phase.begun) != 0 || len(rg.pub.Batches()) != 0 {
				t.Errorf("began %d attempts and published %v; want none", len(rg.phase.begun), rg.pub.Batches())
			}
		})
	}
}

func TestMalformedGoesToThePhase(t *testing.T) {
	rg := newRig(t, testNames)
	rg.phase.check = func(env webhook.Envelope) error {
		if env.Provider == "" {
			return errors.New("missing provider")
		}
		return nil
	}
	for _, body := range []string{`not json`, `{"key":"k"}`} {
		res := rg.e.Handle(context.Background(), Message{MessageID: "bad", Body: []byte(body)})
		if res.Verdict != Malformed || res.MessageID != "bad" || res.Key != "" {
			t.Errorf("%s: got %+v, want malformed", body, res)
		}
	}
	if len(rg.phase.malformed) != 2 || !strings.Contains(rg.phase.malformed[1].Error(), "missing provider") {
		t.Errorf("phase saw %v", rg.phase.malformed)
	}
	if c := rg.metrics.Counts()[MetricMalformed]; c != 2 {
		t.Errorf("Malformed %v, want 2", c)
	}
}

func TestSettledAttemptPublishesItsOutcome(t *testing.T) {
	rg := newRig(t, testNames)
	var then bool
	rg.phase.settle = func(a *Attempt, err error) Settlement {
		return Settlement{Op: "complete", Write: func(ctx context.Context) (bool, error) {
			if _, ok := ctx.Deadline(); !ok {
				t.Error("the write's context has no deadline: want the finish context")
			}
			return true, nil
		}, Verdict: Succeeded, Ack: true, Event: a.Outcome(webhook.StatusSucceeded, ""),
			Then: func(ctx, fctx context.Context, res Result) Result { then = true; return res }}
	}
	res := rg.e.Handle(context.Background(), message(t, "m1"))
	if res.Verdict != Succeeded || !res.Ack || res.Err != nil || res.Attempt != 2 || !then {
		t.Fatalf("got %+v (then %v), want succeeded on attempt 2", res, then)
	}
	if !slices.Equal(res.Undone, []string{"h/s"}) {
		t.Errorf("the task's details: got %v", res.Undone)
	}
	ev := res.Event
	if ev == nil || ev.Key != key || ev.Provider != "line" || ev.Tenant != "acme" || ev.Type != "follow" || ev.TraceID != "tr" ||
		ev.Attempts != 2 || ev.Status != webhook.StatusSucceeded || !ev.At.Equal(rg.clock.Now()) {
		t.Fatalf("event %+v", ev)
	}
	if len(rg.pub.Batches()) != 1 || len(rg.pub.Batches()[0]) != 1 || rg.pub.Batches()[0][0].Key != key {
		t.Errorf("published %v, want the outcome once", rg.pub.Batches())
	}
	a := rg.phase.begun[0]
	if a.Lease.Owner == "" || !a.Lease.Until.Equal(rg.clock.Now().Add(time.Minute)) {
		t.Errorf("lease %+v, want an owner until now + LeaseDuration", a.Lease)
	}
	if err := rg.metrics.Flush(); err != nil || !strings.Contains(rg.emf.String(), `"AttemptTime"`) {
		t.Errorf("EMF %s (%v), want the attempt timed", rg.emf.String(), err)
	}
}

func TestRetryBacksOff(t *testing.T) {
	rg := newRig(t, testNames, func(c *Config) { c.RetryBase, c.RetryCap = time.Second, time.Minute })
	boom := errors.New("boom")
	rg.phase.work = func(context.Context, *Attempt) error { return boom }
	rg.phase.settle = func(a *Attempt, err error) Settlement {
		return Settlement{Op: "retry", Write: func(context.Context) (bool, error) { return true, nil }, Verdict: Retried}
	}
	res := rg.e.Handle(context.Background(), message(t, "m1"))
	// Attempt 2: the ceiling is base·2, and the jitter returns its bound less one.
	if res.Verdict != Retried || res.Ack || res.RetryAfter != 2*time.Second || !errors.Is(res.Err, boom) {
		t.Fatalf("got %+v, want retried after 2s with the work's error", res)
	}
	if d, _ := rg.queue.Visibility("rh-m1"); d != 2*time.Second {
		t.Errorf("visibility %v, want 2s", d)
	}
	if !slices.Equal(rg.phase.settled, []error{boom}) {
		t.Errorf("settled with %v, want the work's error", rg.phase.settled)
	}
}

func TestFailedWriteIsAnError(t *testing.T) {
	rg := newRig(t, testNames)
	rg.phase.settle = func(a *Attempt, err error) Settlement {
		return Settlement{Op: "set it", Write: func(context.Context) (bool, error) { return false, errors.New("throttled") },
			Verdict: Succeeded, Ack: true, Event: a.Outcome(webhook.StatusSucceeded, ""),
			Then: func(context.Context, context.Context, Result) Result {
				t.Error("Then after a failed write")
				return Result{}
			}}
	}
	res := rg.e.Handle(context.Background(), message(t, "m1"))
	if res.Verdict != Errored || res.Ack || res.Event != nil || res.Err == nil || res.Err.Error() != "throttled" {
		t.Fatalf("got %+v, want errored", res)
	}
	if !strings.Contains(rg.logs.String(), `msg="set it"`) || len(rg.pub.Batches()) != 0 {
		t.Errorf("logs %q, published %v", rg.logs.String(), rg.pub.Batches())
	}
}

// A lost lease is one behaviour for every phase: LeaseLost, no outcome, not
// acknowledged, Err the work's error or else ErrLeaseLost.
func TestLostLease(t *testing.T) {
	boom := errors.New("boom")
	for _, tc := range []struct {
		name     string
		work     error
		beatLost bool
		wantErr  error
		settles  int
	}{
		{name: "the fenced write finds it lost", wantErr: errLeaseLost, settles: 1},
		{name: "the fenced write finds it lost after the work failed", work: boom, wantErr: boom, settles: 1},
		{name: "the heartbeat finds it lost", beatLost: true, wantErr: errLeaseLost},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rg := newRig(t, testNames, func(c *Config) { c.LeaseDuration = 3 * time.Millisecond })
			rg.phase.beat = func() (bool, error) { return !tc.beatLost, nil }
			rg.phase.work = func(ctx context.Context, a *Attempt) error {
				if tc.beatLost {
					<-ctx.Done()
					if !errors.Is(context.Cause(ctx), errLeaseLost) || !a.Lost() {
						t.Errorf("cause %v, lost %v; want ErrLeaseLost", context.Cause(ctx), a.Lost())
					}
				}
				return tc.work
			}
			rg.phase.settle = func(a *Attempt, err error) Settlement {
				return Settlement{Op: "write", Write: func(context.Context) (bool, error) { return false, nil },
					Verdict: Succeeded, Ack: true, Event: a.Outcome(webhook.StatusSucceeded, "")}
			}
			res := rg.e.Handle(context.Background(), message(t, "m1"))
			if res.Verdict != LeaseLost || res.Ack || res.Event != nil || !errors.Is(res.Err, tc.wantErr) {
				t.Fatalf("got %+v, want lease-lost with %v", res, tc.wantErr)
			}
			if len(rg.phase.settled) != tc.settles || len(rg.pub.Batches()) != 0 {
				t.Errorf("settled %d times, published %v; want %d and none", len(rg.phase.settled), rg.pub.Batches(), tc.settles)
			}
			if rg.metrics.Counts()[MetricLeaseLost] != 1 || !strings.Contains(rg.logs.String(), `msg="lost it"`) {
				t.Errorf("metrics %v, logs %q", rg.metrics.Counts(), rg.logs.String())
			}
		})
	}
}

func TestGuard(t *testing.T) {
	rg := newRig(t, testNames, func(c *Config) { c.Timeout = 5 * time.Millisecond })
	var a *Attempt
	rg.phase.work = func(ctx context.Context, at *Attempt) error { a = at; return nil }
	rg.e.Handle(context.Background(), message(t, "m1"))
	ctx := context.Background()

	err := a.Guard(ctx, 0, a.Log, func(context.Context) error { panic("kaput") })
	var pe *panicError
	if !errors.As(err, &pe) || pe.Value != "kaput" || !strings.Contains(string(pe.Stack), "TestGuard") {
		t.Errorf("got %v, want a PanicError with the stack", err)
	}
	if !strings.Contains(rg.logs.String(), `msg="it panicked"`) {
		t.Errorf("logs %q, want the panic", rg.logs.String())
	}
	err = a.Guard(ctx, 0, a.Log, func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() })
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("got %v, want the Config.Timeout's deadline", err)
	}
	start := time.Now()
	err = a.Guard(ctx, time.Hour, a.Log, func(ctx context.Context) error {
		if dl, ok := ctx.Deadline(); !ok || dl.Sub(start) < 59*time.Minute {
			t.Errorf("deadline %v (%v), want the handler's own hour", dl, ok)
		}
		return nil
	})
	if err != nil {
		t.Errorf("got %v", err)
	}
	a.MarkLost()
	err = a.Guard(ctx, 0, a.Log, func(ctx context.Context) error { <-ctx.Done(); return nil })
	if !errors.Is(err, errLeaseLost) {
		t.Errorf("nil after the lease was lost: got %v, want ErrLeaseLost", err)
	}
}

func TestBatchPublishesOnceInOrder(t *testing.T) {
	rg := newRig(t, testNames)
	ms := []Message{message(t, "a"), {MessageID: "bad", Body: []byte("x")}, message(t, "c")}
	results := rg.e.Batch(context.Background(), ms, 2)
	var got []string
	for _, r := range results {
		got = append(got, r.MessageID+":"+r.Verdict.String())
	}
	if want := []string{"a:succeeded", "bad:malformed", "c:succeeded"}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if len(rg.pub.Batches()) != 1 || len(rg.pub.Batches()[0]) != 2 {
		t.Errorf("publish calls %v, want one with two outcomes", rg.pub.Batches())
	}
}

func TestPublishFailureIsCounted(t *testing.T) {
	rg := newRig(t, testNames)
	rg.pub.Fail(errors.New("bus down"))
	if res := rg.e.Handle(context.Background(), message(t, "m1")); res.Verdict != Succeeded || !res.Ack {
		t.Fatalf("got %+v: a failed publication changes nothing", res)
	}
	if rg.metrics.Counts()[MetricPublishFailed] != 1 || !strings.Contains(rg.logs.String(), "publish outcome events") {
		t.Errorf("metrics %v, logs %q", rg.metrics.Counts(), rg.logs.String())
	}
}

func TestMessageLatencyTimesEveryMessage(t *testing.T) {
	names := testNames
	names.AttemptLatency, names.MessageLatency = "", "MessageTime"
	rg := newRig(t, names)
	rg.phase.acq = webhook.Acquisition{Outcome: webhook.AcquireMissing}
	rg.e.Handle(context.Background(), message(t, "m1"))
	rg.e.Handle(context.Background(), Message{MessageID: "bad"})
	if err := rg.metrics.Flush(); err != nil {
		t.Fatal(err)
	}
	if emf := rg.emf.String(); !strings.Contains(emf, `"MessageTime":[0,0]`) || strings.Contains(emf, "AttemptTime") {
		t.Errorf("EMF %s, want two message times and no attempt time", emf)
	}
}

// TestAcquireGeneration: the kernel asks for the lease with the message's
// generation (absent in the body: 0).
func TestAcquireGeneration(t *testing.T) {
	rg := newRig(t, testNames)
	rg.phase.acq = webhook.Acquisition{Outcome: webhook.AcquireMissing}
	rg.e.Handle(context.Background(), message(t, "m1"))
	b, err := json.Marshal(webhook.Envelope{Key: key, Provider: "line", Tenant: "acme", Type: "follow", Generation: 3})
	if err != nil {
		t.Fatal(err)
	}
	rg.e.Handle(context.Background(), Message{MessageID: "m2", ReceiptHandle: "rh-m2", Body: b})
	if got := rg.phase.gens; len(got) != 2 || got[0] != 0 || got[1] != 3 {
		t.Errorf("Acquire asked for generations %v, want [0 3]", got)
	}
}

func TestVerdictNames(t *testing.T) {
	seen := map[string]bool{}
	for v := Succeeded; v <= Stale; v++ {
		n := v.String()
		if n == "unknown" || seen[n] {
			t.Errorf("verdict %d: name %q unknown or repeated", v, n)
		}
		seen[n] = true
	}
	if Verdict(0).String() != "unknown" || (Stale+1).String() != "unknown" {
		t.Error("out of range verdicts must be unknown")
	}
}

func TestOutcomeEventsClasses(t *testing.T) {
	all := []webhook.Status{webhook.StatusSucceeded, webhook.StatusFailed, webhook.StatusCompensated, webhook.StatusDead}
	for _, c := range []struct {
		class OutcomeEvents
		want  []webhook.Status
	}{
		{OutcomesEach, all},
		{OutcomesFailures, all[1:]},
		{OutcomesNone, nil},
		{"", all[1:]}, // the default
	} {
		rg := newRig(t, testNames, func(cfg *Config) { cfg.Outcomes = c.class })
		var evs []webhook.Outcome
		for _, st := range all {
			evs = append(evs, webhook.Outcome{Key: string(st), Status: st})
		}
		rg.e.publish(context.Background(), evs)
		var got []webhook.Status
		for _, call := range rg.pub.Batches() {
			for _, ev := range call {
				got = append(got, ev.Status)
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("class %q: published %v, want %v", c.class, got, c.want)
		}
		if len(c.want) == 0 && len(rg.pub.Batches()) != 0 {
			t.Errorf("class %q: %d publish calls, want none", c.class, len(rg.pub.Batches()))
		}
	}
}

func TestParseOutcomeEvents(t *testing.T) {
	for in, want := range map[string]OutcomeEvents{"": DefaultOutcomeEvents, "each": OutcomesEach, "failures": OutcomesFailures, "none": OutcomesNone} {
		if got, err := ParseOutcomeEvents(in); err != nil || got != want {
			t.Errorf("ParseOutcomeEvents(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"all", "Each", "failed", " none"} {
		if _, err := ParseOutcomeEvents(bad); err == nil {
			t.Errorf("ParseOutcomeEvents(%q): got no error", bad)
		}
		cfg := Config{Queue: &webhooktest.Queue{}, Outcomes: OutcomeEvents(bad)}
		if err := cfg.Validate("test"); err == nil {
			t.Errorf("Validate with Outcomes %q: got no error", bad)
		}
	}
}

// A batch starts its tenants' messages in turn: with one slot, a quiet
// tenant's message is the second to run, not the last behind a noisy
// tenant's; the results stay in the batch's order.
func TestBatchStartsTenantsInTurn(t *testing.T) {
	rg := newRig(t, testNames)
	var ms []Message
	for _, id := range []string{"n1", "n2", "n3", "n4", "q1"} {
		m := message(t, id)
		m.Group = "noisy"
		if id == "q1" {
			m.Group = "quiet"
		}
		ms = append(ms, m)
	}
	results := rg.e.Batch(context.Background(), ms, 1)
	var started, got []string
	for _, a := range rg.phase.begun {
		started = append(started, a.Message.MessageID)
	}
	for _, r := range results {
		got = append(got, r.MessageID)
	}
	if want := []string{"n1", "q1", "n2", "n3", "n4"}; !slices.Equal(started, want) {
		t.Errorf("started %v, want %v", started, want)
	}
	if want := []string{"n1", "n2", "n3", "n4", "q1"}; !slices.Equal(got, want) {
		t.Errorf("results %v, want the batch's order %v", got, want)
	}
}

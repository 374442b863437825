package processtest

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/dispatch"
	"github.com/hookwall/hookwall/shared/internal/testkit"
	"github.com/hookwall/hookwall/shared/process"
	"github.com/hookwall/hookwall/shared/store"
	"github.com/hookwall/hookwall/shared/webhook"
	"github.com/hookwall/hookwall/shared/webhook/webhooktest"
)

// Defaults of [Run].
const (
	// DefaultTenant is the tenant of the events Run delivers, unless [Tenant] says otherwise.
	DefaultTenant = "test"
	// DefaultMaxRounds is how many rounds of deliveries Run makes per event at most.
	DefaultMaxRounds = 10
	// Lease is the dispatcher's lease length in the kit. The kit's clock
	// (shared by the events table and the dispatcher) stands still while
	// the handlers run, so a live attempt never loses its lease, whatever
	// the handler's duration; after a crash the kit moves the clock past
	// the dead attempt's lease instead of waiting for it.
	Lease = 300 * time.Millisecond
)

// Option configures [Run].
type Option func(*options)

type options struct {
	copies    int
	crash     bool
	tenant    string
	maxRounds int
}

// Redeliver makes every round deliver the same envelope n times at once,
// concurrently, as SQS's at-least-once delivery and the platforms' retries
// do (default 1): the n deliveries contend for the lease together (none
// goes on before all have tried), so one wins and the others find it busy,
// however fast the table answers. n < 1 panics.
func Redeliver(n int) Option {
	if n < 1 {
		panic(fmt.Sprintf("processtest: Redeliver(%d): must be at least 1", n))
	}
	return func(o *options) { o.copies = n }
}

// CrashAfterEachStep makes Run, after the plain run, run the event again
// once per journaled step of the plain run and per crash point: once with a
// crash after the step ran but before its journal entry was written, once
// with a crash just after it was written. Each crash run is a new event (its
// own key). The crash is injected by the kit's store, not by the
// dispatcher: at the crash point the journal write fails (before: it is
// not written; after: it is written and still reported failed), so the
// attempt stops there as a worker dying at that instant would; from then on
// every write of that attempt (heartbeat, journal, outcome) is a no-op, as
// the writes of a dead worker never land. The record stays PROCESSING under
// the dead lease; the kit lets the lease run out and redelivers until the
// event is done. Every crash run must end like the plain run.
func CrashAfterEachStep() Option { return func(o *options) { o.crash = true } }

// Tenant sets the tenant of the delivered events (default [DefaultTenant]).
func Tenant(name string) Option { return func(o *options) { o.tenant = name } }

// MaxRounds bounds the rounds of deliveries per event (default
// [DefaultMaxRounds]); an event not done by then fails the test. The kit
// redelivers at once, ignoring the retry backoff. n < 1 panics.
func MaxRounds(n int) Option {
	if n < 1 {
		panic(fmt.Sprintf("processtest: MaxRounds(%d): must be at least 1", n))
	}
	return func(o *options) { o.maxRounds = n }
}

// DeadLetter is a message the dispatcher sent to the dead-letter queue.
type DeadLetter struct {
	// Key is the event key.
	Key string
	// Reason is why the event was given up on.
	Reason string
}

// EventReport is what became of one event Run delivered.
type EventReport struct {
	// Key is the event key.
	Key string
	// Crash is where a crash was injected (nil for the plain run).
	Crash *Point
	// Status, Attempts and LastError are the final record's.
	Status    webhook.Status
	Attempts  int
	LastError string
	// Journal is the event's journal, in sort key order ([webhook.DoneStep]
	// entries included).
	Journal []webhook.JournalEntry
	// Deliveries counts the deliveries of this event; Verdicts counts them
	// by verdict. A crashed delivery counts as [dispatch.LeaseLost]: its
	// closing write never landed.
	Deliveries int
	Verdicts   map[dispatch.Verdict]int
}

// Report is what [Run] observed.
type Report struct {
	// EventReport is the plain run: the event delivered without crashes.
	EventReport
	// Events are every event Run delivered: the plain run first, then one
	// per crash point.
	Events []EventReport
	// Deliveries counts every delivery (Dispatcher.Process call); Crashes
	// the crashes injected.
	Deliveries int
	Crashes    int
	// DeadLetters are the messages sent to the dead-letter queue.
	DeadLetters []DeadLetter
}

// StepKeys returns the idempotency keys of every journaled step of every
// event ([webhook.DoneStep] markers left out), sorted: the keys an API called
// once per step should have seen, each standing for one effect.
func (r *Report) StepKeys() []string {
	var keys []string
	for _, ev := range r.Events {
		for _, e := range ev.Journal {
			if e.Step != webhook.DoneStep {
				keys = append(keys, webhook.IdempotencyKey(ev.Key, e.Handler, e.Step))
			}
		}
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

// Run delivers an event of typ with payload to the handlers of reg through
// a real [dispatch.Dispatcher] on a fresh events table (see [NewStore]: in
// memory by default, DynamoDB Local with HOOKWALL_TEST_STORE=dynamodb), in
// rounds of concurrent deliveries until the event is done (SUCCEEDED or
// FAILED), and returns what happened. payload is the event's normalised JSON:
// []byte and json.RawMessage are used as they are, anything else is encoded
// with encoding/json.
//
// Besides what the test asserts on the [Report], Run fails t when an event is
// not done after [MaxRounds] rounds, and with [CrashAfterEachStep] when a
// crash point is never reached, when the handler swallows the crash (it must
// return Step's error), when a journaled step runs again, when the step that
// crashed before its journal write is not run again, or when a crash run ends
// in another status or with other journaled steps than the plain run.
func Run[T any](t testing.TB, reg *process.Registry, typ webhook.Type[T], payload any, opts ...Option) *Report {
	t.Helper()
	o := options{copies: 1, tenant: DefaultTenant, maxRounds: DefaultMaxRounds}
	for _, opt := range opts {
		opt(&o)
	}
	body, err := testkit.Encode(payload)
	if err != nil {
		t.Fatalf("processtest: encode payload: %v", err)
	}
	clk := webhooktest.NewClock(time.Now())
	k := &kit{t: t, reg: reg, table: NewStore(t, clk.Now), clock: clk, opts: o, provider: typ.Provider,
		eventType: typ.Name, payload: body, q: &recorder{}}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	rep := &Report{}
	plain := newScenario(-1, false)
	rep.Events = append(rep.Events, k.run(ctx, plain))
	rep.EventReport = rep.Events[0]
	if o.crash {
		steps := 0
		for _, p := range plain.Points {
			if p.Journaled {
				steps++
			}
		}
		if steps == 0 {
			t.Logf("processtest: CrashAfterEachStep: the handlers journaled no step; no crash to inject")
		}
		for i := range steps {
			for _, journaled := range []bool{false, true} {
				sc := newScenario(i, journaled)
				ev := k.run(ctx, sc)
				rep.Events = append(rep.Events, ev)
				k.check(sc, ev, rep.EventReport)
				if ev.Crash != nil {
					rep.Crashes++
				}
			}
		}
	}
	for _, ev := range rep.Events {
		rep.Deliveries += ev.Deliveries
	}
	rep.DeadLetters = k.q.deadLetters()
	return rep
}

// kit is one Run's fixed parts.
type kit struct {
	t         testing.TB
	reg       *process.Registry
	table     Store
	clock     *webhooktest.Clock
	q         *recorder
	opts      options
	provider  string
	eventType string
	payload   []byte
}

// run claims a new event as the receiver does and delivers it in rounds
// until it is done.
func (k *kit) run(ctx context.Context, sc *scenario) EventReport {
	t := k.t
	t.Helper()
	key, msg := testkit.Claim(ctx, t, k.table, "processtest", k.provider, k.opts.tenant, k.eventType, k.payload)
	ks := &kitStore{Store: k.table, sc: sc}
	d, err := dispatch.New(dispatch.Config{Registry: k.reg, Store: ks, DLQ: k.q,
		Settings: dispatch.Settings{Queue: k.q, LeaseDuration: Lease, Now: k.clock.Now,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}})
	if err != nil {
		t.Fatalf("processtest: %v", err)
	}
	ev := EventReport{Key: key, Verdicts: map[dispatch.Verdict]int{}}
	var rec *store.Record
	for round := 1; ; round++ {
		results := make([]dispatch.Result, k.opts.copies)
		ks.rounds.Start(k.opts.copies)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range results {
			wg.Go(func() {
				<-start
				results[i] = d.Process(ctx, dispatch.Message{MessageID: fmt.Sprintf("m%d-%d", round, i),
					ReceiptHandle: fmt.Sprintf("rh%d-%d", round, i), Body: msg})
			})
		}
		close(start)
		wg.Wait()
		for _, r := range results {
			ev.Deliveries++
			ev.Verdicts[r.Verdict]++
		}
		if rec, err = k.table.Get(ctx, key); err != nil || rec == nil {
			t.Fatalf("processtest: read record %s: %v (missing: %v)", key, err, rec == nil)
		}
		if rec.Status.Terminal() || rec.Status == webhook.StatusFailed {
			break
		}
		if round >= k.opts.maxRounds {
			t.Errorf("processtest: %s not done after %d rounds: %s after %d attempts (last error: %q)",
				key, round, rec.Status, rec.Attempts, rec.LastError)
			break
		}
		if rec.Status == webhook.StatusProcessing { // a crashed attempt: let its lease run out
			k.clock.AdvanceTo(time.UnixMilli(rec.LeaseUntil + 1))
		}
	}
	ev.Status, ev.Attempts, ev.LastError = rec.Status, int(rec.Attempts), rec.LastError
	if ev.Journal, err = k.table.Steps(ctx, key, rec.ClaimID); err != nil {
		t.Fatalf("processtest: read journal of %s: %v", key, err)
	}
	sc.Mu.Lock()
	ev.Crash = sc.Fired
	sc.Mu.Unlock()
	return ev
}

// check fails the test where a crash run broke a guarantee.
func (k *kit) check(sc *scenario, ev, plain EventReport) {
	t := k.t
	t.Helper()
	sc.Mu.Lock()
	defer sc.Mu.Unlock()
	where := fmt.Sprintf("crash at journal point %d (journaled: %v)", sc.CrashAt, sc.Journaled)
	if sc.Fired == nil {
		t.Errorf("processtest: %s: never reached; the handlers took another path than in the plain run", where)
		return
	}
	p := *sc.Fired
	where = fmt.Sprintf("crash after step %s/%s (journaled: %v)", p.Handler, p.Step, p.Journaled)
	if len(sc.late) == 0 || (sc.late[0] != "retry" && sc.late[0] != "fail") {
		t.Errorf("processtest: %s: the attempt did not end (its next write was %v); the handler must return the error of Step (wrapped with %%w)",
			where, sc.late)
	}
	journaled := map[string]bool{}
	rerun := false
	for _, q := range sc.Points {
		id := q.Handler + "/" + q.Step
		switch {
		case q.Journaled:
			journaled[id] = true
		case journaled[id]:
			t.Errorf("processtest: %s: step %s ran again on attempt %d after it was journaled", where, id, q.Attempt)
		case q.Attempt > p.Attempt && q.Handler == p.Handler && q.Step == p.Step:
			rerun = true
		}
	}
	if !p.Journaled && ev.Status == webhook.StatusSucceeded && !rerun {
		t.Errorf("processtest: %s: the step was not run again, yet its journal entry was never written", where)
	}
	if ev.Status != plain.Status {
		t.Errorf("processtest: %s: event ended %s (last error %q), the plain run %s", where, ev.Status, ev.LastError, plain.Status)
	}
	if got, want := stepNames(ev.Journal), stepNames(plain.Journal); !slices.Equal(got, want) {
		t.Errorf("processtest: %s: journaled steps %v, the plain run %v", where, got, want)
	}
}

func stepNames(j []webhook.JournalEntry) []string {
	out := make([]string, 0, len(j))
	for _, e := range j {
		out = append(out, e.Handler+"/"+e.Step)
	}
	slices.Sort(out)
	return out
}

// recorder is the in-memory queue side: it ignores visibility changes (the
// kit redelivers at once) and keeps the dead letters.
type recorder struct {
	mu   sync.Mutex
	dead []DeadLetter
}

func (r *recorder) ChangeVisibility(context.Context, string, time.Duration) error { return nil }

func (r *recorder) SendDeadLetter(_ context.Context, key string, _ []byte, reason string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.dead = append(r.dead, DeadLetter{Key: key, Reason: reason})
	return nil
}

func (r *recorder) deadLetters() []DeadLetter {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.dead)
}

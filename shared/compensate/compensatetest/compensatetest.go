package compensatetest

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/compensate"
	"github.com/hookwall/hookwall/shared/dispatch"
	"github.com/hookwall/hookwall/shared/internal/registry"
	"github.com/hookwall/hookwall/shared/internal/testkit"
	"github.com/hookwall/hookwall/shared/process"
	"github.com/hookwall/hookwall/shared/process/processtest"
	"github.com/hookwall/hookwall/shared/store"
	"github.com/hookwall/hookwall/shared/webhook"
	"github.com/hookwall/hookwall/shared/webhook/webhooktest"
)

// Defaults of [Run].
const (
	// DefaultTenant is the tenant of the events Run delivers.
	DefaultTenant = "test"
	// DefaultMaxRounds bounds the rounds of deliveries of each phase.
	DefaultMaxRounds = 10
	// Lease is the lease length of the processor and the compensator in the
	// kit; the kit's clock stands still while they run and jumps past a
	// crashed attempt's lease.
	Lease = 300 * time.Millisecond
)

// Option configures [Run].
type Option func(*options)

type options struct {
	copies    int
	crash     bool
	tenant    string
	maxRounds int
	attempts  int
}

// Redeliver makes every round deliver the dead letter n times at once, as
// SQS's at-least-once delivery does (default 1): the copies contend for the
// compensation lease together. n < 1 panics.
func Redeliver(n int) Option {
	if n < 1 {
		panic(fmt.Sprintf("compensatetest: Redeliver(%d): must be at least 1", n))
	}
	return func(o *options) { o.copies = n }
}

// CrashAfterEachUndo makes Run, after the plain run, run the event again
// once per compensation step of the plain run and per crash point: with a
// crash after the undo ran but before its journal entry was written, and
// with one just after it was written. From the crash on, every write of
// the crashed attempt is a no-op; the kit lets its lease run out and
// redelivers the dead letter until the event is done. Every crash run must
// end like the plain run, and no undo may be journaled twice.
func CrashAfterEachUndo() Option { return func(o *options) { o.crash = true } }

// Tenant sets the tenant of the delivered events (default [DefaultTenant]).
func Tenant(name string) Option { return func(o *options) { o.tenant = name } }

// MaxRounds bounds the rounds of deliveries of each phase (default
// [DefaultMaxRounds]); an event not done by then fails the test. n < 1 panics.
func MaxRounds(n int) Option {
	if n < 1 {
		panic(fmt.Sprintf("compensatetest: MaxRounds(%d): must be at least 1", n))
	}
	return func(o *options) { o.maxRounds = n }
}

// Attempts sets the compensator's attempt limit (default
// compensate.DefaultMaxAttempts). n < 1 panics.
func Attempts(n int) Option {
	if n < 1 {
		panic(fmt.Sprintf("compensatetest: Attempts(%d): must be at least 1", n))
	}
	return func(o *options) { o.attempts = n }
}

// EventReport is what became of one event Run delivered.
type EventReport struct {
	// Key is the event key.
	Key string
	// Crash is where a crash was injected (nil for the plain run).
	Crash *Point
	// FailedWith is the record's lastError when the processor gave up.
	FailedWith string
	// Status and LastError are the final record's; Compensations its
	// compensation attempts.
	Status        webhook.Status
	LastError     string
	Compensations int
	// Journal is the event's journal in sort key order, forward and undo steps.
	Journal []webhook.JournalEntry
	// Undone lists the compensation steps in the order their journal
	// entries were written, as "handler/step" (the forward step).
	Undone []string
	// Deliveries counts the dead letter's deliveries; Verdicts counts them by verdict.
	Deliveries int
	Verdicts   map[compensate.Verdict]int
	// Outcomes are the outcome events the compensator published.
	Outcomes []webhook.Outcome
}

// Report is what [Run] observed.
type Report struct {
	// EventReport is the plain run, without crashes.
	EventReport
	// Events are every event Run delivered: the plain run first, then one
	// per crash point.
	Events []EventReport
	// Deliveries counts the dead-letter deliveries of every event; Crashes
	// the crashes injected.
	Deliveries int
	Crashes    int
}

// UndoKeys returns the idempotency keys of every journaled compensation
// step of every event, sorted: the keys an API should have seen for the
// undos, one per effect.
func (r *Report) UndoKeys() []string {
	var keys []string
	for _, ev := range r.Events {
		for _, e := range ev.Journal {
			if _, ok := registry.IsUndoStep(e.Step); ok {
				keys = append(keys, webhook.IdempotencyKey(ev.Key, e.Handler, e.Step))
			}
		}
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

// Run delivers an event of typ with payload to the handlers of reg through
// a real dispatch.Dispatcher until the processor gives up on it (FAILED; the
// handlers must fail it, or Run fails t), then delivers the dead letter the
// processor sent to a real compensate.Compensator, in rounds, until the
// record is COMPENSATED or DEAD, and returns what happened. payload is the
// event's normalised JSON ([]byte and json.RawMessage as they are, anything
// else encoded with encoding/json). The store is processtest.NewStore's.
func Run[T any](t testing.TB, reg *process.Registry, typ webhook.Type[T], payload any, opts ...Option) *Report {
	t.Helper()
	o := options{copies: 1, tenant: DefaultTenant, maxRounds: DefaultMaxRounds, attempts: compensate.DefaultMaxAttempts}
	for _, opt := range opts {
		opt(&o)
	}
	body, err := testkit.Encode(payload)
	if err != nil {
		t.Fatalf("compensatetest: encode payload: %v", err)
	}
	clk := webhooktest.NewClock(time.Now())
	table := processtest.NewStore(t, clk.Now)
	cs, ok := table.(compensate.Store)
	if !ok {
		t.Fatalf("compensatetest: the store %T is not a compensate.Store", table)
	}
	k := &kit{t: t, reg: reg, table: table, comp: cs, clock: clk, opts: o, provider: typ.Provider, eventType: typ.Name, payload: body}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	rep := &Report{}
	plain := newScenario(-1, false)
	rep.Events = append(rep.Events, k.run(ctx, plain))
	rep.EventReport = rep.Events[0]
	if o.crash {
		steps := len(plain.order)
		if steps == 0 {
			t.Logf("compensatetest: CrashAfterEachUndo: the compensator journaled no undo; no crash to inject")
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
	return rep
}

// kit is one Run's fixed parts.
type kit struct {
	t         testing.TB
	reg       *process.Registry
	table     processtest.Store
	comp      compensate.Store
	clock     *webhooktest.Clock
	opts      options
	provider  string
	eventType string
	payload   []byte
}

var discard = slog.New(slog.NewTextHandler(io.Discard, nil))

// run claims a new event, processes it until FAILED, then compensates it.
func (k *kit) run(ctx context.Context, sc *scenario) EventReport {
	t := k.t
	t.Helper()
	key, msg := testkit.Claim(ctx, t, k.table, "compensatetest", k.provider, k.opts.tenant, k.eventType, k.payload)
	ev := EventReport{Key: key, Verdicts: map[compensate.Verdict]int{}}
	dead := k.process(ctx, key, msg)
	rec := k.get(ctx, key)
	ev.FailedWith = rec.LastError

	ks := &kitStore{Store: k.comp, sc: sc}
	pub := &recorder{}
	c, err := compensate.New(compensate.Config{Registry: k.reg, Store: ks, Settings: compensate.Settings{Queue: pub, Publisher: pub,
		LeaseDuration: Lease, MaxAttempts: k.opts.attempts, Now: k.clock.Now, Logger: discard}})
	if err != nil {
		t.Fatalf("compensatetest: %v", err)
	}
	for round := 1; ; round++ {
		results := make([]compensate.Result, k.opts.copies)
		ks.rounds.Start(k.opts.copies)
		var wg sync.WaitGroup
		for i := range results {
			wg.Go(func() {
				results[i] = c.Compensate(ctx, compensate.Message{MessageID: fmt.Sprintf("d%d-%d", round, i),
					ReceiptHandle: fmt.Sprintf("rh%d-%d", round, i), Body: dead})
			})
		}
		wg.Wait()
		for _, r := range results {
			ev.Deliveries++
			ev.Verdicts[r.Verdict]++
		}
		rec = k.get(ctx, key)
		if rec.Status.Terminal() {
			break
		}
		if round >= k.opts.maxRounds {
			t.Errorf("compensatetest: %s not compensated after %d rounds: %s after %d compensations (last error: %q)",
				key, round, rec.Status, rec.Compensations, rec.LastError)
			break
		}
		if rec.LeaseUntil > 0 { // a crashed attempt: let its lease run out
			k.clock.AdvanceTo(time.UnixMilli(rec.LeaseUntil + 1))
		}
	}
	ev.Status, ev.LastError, ev.Compensations = rec.Status, rec.LastError, int(rec.Compensations)
	if ev.Journal, err = k.table.Steps(ctx, key, rec.ClaimID); err != nil {
		t.Fatalf("compensatetest: read journal of %s: %v", key, err)
	}
	ev.Outcomes = pub.outcomes()
	sc.Mu.Lock()
	ev.Crash, ev.Undone = sc.Fired, slices.Clone(sc.order)
	sc.Mu.Unlock()
	return ev
}

// process delivers the event to the processor until it is FAILED and
// returns the dead letter's body.
func (k *kit) process(ctx context.Context, key string, msg []byte) []byte {
	t := k.t
	t.Helper()
	q := &recorder{}
	d, err := dispatch.New(dispatch.Config{Registry: k.reg, Store: k.table, DLQ: q,
		Settings: dispatch.Settings{Queue: q, LeaseDuration: Lease, Now: k.clock.Now, Logger: discard}})
	if err != nil {
		t.Fatalf("compensatetest: %v", err)
	}
	for round := 1; ; round++ {
		d.Process(ctx, dispatch.Message{MessageID: fmt.Sprintf("p%d", round), ReceiptHandle: fmt.Sprintf("prh%d", round), Body: msg})
		rec := k.get(ctx, key)
		switch {
		case rec.Status == webhook.StatusFailed:
			body, ok := q.deadLetter(key)
			if !ok {
				t.Fatalf("compensatetest: %s is FAILED but the processor sent no dead letter", key)
			}
			return body
		case rec.Status.Terminal():
			t.Fatalf("compensatetest: the processor ended %s %s; the handlers must fail the event to compensate it", key, rec.Status)
		case round >= k.opts.maxRounds:
			t.Fatalf("compensatetest: %s not FAILED after %d rounds: %s (%q)", key, round, rec.Status, rec.LastError)
		}
	}
}

func (k *kit) get(ctx context.Context, key string) *store.Record {
	k.t.Helper()
	rec, err := k.table.Get(ctx, key)
	if err != nil || rec == nil {
		k.t.Fatalf("compensatetest: read record %s: %v (missing: %v)", key, err, rec == nil)
	}
	return rec
}

// check fails the test where a crash run broke a guarantee.
func (k *kit) check(sc *scenario, ev, plain EventReport) {
	t := k.t
	t.Helper()
	sc.Mu.Lock()
	defer sc.Mu.Unlock()
	where := fmt.Sprintf("crash at undo point %d (journaled: %v)", sc.CrashAt, sc.Journaled)
	if sc.Fired == nil {
		t.Errorf("compensatetest: %s: never reached; the compensation took another path than in the plain run", where)
		return
	}
	p := *sc.Fired
	where = fmt.Sprintf("crash after the undo of %s/%s (journaled: %v)", p.Handler, p.Step, p.Journaled)
	if len(sc.again) > 0 {
		t.Errorf("compensatetest: %s: undos %v ran again after they were journaled", where, sc.again)
	}
	if ev.Status != plain.Status {
		t.Errorf("compensatetest: %s: event ended %s (%q), the plain run %s", where, ev.Status, ev.LastError, plain.Status)
	}
	if got, want := stepNames(ev.Journal), stepNames(plain.Journal); !slices.Equal(got, want) {
		t.Errorf("compensatetest: %s: journaled steps %v, the plain run %v", where, got, want)
	}
	if !slices.Equal(ev.Undone, plain.Undone) {
		t.Errorf("compensatetest: %s: undone in the order %v, the plain run %v", where, ev.Undone, plain.Undone)
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

// recorder is the queues and the bus: it ignores visibility changes (the
// kit redelivers at once), keeps the dead letters and the outcomes.
type recorder struct {
	mu   sync.Mutex
	dead map[string][]byte
	outs []webhook.Outcome
}

func (r *recorder) ChangeVisibility(context.Context, string, time.Duration) error { return nil }

func (r *recorder) SendDeadLetter(_ context.Context, key string, body []byte, _ string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.dead == nil {
		r.dead = map[string][]byte{}
	}
	r.dead[key] = slices.Clone(body)
	return nil
}

func (r *recorder) deadLetter(key string) ([]byte, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	b, ok := r.dead[key]
	return b, ok
}

func (r *recorder) Publish(_ context.Context, evs []webhook.Outcome) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.outs = append(r.outs, evs...)
	return nil
}

func (r *recorder) outcomes() []webhook.Outcome {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.outs)
}

package testkit

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/base/webhook/webhooktest"
	"github.com/hookwall/hookwall/shared/internal/kernel"
	"github.com/hookwall/hookwall/shared/state/store"
)

// Defaults of a run.
const (
	// DefaultTenant is the tenant of the events a kit delivers.
	DefaultTenant = "test"
	// DefaultMaxRounds is how many rounds of deliveries a kit makes per
	// event (and phase) at most.
	DefaultMaxRounds = 10
	// Lease is the engines' lease length in the kits. The kit's clock
	// (shared by the events table and the engines) stands still while they
	// run, so a live attempt never loses its lease, whatever the handler's
	// duration; after a crash the kit moves the clock past the dead
	// attempt's lease instead of waiting for it.
	Lease = 300 * time.Millisecond
)

// Options are the options of a kit's run.
type Options struct {
	// Copies is how many times each round delivers the message at once.
	Copies int
	// Crash asks for one run per crash point of the plain run.
	Crash bool
	// Tenant is the tenant of the delivered events.
	Tenant string
	// MaxRounds bounds the rounds of deliveries per event and phase.
	MaxRounds int
	// Attempts is the compensator's attempt limit (0: its default).
	Attempts int
}

// Redeliver sets Copies; n < 1 panics, the message naming kit.
func Redeliver(kit string, n int) func(*Options) {
	if n < 1 {
		panic(fmt.Sprintf("%s: Redeliver(%d): must be at least 1", kit, n))
	}
	return func(o *Options) { o.Copies = n }
}

// MaxRounds sets MaxRounds; n < 1 panics, the message naming kit.
func MaxRounds(kit string, n int) func(*Options) {
	if n < 1 {
		panic(fmt.Sprintf("%s: MaxRounds(%d): must be at least 1", kit, n))
	}
	return func(o *Options) { o.MaxRounds = n }
}

// Crash sets Crash.
func Crash(o *Options) { o.Crash = true }

// Tenant sets Tenant.
func Tenant(name string) func(*Options) { return func(o *Options) { o.Tenant = name } }

// Event is what became of one event a kit delivered: what every kit
// reports of it.
type Event struct {
	// Key is the event key.
	Key string
	// Crash is where a crash was injected (nil for the plain run).
	Crash *Point
	// Status and LastError are the final record's.
	Status    webhook.Status
	LastError string
	// Journal is the event's journal, in sort key order (markers and
	// compensation steps included).
	Journal []webhook.JournalEntry
	// Deliveries counts the deliveries of this event to the engine under
	// test; Verdicts counts them by verdict. A crashed delivery counts as
	// lease-lost: its closing write never landed.
	Deliveries int
	Verdicts   map[kernel.Verdict]int
}

// Run is one kit run's fixed parts: the test, its options, the event type
// and payload, the clock the events table and the engines share, the table.
type Run struct {
	T         testing.TB
	Kit       string // the kit's name, prefixing its messages
	Points    string // what its crash points are ("step", "undo")
	Options   Options
	Provider  string
	EventType string
	Payload   []byte
	Clock     *webhooktest.Clock
	Table     Store
	Log       *slog.Logger // the engines' logger: discards
}

// Begin starts the run of kit (whose crash points are points) for an event of provider and eventType with
// payload (its normalised JSON: []byte and json.RawMessage as they are,
// anything else encoded with encoding/json) and opts, on a fresh events
// table ([NewStore]). It fails t when the payload does not encode.
func Begin[O ~func(*Options)](t testing.TB, kit, points, provider, eventType string, payload any, opts []O) *Run {
	t.Helper()
	o := Options{Copies: 1, Tenant: DefaultTenant, MaxRounds: DefaultMaxRounds}
	for _, opt := range opts {
		opt(&o)
	}
	body, err := Encode(payload)
	if err != nil {
		t.Fatalf("%s: encode payload: %v", kit, err)
	}
	clk := webhooktest.NewClock(time.Now())
	return &Run{T: t, Kit: kit, Points: points, Options: o, Provider: provider, EventType: eventType, Payload: body, Clock: clk,
		Table: NewStore(t, clk.Now), Log: slog.New(slog.DiscardHandler)}
}

// Claim claims a new event for the run, as the receiver does, and returns
// its key and its queue message's body.
func (r *Run) Claim(ctx context.Context) (key string, msg []byte) {
	r.T.Helper()
	return Claim(ctx, r.T, r.Table, r.Kit, r.Provider, r.Options.Tenant, r.EventType, r.Payload)
}

// Get reads the record of key; a failed read or a missing record fails the test.
func (r *Run) Get(ctx context.Context, key string) *store.Record {
	r.T.Helper()
	rec, err := r.Table.Get(ctx, key)
	if err != nil || rec == nil {
		r.T.Fatalf("%s: read record %s: %v (missing: %v)", r.Kit, key, err, rec == nil)
	}
	return rec
}

// finish fills in ev from the final record rec: its status, last error and
// journal, and the crash point sc fired at.
func (r *Run) finish(ctx context.Context, ev *Event, rec *store.Record, sc *Scenario) {
	r.T.Helper()
	ev.Status, ev.LastError = rec.Status, rec.LastError
	var err error
	if ev.Journal, err = r.Table.Steps(ctx, ev.Key, rec.ClaimID); err != nil {
		r.T.Fatalf("%s: read journal of %s: %v", r.Kit, ev.Key, err)
	}
	sc.Mu.Lock()
	ev.Crash = sc.Fired
	sc.Mu.Unlock()
}

// Kit is a test kit's part of a run: one new event delivered under a
// scenario until it is done, and the guarantees of its own a crash run must
// keep.
type Kit[E Report] interface {
	// Event delivers a new event under sc and reports what became of it.
	Event(ctx context.Context, sc *Scenario) E
	// Check fails the test where the crash run of ev, whose crash fired at
	// p (where describes it), broke a guarantee of the kit's; plain is the
	// plain run. sc.Mu is held.
	Check(where string, sc *Scenario, p Point, ev, plain E)
}

// Summary is what a kit's run observed over its events.
type Summary[E any] struct {
	// Events are every event the run delivered: the plain run first, then
	// one per crash point.
	Events []E
	// Deliveries counts the deliveries of every event to the engine under
	// test; Crashes the crashes injected.
	Deliveries int
	Crashes    int
}

// Report is a kit's report of one event: its EventReport, which embeds
// [Event].
type Report interface{ event() Event }

func (e Event) event() Event { return e }

// Drive makes the plain run and, with Options.Crash, one run per crash
// point the plain run journaled and per side of its journal write (the
// crash just before it, just after it), each a new event, and returns what
// it observed. It fails the test where a crash run never reached its crash
// point, or ended otherwise than the plain run (another status, other
// journaled steps), and has the kit check its own guarantees.
func Drive[E Report](r *Run, kit Kit[E]) Summary[E] {
	events, crashes := drive(r, kit)
	sum := Summary[E]{Events: events, Crashes: crashes}
	for _, ev := range events {
		sum.Deliveries += ev.event().Deliveries
	}
	return sum
}

func drive[E Report](r *Run, kit Kit[E]) (events []E, crashes int) {
	t := r.T
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	plain := NewScenario(-1, false)
	events = append(events, kit.Event(ctx, plain))
	if !r.Options.Crash {
		return events, 0
	}
	points := len(plain.Order)
	if points == 0 {
		t.Logf("%s: the plain run journaled no crash point; no crash to inject", r.Kit)
	}
	for i := range points {
		for _, journaled := range []bool{false, true} {
			sc := NewScenario(i, journaled)
			ev := kit.Event(ctx, sc)
			events = append(events, ev)
			if check(r, sc, kit, ev, events[0]) {
				crashes++
			}
		}
	}
	return events, crashes
}

// check checks the crash run ev of sc against the plain run, and reports
// whether its crash fired.
func check[E Report](r *Run, sc *Scenario, kit Kit[E], ev, plain E) bool {
	t := r.T
	t.Helper()
	sc.Mu.Lock()
	defer sc.Mu.Unlock()
	if sc.Fired == nil {
		t.Errorf("%s: crash at %s point %d (journaled: %v): never reached; the event took another path than in the plain run",
			r.Kit, r.Points, sc.CrashAt, sc.Journaled)
		return false
	}
	p := *sc.Fired
	where := fmt.Sprintf("crash after the %s %s/%s (journaled: %v)", r.Points, p.Handler, p.Step, p.Journaled)
	kit.Check(where, sc, p, ev, plain)
	e, pe := ev.event(), plain.event()
	if e.Status != pe.Status {
		t.Errorf("%s: %s: event ended %s (last error %q), the plain run %s", r.Kit, where, e.Status, e.LastError, pe.Status)
	}
	if got, want := StepNames(e.Journal), StepNames(pe.Journal); !slices.Equal(got, want) {
		t.Errorf("%s: %s: journaled steps %v, the plain run %v", r.Kit, where, got, want)
	}
	return true
}

// Engine is the engine under test: its Handle.
type Engine interface {
	Handle(ctx context.Context, m kernel.Message) kernel.Result
}

// Phase is one engine's part of an event's run.
type Phase struct {
	// Engine builds the engine on table, the run's events table wrapped
	// for the scenario.
	Engine func(table Store) (Engine, error)
	// Point names the crash points: it returns, for a journal step, the
	// step the crash point is reported as, and whether it is one (nil:
	// none).
	Point func(step string) (string, bool)
	// Done reports whether a record of this status is done.
	Done func(webhook.Status) bool
	// Prefix starts the message ids and receipt handles.
	Prefix string
	// Single delivers one copy per round, whatever the run's Copies.
	Single bool
}

// Deliver delivers msg, the queue message of the event key, to the engine
// of p on the run's table wrapped for sc ([FaultStore]), in rounds of
// concurrent deliveries that contend for the lease together, until the
// record is done, and returns what became of the event and its final
// record. After a round that left a lease behind (a crashed attempt), it
// moves the clock past it. A record not done after MaxRounds rounds fails
// the test.
func (r *Run) Deliver(ctx context.Context, sc *Scenario, key string, msg []byte, p Phase) (Event, *store.Record) {
	t := r.T
	t.Helper()
	point := p.Point
	if point == nil {
		point = func(string) (string, bool) { return "", false }
	}
	gate := &Rounds{}
	e, err := p.Engine(NewFaultStore(r.Table, sc, gate, point))
	if err != nil {
		t.Fatalf("%s: %v", r.Kit, err)
	}
	copies := r.Options.Copies
	if p.Single {
		copies = 1
	}
	ev := Event{Key: key, Verdicts: map[kernel.Verdict]int{}}
	for round := 1; ; round++ {
		results := make([]kernel.Result, copies)
		gate.Start(copies)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range results {
			wg.Go(func() {
				<-start
				results[i] = e.Handle(ctx, kernel.Message{MessageID: fmt.Sprintf("%s%d-%d", p.Prefix, round, i),
					ReceiptHandle: fmt.Sprintf("%srh%d-%d", p.Prefix, round, i), Body: msg})
			})
		}
		close(start)
		wg.Wait()
		for _, res := range results {
			ev.Deliveries++
			ev.Verdicts[res.Verdict]++
		}
		rec := r.Get(ctx, key)
		if p.Done(rec.Status) {
			r.finish(ctx, &ev, rec, sc)
			return ev, rec
		}
		if round >= r.Options.MaxRounds {
			t.Errorf("%s: %s not done after %d rounds: %s after %d attempts and %d compensations (last error: %q)",
				r.Kit, key, round, rec.Status, rec.Attempts, rec.Compensations, rec.LastError)
			r.finish(ctx, &ev, rec, sc)
			return ev, rec
		}
		if rec.LeaseUntil > 0 { // a crashed attempt: let its lease run out
			r.Clock.AdvanceTo(time.UnixMilli(rec.LeaseUntil + 1))
		}
	}
}

// DeadLetter is a message an engine sent to the dead-letter queue.
type DeadLetter struct {
	// Key is the event key.
	Key string
	// Reason is why the event was given up on.
	Reason string
}

// Queues are the queues and the bus of a run: visibility changes are
// ignored (the kit redelivers at once), dead letters and outcomes are kept.
// They are safe for concurrent use.
type Queues struct {
	mu     sync.Mutex
	dead   []DeadLetter
	bodies map[string][]byte
	outs   []webhook.Outcome
}

// ChangeVisibility does nothing.
func (q *Queues) ChangeVisibility(context.Context, string, time.Duration) error { return nil }

// SendDeadLetter keeps the dead letter.
func (q *Queues) SendDeadLetter(_ context.Context, key string, body []byte, reason string) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.dead = append(q.dead, DeadLetter{Key: key, Reason: reason})
	if q.bodies == nil {
		q.bodies = map[string][]byte{}
	}
	q.bodies[key] = slices.Clone(body)
	return nil
}

// Publish keeps the outcome events.
func (q *Queues) Publish(_ context.Context, evs []webhook.Outcome) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.outs = append(q.outs, evs...)
	return nil
}

// DeadLetters returns the dead letters, in the order sent.
func (q *Queues) DeadLetters() []DeadLetter {
	q.mu.Lock()
	defer q.mu.Unlock()
	return slices.Clone(q.dead)
}

// DeadLetter returns the body of the last dead letter of key.
func (q *Queues) DeadLetter(key string) ([]byte, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	b, ok := q.bodies[key]
	return b, ok
}

// Outcomes returns the outcome events published.
func (q *Queues) Outcomes() []webhook.Outcome {
	q.mu.Lock()
	defer q.mu.Unlock()
	return slices.Clone(q.outs)
}

// StepNames returns the "handler/step" of the entries of j, sorted.
func StepNames(j []webhook.JournalEntry) []string {
	out := make([]string, 0, len(j))
	for _, e := range j {
		out = append(out, e.Handler+"/"+e.Step)
	}
	slices.Sort(out)
	return out
}

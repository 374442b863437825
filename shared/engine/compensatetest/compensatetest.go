package compensatetest

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/engine/compensate"
	"github.com/hookwall/hookwall/shared/engine/dispatch"
	"github.com/hookwall/hookwall/shared/engine/internal/testkit"
	"github.com/hookwall/hookwall/shared/engine/process"
	"github.com/hookwall/hookwall/shared/internal/registry"
)

// Option configures [Run].
type Option func(*testkit.Options)

// Redeliver makes every round deliver the dead letter n times at once, as
// SQS's at-least-once delivery does (default 1): the copies contend for the
// compensation lease together. n < 1 panics.
func Redeliver(n int) Option { return testkit.Redeliver("compensatetest", n) }

// CrashAfterEachUndo makes Run, after the plain run, run the event again
// once per compensation step of the plain run and per crash point: with a
// crash after the undo ran but before its journal entry was written, and
// with one just after it was written. From the crash on, every write of
// the crashed attempt is a no-op; the kit lets its lease run out and
// redelivers the dead letter until the event is done. Every crash run must
// end like the plain run, and no undo may be journaled twice.
func CrashAfterEachUndo() Option { return testkit.Crash }

// Attempts sets the compensator's attempt limit (default
// compensate.DefaultMaxAttempts). n < 1 panics.
func Attempts(n int) Option {
	if n < 1 {
		panic(fmt.Sprintf("compensatetest: Attempts(%d): must be at least 1", n))
	}
	return func(o *testkit.Options) { o.Attempts = n }
}

// Tenant sets the tenant of the delivered events (default
// processtest.DefaultTenant).
func Tenant(name string) Option { return testkit.Tenant(name) }

// MaxRounds bounds the rounds of deliveries of each phase (default
// processtest.DefaultMaxRounds); an event not done by then fails the test.
// n < 1 panics.
func MaxRounds(n int) Option { return testkit.MaxRounds("compensatetest", n) }

// Point is a crash point: a compensation step whose undo returned nil,
// before (Journaled false) or after (Journaled true) its journal entry was
// written; Step is the forward step undone.
type Point = testkit.Point

// EventReport is what became of one event Run delivered: its key, where a
// crash was injected (Crash, nil for the plain run), the final record's
// Status and LastError, its Journal in sort key order (forward and undo
// steps), and the dead letter's Deliveries, counted by verdict in Verdicts.
type EventReport struct {
	testkit.Event
	// FailedWith is the record's lastError when the processor gave up.
	FailedWith string
	// Compensations is the final record's compensation attempts.
	Compensations int
	// Undone lists the compensation steps in the order their journal
	// entries were written, as "handler/step" (the forward step).
	Undone []string
	// Outcomes are the outcome events the compensator published.
	Outcomes []webhook.Outcome
}

// Report is what [Run] observed: the plain run (EventReport, without
// crashes), every event Run delivered (Events: the plain run first, then
// one per crash point), the dead-letter deliveries of every event
// (Deliveries) and the crashes injected (Crashes).
type Report struct {
	EventReport
	testkit.Summary[EventReport]
}

// UndoKeys returns the idempotency keys of every journaled compensation
// step of every event, sorted: the keys an API should have seen for the
// undos, one per effect.
func (r *Report) UndoKeys() []string {
	var keys []string
	for _, ev := range r.Events {
		for _, e := range ev.Journal {
			if _, ok := registry.IsUndoStep(e.Step); ok {
				keys = append(keys, webhook.RunKey(ev.Key, e.Handler, e.Step, e.Run))
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
	k := &kit{run: testkit.Begin(t, "compensatetest", "undo", typ.Provider, typ.Name, payload, opts), reg: reg}
	sum := testkit.Drive(k.run, k)
	return &Report{EventReport: sum.Events[0], Summary: sum}
}

// kit is one Run's two phases: the processor's, then the compensator's.
type kit struct {
	run *testkit.Run
	reg *process.Registry
}

// undoStep names the crash points of the compensator: the journal writes
// of the undos, reported as the forward step undone.
func undoStep(step string) (string, bool) { return registry.IsUndoStep(step) }

// Event claims a new event, processes it until FAILED, then compensates it.
func (k *kit) Event(ctx context.Context, sc *testkit.Scenario) EventReport {
	r := k.run
	r.T.Helper()
	key, msg := r.Claim(ctx)
	q := &testkit.Queues{}
	failed := func(s webhook.Status) bool { return s == webhook.StatusFailed || s.Terminal() }
	_, rec := r.Deliver(ctx, testkit.NewScenario(-1, false), key, msg, testkit.Phase{Prefix: "p", Single: true, Done: failed,
		Engine: func(table testkit.Store) (testkit.Engine, error) {
			return dispatch.New(dispatch.Config{Registry: k.reg, Store: table, DLQ: q,
				Kernel: dispatch.Kernel{Queue: q, LeaseDuration: testkit.Lease, Now: r.Clock.Now, Logger: r.Log}})
		}})
	dead, ok := q.DeadLetter(key)
	switch {
	case rec.Status.Terminal():
		r.T.Fatalf("compensatetest: the processor ended %s %s; the handlers must fail the event to compensate it", key, rec.Status)
	case rec.Status != webhook.StatusFailed:
		r.T.Fatalf("compensatetest: %s not FAILED: %s (%q)", key, rec.Status, rec.LastError)
	case !ok:
		r.T.Fatalf("compensatetest: %s is FAILED but the processor sent no dead letter", key)
	}
	ev := EventReport{FailedWith: rec.LastError}
	pub := &testkit.Queues{}
	ev.Event, rec = r.Deliver(ctx, sc, key, dead, testkit.Phase{Prefix: "d", Point: undoStep, Done: webhook.Status.Terminal,
		Engine: func(table testkit.Store) (testkit.Engine, error) {
			return compensate.New(compensate.Config{Registry: k.reg, Store: table, Kernel: compensate.Kernel{Queue: pub,
				Publisher: pub, LeaseDuration: testkit.Lease, MaxAttempts: r.Options.Attempts, Now: r.Clock.Now, Logger: r.Log}})
		}})
	ev.Compensations, ev.Outcomes = int(rec.Compensations), pub.Outcomes()
	sc.Mu.Lock()
	ev.Undone = slices.Clone(sc.Order)
	sc.Mu.Unlock()
	return ev
}

// Check fails the test where a crash run broke a guarantee of the
// compensator's: no undo may be journaled twice, and the undos must be
// journaled in the plain run's order.
func (k *kit) Check(where string, sc *testkit.Scenario, _ testkit.Point, ev, plain EventReport) {
	t := k.run.T
	t.Helper()
	if len(sc.Again) > 0 {
		t.Errorf("compensatetest: %s: undos %v ran again after they were journaled", where, sc.Again)
	}
	if !slices.Equal(ev.Undone, plain.Undone) {
		t.Errorf("compensatetest: %s: undone in the order %v, the plain run %v", where, ev.Undone, plain.Undone)
	}
}

package processtest

import (
	"context"
	"slices"
	"testing"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/engine/dispatch"
	"github.com/hookwall/hookwall/shared/engine/internal/testkit"
	"github.com/hookwall/hookwall/shared/engine/process"
	"github.com/hookwall/hookwall/shared/internal/registry"
)

// Defaults of [Run].
const (
	// DefaultTenant is the tenant of the events Run delivers, unless [Tenant] says otherwise.
	DefaultTenant = testkit.DefaultTenant
	// DefaultMaxRounds is how many rounds of deliveries Run makes per event at most.
	DefaultMaxRounds = testkit.DefaultMaxRounds
	// Lease is the dispatcher's lease length in the kit. The kit's clock
	// (shared by the events table and the dispatcher) stands still while
	// the handlers run, so a live attempt never loses its lease, whatever
	// the handler's duration; after a crash the kit moves the clock past
	// the dead attempt's lease instead of waiting for it.
	Lease = testkit.Lease
)

// Option configures [Run].
type Option func(*testkit.Options)

// Redeliver makes every round deliver the same envelope n times at once,
// concurrently, as SQS's at-least-once delivery and the platforms' retries
// do (default 1): the n deliveries contend for the lease together (none
// goes on before all have tried), so one wins and the others find it busy,
// however fast the table answers. n < 1 panics.
func Redeliver(n int) Option { return testkit.Redeliver("processtest", n) }

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
func CrashAfterEachStep() Option { return testkit.Crash }

// Tenant sets the tenant of the delivered events (default [DefaultTenant]).
func Tenant(name string) Option { return testkit.Tenant(name) }

// MaxRounds bounds the rounds of deliveries per event (default
// [DefaultMaxRounds]); an event not done by then fails the test. The kit
// redelivers at once, ignoring the retry backoff. n < 1 panics.
func MaxRounds(n int) Option { return testkit.MaxRounds("processtest", n) }

// DeadLetter is a message the dispatcher sent to the dead-letter queue:
// the event key and the reason it was given up on.
type DeadLetter = testkit.DeadLetter

// Point is a crash point: a step whose function returned nil, before
// (Journaled false) or after (Journaled true) its journal entry was written.
type Point = testkit.Point

// EventReport is what became of one event Run delivered: its key, where a
// crash was injected (Crash, nil for the plain run), the final record's
// Status, Attempts and LastError, its Journal in sort key order
// ([webhook.DoneStep] entries included), and its Deliveries, counted by
// verdict in Verdicts (a crashed delivery counts as [dispatch.LeaseLost]:
// its closing write never landed).
type EventReport struct {
	testkit.Event
	// Attempts is the final record's attempt count.
	Attempts int
}

// Report is what [Run] observed: the plain run (EventReport, the event
// delivered without crashes), every event Run delivered (Events: the plain
// run first, then one per crash point), every delivery (Deliveries:
// Dispatcher.Handle calls), the crashes injected (Crashes) and the dead
// letters.
type Report struct {
	EventReport
	testkit.Summary[EventReport]
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
				keys = append(keys, webhook.RunKey(ev.Key, e.Handler, e.Step, e.Run))
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
	k := &kit{run: testkit.Begin(t, "processtest", "step", typ.Provider, typ.Name, payload, opts), reg: reg, q: &testkit.Queues{}}
	rep := &Report{Summary: testkit.Drive(k.run, k)}
	rep.EventReport, rep.DeadLetters = rep.Events[0], k.q.DeadLetters()
	return rep
}

// kit is one Run's processor side: its registry and queues.
type kit struct {
	run *testkit.Run
	reg *process.Registry
	q   *testkit.Queues
}

// forwardStep names the crash points of the processor: the journal writes
// of the handlers' steps (not their completion markers).
func forwardStep(step string) (string, bool) {
	_, undo := registry.IsUndoStep(step)
	return step, step != webhook.DoneStep && !undo
}

// Event claims a new event as the receiver does and delivers it in rounds
// until it is done (SUCCEEDED or FAILED).
func (k *kit) Event(ctx context.Context, sc *testkit.Scenario) EventReport {
	r := k.run
	key, msg := r.Claim(ctx)
	ev, rec := r.Deliver(ctx, sc, key, msg, testkit.Phase{Engine: k.dispatcher, Point: forwardStep, Prefix: "m",
		Done: func(s webhook.Status) bool { return s.Terminal() || s == webhook.StatusFailed }})
	return EventReport{Event: ev, Attempts: int(rec.Attempts)}
}

// dispatcher builds the processor on table.
func (k *kit) dispatcher(table testkit.Store) (testkit.Engine, error) {
	return dispatch.New(dispatch.Config{Registry: k.reg, Store: table, DLQ: k.q,
		Kernel: dispatch.Kernel{Queue: k.q, LeaseDuration: testkit.Lease, Now: k.run.Clock.Now, Logger: k.run.Log}})
}

// Check fails the test where a crash run broke a guarantee of the
// processor's: the crashed attempt must end (the handler returns Step's
// error), no journaled step may run again, and a step that crashed before
// its journal write must run again.
func (k *kit) Check(where string, sc *testkit.Scenario, p testkit.Point, ev, _ EventReport) {
	t := k.run.T
	t.Helper()
	if len(sc.Late) == 0 || (sc.Late[0] != "retry" && sc.Late[0] != "fail") {
		t.Errorf("processtest: %s: the attempt did not end (its next write was %v); the handler must return the error of Step (wrapped with %%w)",
			where, sc.Late)
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
}

package processtest

import (
	"context"
	"errors"
	"time"

	"github.com/hookwall/hookwall/shared/dispatch"
	"github.com/hookwall/hookwall/shared/internal/testkit"
	"github.com/hookwall/hookwall/shared/webhook"
)

// Point is a crash point: a step whose function returned nil, before
// (Journaled false) or after (Journaled true) its journal entry was written.
type Point struct {
	Key       string
	Handler   string
	Step      string
	Attempt   int
	Journaled bool
}

// errCrashed is what the journal write at the crash point returns to the
// dying attempt, so that its handler stops there.
var errCrashed = errors.New("processtest: simulated crash of the worker")

// scenario is one event's crash injection and the step points it saw.
type scenario struct {
	testkit.Scenario[Point]
	late []string // the dead attempt's writes after the crash, heartbeats left out
}

// newScenario crashes at the crashAt-th point (-1: none) whose Journaled
// is journaled.
func newScenario(crashAt int, journaled bool) *scenario {
	return &scenario{Scenario: testkit.Scenario[Point]{CrashAt: crashAt, Journaled: journaled}}
}

// at records p, reached by the attempt of owner, and reports whether the crash is to happen there.
func (s *scenario) at(p Point, owner string) bool { return s.At(p, p.Journaled, owner) }

// isDead reports whether owner is the crashed attempt, and records op.
func (s *scenario) isDead(owner, op string) bool {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	if !s.DeadLocked(owner) {
		return false
	}
	if op != "heartbeat" {
		s.late = append(s.late, op)
	}
	return true
}

// kitStore is the events table as one scenario's dispatcher sees it: it
// passes every call on, holds the copies of a round together at the lease
// (see [Redeliver]), records the step points, crashes the attempt at the
// scenario's point and then drops every write of the crashed attempt.
type kitStore struct {
	Store
	sc     *scenario
	rounds testkit.Rounds // see [Redeliver]
}

func (c *kitStore) Acquire(ctx context.Context, key, owner string, until time.Time) (webhook.Acquisition, error) {
	acq, err := c.Store.Acquire(ctx, key, owner, until)
	c.rounds.Wait(ctx)
	return acq, err
}

// LoadPayload passes the read on to the store when it keeps payloads apart
// (see [dispatch.PayloadLoader]).
func (c *kitStore) LoadPayload(ctx context.Context, key string) ([]byte, error) {
	if pl, ok := c.Store.(dispatch.PayloadLoader); ok {
		return pl.LoadPayload(ctx, key)
	}
	return nil, nil
}

func (c *kitStore) Heartbeat(ctx context.Context, l webhook.Lease, until time.Time) (bool, error) {
	if c.sc.isDead(l.Owner, "heartbeat") {
		return true, nil // the lease is not extended; the attempt is left to end on its own
	}
	return c.Store.Heartbeat(ctx, l, until)
}

func (c *kitStore) Complete(ctx context.Context, l webhook.Lease, retainUntil time.Time) (bool, error) {
	if c.sc.isDead(l.Owner, "complete") {
		return false, nil
	}
	return c.Store.Complete(ctx, l, retainUntil)
}

func (c *kitStore) Retry(ctx context.Context, l webhook.Lease, lastError string) (bool, error) {
	if c.sc.isDead(l.Owner, "retry") {
		return false, nil
	}
	return c.Store.Retry(ctx, l, lastError)
}

func (c *kitStore) Fail(ctx context.Context, l webhook.Lease, lastError string) (bool, error) {
	if c.sc.isDead(l.Owner, "fail") {
		return false, nil
	}
	return c.Store.Fail(ctx, l, lastError)
}

func (c *kitStore) SaveStep(ctx context.Context, l webhook.Lease, e webhook.JournalEntry) (bool, error) {
	if c.sc.isDead(l.Owner, "save "+e.Handler+"/"+e.Step) {
		return false, nil
	}
	if e.Step == webhook.DoneStep { // a handler's completion marker, not a step
		return c.Store.SaveStep(ctx, l, e)
	}
	p := Point{Key: l.Key, Handler: e.Handler, Step: e.Step, Attempt: l.Attempt}
	if c.sc.at(p, l.Owner) {
		return false, errCrashed
	}
	held, err := c.Store.SaveStep(ctx, l, e)
	if err != nil || !held {
		return held, err
	}
	p.Journaled = true
	if c.sc.at(p, l.Owner) {
		return false, errCrashed
	}
	return true, nil
}

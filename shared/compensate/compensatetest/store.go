package compensatetest

import (
	"context"
	"errors"
	"time"

	"github.com/hookwall/hookwall/shared/compensate"
	"github.com/hookwall/hookwall/shared/internal/registry"
	"github.com/hookwall/hookwall/shared/internal/testkit"
	"github.com/hookwall/hookwall/shared/webhook"
)

// Point is a crash point: a compensation step whose undo returned nil,
// before (Journaled false) or after (Journaled true) its journal entry was
// written.
type Point struct {
	Key     string
	Handler string
	// Step is the forward step undone.
	Step      string
	Attempt   int
	Journaled bool
}

// errCrashed is what the journal write at the crash point returns to the
// dying attempt, so that it stops there.
var errCrashed = errors.New("compensatetest: simulated crash of the worker")

// scenario is one event's crash injection and the undo points it saw.
type scenario struct {
	testkit.Scenario[Point]
	saved map[string]bool // "handler/$undo:step" journaled
	again []string        // undo steps journaled a second time (ran again after being journaled)
	order []string        // "handler/step" of every undo journal write that landed, in order
}

// newScenario crashes at the crashAt-th point (-1: none) whose Journaled
// is journaled.
func newScenario(crashAt int, journaled bool) *scenario {
	return &scenario{Scenario: testkit.Scenario[Point]{CrashAt: crashAt, Journaled: journaled}, saved: map[string]bool{}}
}

func (s *scenario) at(p Point, owner string) bool { return s.At(p, p.Journaled, owner) }

func (s *scenario) isDead(owner string) bool {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	return s.DeadLocked(owner)
}

// kitStore is the events table as one scenario's compensator sees it: it
// passes every call on, holds the copies of a round together at the lease,
// records the undo points, crashes the attempt at the scenario's point and
// then drops every write of the crashed attempt, as a dead worker's writes
// never land.
type kitStore struct {
	compensate.Store
	sc     *scenario
	rounds testkit.Rounds
}

func (c *kitStore) AcquireCompensation(ctx context.Context, key, owner string, until time.Time) (webhook.Acquisition, error) {
	acq, err := c.Store.AcquireCompensation(ctx, key, owner, until)
	c.rounds.Wait(ctx)
	return acq, err
}

func (c *kitStore) HeartbeatCompensation(ctx context.Context, l webhook.Lease, until time.Time) (bool, error) {
	if c.sc.isDead(l.Owner) {
		return true, nil // not extended: the lease runs out
	}
	return c.Store.HeartbeatCompensation(ctx, l, until)
}

func (c *kitStore) Compensated(ctx context.Context, l webhook.Lease, retainUntil time.Time) (bool, error) {
	if c.sc.isDead(l.Owner) {
		return false, nil
	}
	return c.Store.Compensated(ctx, l, retainUntil)
}

func (c *kitStore) Dead(ctx context.Context, l webhook.Lease, reason string, retainUntil time.Time) (bool, error) {
	if c.sc.isDead(l.Owner) {
		return false, nil
	}
	return c.Store.Dead(ctx, l, reason, retainUntil)
}

func (c *kitStore) RetryCompensation(ctx context.Context, l webhook.Lease, lastError string) (bool, error) {
	if c.sc.isDead(l.Owner) {
		return false, nil
	}
	return c.Store.RetryCompensation(ctx, l, lastError)
}

func (c *kitStore) SaveStep(ctx context.Context, l webhook.Lease, e webhook.JournalEntry) (bool, error) {
	if c.sc.isDead(l.Owner) {
		return false, nil
	}
	fwd, ok := registry.IsUndoStep(e.Step)
	if !ok {
		return c.Store.SaveStep(ctx, l, e)
	}
	p := Point{Key: l.Key, Handler: e.Handler, Step: fwd, Attempt: l.Attempt}
	if c.sc.at(p, l.Owner) {
		return false, errCrashed
	}
	held, err := c.Store.SaveStep(ctx, l, e)
	if err != nil || !held {
		return held, err
	}
	id := e.Handler + "/" + fwd
	c.sc.Mu.Lock()
	if c.sc.saved[id] {
		c.sc.again = append(c.sc.again, id)
	}
	c.sc.saved[id] = true
	c.sc.order = append(c.sc.order, id)
	c.sc.Mu.Unlock()
	p.Journaled = true
	if c.sc.at(p, l.Owner) {
		return false, errCrashed
	}
	return true, nil
}

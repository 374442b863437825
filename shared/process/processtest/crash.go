package processtest

import (
	"context"
	"errors"
	"sync"
	"time"

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
	crashAt   int // index among the points with Journaled == journaled; -1: no crash
	journaled bool

	mu     sync.Mutex
	seen   int
	fired  *Point
	dead   string   // the lease owner of the crashed attempt
	late   []string // the dead attempt's writes after the crash, heartbeats left out
	points []Point
}

// at records p, reached by the attempt of owner, and reports whether the crash is to happen there.
func (s *scenario) at(p Point, owner string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.points = append(s.points, p)
	if s.crashAt < 0 || s.fired != nil || p.Journaled != s.journaled {
		return false
	}
	if s.seen < s.crashAt {
		s.seen++
		return false
	}
	s.fired, s.dead = &p, owner
	return true
}

// isDead reports whether owner is the crashed attempt, and records op.
func (s *scenario) isDead(owner, op string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fired == nil || owner != s.dead {
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
	sc *scenario

	mu    sync.Mutex
	round *gate
}

// gate holds the n deliveries of a round after their Acquire until all n
// have acquired (or found the lease busy), so that they contend for the
// lease at once however fast the table answers.
type gate struct {
	n    int
	mu   sync.Mutex
	in   int
	open chan struct{}
}

func newGate(n int) *gate { return &gate{n: n, open: make(chan struct{})} }

func (g *gate) wait(ctx context.Context) {
	g.mu.Lock()
	g.in++
	if g.in == g.n {
		close(g.open)
	}
	g.mu.Unlock()
	select {
	case <-g.open:
	case <-ctx.Done():
	}
}

// startRound makes the next n acquisitions wait for each other.
func (c *kitStore) startRound(n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.round = newGate(n)
}

func (c *kitStore) Acquire(ctx context.Context, key, owner string, until time.Time) (webhook.Acquisition, error) {
	acq, err := c.Store.Acquire(ctx, key, owner, until)
	c.mu.Lock()
	g := c.round
	c.mu.Unlock()
	if g != nil {
		g.wait(ctx)
	}
	return acq, err
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

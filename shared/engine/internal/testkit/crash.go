package testkit

import (
	"context"
	"sync"
)

// Point is a crash point: a step whose function returned nil, before
// (Journaled false) or after (Journaled true) its journal entry was written.
// For a compensation step, Step is the forward step undone.
type Point struct {
	Key       string
	Handler   string
	Step      string
	Attempt   int
	Journaled bool
}

// Scenario is one event's crash injection and what its [FaultStore] saw.
// Mu guards its fields.
type Scenario struct {
	// CrashAt is the index of the crash among the points whose journaled
	// flag is Journaled (-1: no crash).
	CrashAt   int
	Journaled bool

	Mu     sync.Mutex
	seen   int
	Fired  *Point   // the crash point, once reached
	Dead   string   // the lease owner of the crashed attempt
	Points []Point  // every crash point reached, in order
	Order  []string // "handler/step" of every crash-point step whose journal write landed, in order
	Again  []string // those whose journal write landed a second time (ran again after being journaled)
	Late   []string // the crashed attempt's writes after the crash, heartbeats left out
	saved  map[string]bool
}

// NewScenario crashes at the crashAt-th point (-1: none) whose Journaled
// is journaled.
func NewScenario(crashAt int, journaled bool) *Scenario {
	return &Scenario{CrashAt: crashAt, Journaled: journaled, saved: map[string]bool{}}
}

// at records p, reached by the attempt of owner, and reports whether the
// crash is to happen there.
func (s *Scenario) at(p Point, owner string) bool {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	s.Points = append(s.Points, p)
	if s.CrashAt < 0 || s.Fired != nil || p.Journaled != s.Journaled {
		return false
	}
	if s.seen < s.CrashAt {
		s.seen++
		return false
	}
	s.Fired, s.Dead = &p, owner
	return true
}

// landed records the journal write of the crash-point step id.
func (s *Scenario) landed(id string) {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	if s.saved[id] {
		s.Again = append(s.Again, id)
	}
	s.saved[id] = true
	s.Order = append(s.Order, id)
}

// isDead reports whether owner is the crashed attempt, and records its
// write op (heartbeats left out).
func (s *Scenario) isDead(owner, op string) bool {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	if s.Fired == nil || owner != s.Dead {
		return false
	}
	if op != "heartbeat" {
		s.Late = append(s.Late, op)
	}
	return true
}

// Rounds holds the deliveries of the current round after their acquisition
// until all have acquired (or found the lease busy), so that they contend
// for the lease at once however fast the table answers. The zero Rounds
// holds nothing.
type Rounds struct {
	mu    sync.Mutex
	round *gate
}

type gate struct {
	n    int
	mu   sync.Mutex
	in   int
	open chan struct{}
}

// Start makes the next n acquisitions wait for each other.
func (r *Rounds) Start(n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.round = &gate{n: n, open: make(chan struct{})}
}

// Wait waits for the current round's other acquisitions (or ctx).
func (r *Rounds) Wait(ctx context.Context) {
	r.mu.Lock()
	g := r.round
	r.mu.Unlock()
	if g == nil {
		return
	}
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

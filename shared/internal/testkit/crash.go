package testkit

import (
	"context"
	"sync"
)

// Scenario is one event's crash injection and the points (of the kit's
// type P) it saw. Mu guards its fields and those of the kit that embeds it.
type Scenario[P any] struct {
	// CrashAt is the index of the crash among the points whose journaled
	// flag is Journaled (-1: no crash).
	CrashAt   int
	Journaled bool

	Mu     sync.Mutex
	seen   int
	Fired  *P     // the crash point, once reached
	Dead   string // the lease owner of the crashed attempt
	Points []P
}

// At records p (journaled: after its journal entry was written), reached
// by the attempt of owner, and reports whether the crash is to happen
// there.
func (s *Scenario[P]) At(p P, journaled bool, owner string) bool {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	s.Points = append(s.Points, p)
	if s.CrashAt < 0 || s.Fired != nil || journaled != s.Journaled {
		return false
	}
	if s.seen < s.CrashAt {
		s.seen++
		return false
	}
	s.Fired, s.Dead = &p, owner
	return true
}

// DeadLocked reports whether owner is the crashed attempt; s.Mu is held.
func (s *Scenario[P]) DeadLocked(owner string) bool { return s.Fired != nil && owner == s.Dead }

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

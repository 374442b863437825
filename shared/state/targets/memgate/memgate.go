// Package memgate is an in-memory [targets.Gate], for unit tests of the
// engines: it decides as targets.Table does (the same arithmetic) and passes
// the same contract suite (targets/targetstest). Several instances made with
// [Gate.Instance] share one state, as processor instances share a table.
package memgate

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/hookwall/hookwall/shared/state/targets"
	"github.com/hookwall/hookwall/shared/state/targets/internal/breaker"
)

// Gate is an in-memory [targets.Gate]. It is safe for concurrent use.
type Gate struct {
	st  *state
	cfg targets.Config
	p   breaker.Params
}

var _ targets.Gate = (*Gate)(nil)

// state is what the instances of one Gate share: the table.
type state struct {
	mu       sync.Mutex
	breakers map[string]breaker.State
	buckets  map[string]breaker.Bucket
	pauses   map[targets.Scope]targets.Pause
	writes   int // changes made, as the table's writes
}

// Writes returns how many changes the instances of g's state made, each
// standing for one write to the table (for the contract suite's count of
// writes per window).
func (g *Gate) Writes() int {
	g.st.mu.Lock()
	defer g.st.mu.Unlock()
	return g.st.writes
}

// New returns a Gate with its own empty state, configured by cfg (zero
// fields: targets.Config's defaults).
func New(cfg targets.Config) (*Gate, error) {
	return newGate(&state{
		breakers: map[string]breaker.State{},
		buckets:  map[string]breaker.Bucket{},
		pauses:   map[targets.Scope]targets.Pause{},
	}, cfg)
}

// Instance returns another Gate over g's state, configured by cfg: a
// second processor instance.
func (g *Gate) Instance(cfg targets.Config) (*Gate, error) { return newGate(g.st, cfg) }

func newGate(st *state, cfg targets.Config) (*Gate, error) {
	cfg, err := cfg.WithDefaults()
	if err != nil {
		return nil, fmt.Errorf("memgate: %w", err)
	}
	return &Gate{st: st, cfg: cfg, p: cfg.BreakerParams()}, nil
}

// SetRate sets the rate of target's bucket, overriding Config.Rate (0:
// back to Config.Rate).
func (g *Gate) SetRate(_ context.Context, target string, rate float64) error {
	if rate < 0 || target == "" {
		return fmt.Errorf("memgate: set rate %q %g: want a target and a rate of at least 0", target, rate)
	}
	g.st.mu.Lock()
	defer g.st.mu.Unlock()
	b := g.st.buckets[target]
	b.Rate = rate
	g.st.buckets[target] = b
	return nil
}

// Admit implements [targets.Gate.Admit].
func (g *Gate) Admit(ctx context.Context, s targets.Subject) (targets.Admission, error) {
	for polls := 0; ; polls++ {
		a, wait := g.admit(s)
		if !wait {
			return a, nil
		}
		if time.Duration(polls)*targets.PollEvery >= g.cfg.Wait {
			return targets.HoldDeciding(s.Target, g.cfg.Now(), g.cfg.Wait), nil
		}
		if err := targets.Poll(ctx); err != nil {
			return targets.Admission{}, err
		}
	}
}

// admit is one look at the state; wait: look again after PollEvery.
func (g *Gate) admit(s targets.Subject) (a targets.Admission, wait bool) {
	g.st.mu.Lock()
	defer g.st.mu.Unlock()
	now := g.cfg.Now()
	if sc, paused := targets.Covering(s, func(sc targets.Scope) bool { _, ok := g.st.pauses[sc]; return ok }); paused {
		return targets.HoldPaused(sc, now), false
	}
	if s.Target == "" {
		return targets.Admission{Verdict: targets.Allow}, false
	}
	ms := now.UnixMilli()
	b := g.st.breakers[s.Target]
	switch g.p.Admit(b, ms) {
	case breaker.Roll:
		b = breaker.Rolled(b, ms)
		g.st.breakers[s.Target] = b
		g.st.writes++
		return targets.Admission{Verdict: targets.Allow, Token: breaker.ReservedToken(b.WindowStart)}, false
	case breaker.Reserve:
		b = breaker.Reserved(b, ms)
		g.st.breakers[s.Target] = b
		g.st.writes++
		return targets.Admission{Verdict: targets.Allow, Token: breaker.ReservedToken(b.WindowStart)}, false
	case breaker.Free:
		return targets.Admission{Verdict: targets.Allow, Token: breaker.FreeToken}, false
	case breaker.TryProbe:
		owner := targets.NewProbeOwner()
		g.st.breakers[s.Target] = g.p.Probing(b, ms, owner)
		g.st.writes++
		return targets.Admission{Verdict: targets.Probe, Token: breaker.ProbeToken(owner)}, false
	case breaker.Hold:
		return targets.HoldOpen(s.Target, time.UnixMilli(b.ProbeAt)), false
	}
	return targets.Admission{}, true // breaker.Wait
}

// Report implements [targets.Gate.Report].
func (g *Gate) Report(_ context.Context, a targets.Admission, s targets.Subject, failed bool) (targets.Transition, error) {
	g.st.mu.Lock()
	defer g.st.mu.Unlock()
	now := g.cfg.Now()
	ms := now.UnixMilli()
	tr := targets.Transition{Target: s.Target, At: now}
	b, ok := g.st.breakers[s.Target]
	if !ok || s.Target == "" || a.Verdict == targets.Hold {
		return tr, nil
	}
	kind, window, owner := breaker.ParseToken(a.Token)
	switch kind {
	case 'p':
		if !failed && b.Open && b.ProbeOwner == owner {
			g.st.breakers[s.Target] = breaker.Closed(b, ms)
			g.st.writes++
			tr.Closed = true
		}
		return tr, nil
	case 'r', 'f':
		if o := breaker.Report(b, window, failed); o != breaker.Ignore {
			b = breaker.Apply(b, o)
			g.st.writes++
		}
		if g.p.ShouldOpen(b) {
			b = g.p.Opened(b, ms)
			g.st.writes++
			tr.Opened = true
		}
		g.st.breakers[s.Target] = b
	}
	return tr, nil
}

// Take implements [targets.Gate.Take].
func (g *Gate) Take(_ context.Context, target string, n int) (int, time.Time, error) {
	if target == "" || n < 0 {
		return 0, time.Time{}, fmt.Errorf("memgate: take %d of %q: want a target and n of at least 0", n, target)
	}
	g.st.mu.Lock()
	defer g.st.mu.Unlock()
	b := g.st.buckets[target]
	rate := cmp.Or(b.Rate, g.cfg.Rate)
	granted, after, next := breaker.Take(b, g.cfg.Now().UnixMilli(), rate, n)
	if granted > 0 {
		g.st.buckets[target] = after
		g.st.writes++
	}
	return granted, time.UnixMilli(next), nil
}

// Pause implements [targets.Gate.Pause].
func (g *Gate) Pause(_ context.Context, sc targets.Scope, by, reason string) error {
	if err := sc.Validate(); err != nil {
		return err
	}
	g.st.mu.Lock()
	defer g.st.mu.Unlock()
	g.st.pauses[sc] = targets.Pause{Scope: sc, By: by, Reason: reason, At: time.UnixMilli(g.cfg.Now().UnixMilli())}
	g.st.writes++
	return nil
}

// Resume implements [targets.Gate.Resume].
func (g *Gate) Resume(_ context.Context, sc targets.Scope) error {
	if err := sc.Validate(); err != nil {
		return err
	}
	g.st.mu.Lock()
	defer g.st.mu.Unlock()
	delete(g.st.pauses, sc)
	g.st.writes++
	return nil
}

// ProbeNow implements [targets.Prober].
func (g *Gate) ProbeNow(_ context.Context, target string) (bool, error) {
	g.st.mu.Lock()
	defer g.st.mu.Unlock()
	b, ok := g.st.breakers[target]
	if !ok || !b.Open {
		return false, nil
	}
	if now := g.cfg.Now().UnixMilli(); b.ProbeAt > now {
		b.ProbeAt = now
		g.st.breakers[target] = b
		g.st.writes++
	}
	return true, nil
}

// Pauses implements [targets.Gate.Pauses].
func (g *Gate) Pauses(context.Context) ([]targets.Pause, error) {
	g.st.mu.Lock()
	defer g.st.mu.Unlock()
	ps := slices.Collect(maps.Values(g.st.pauses))
	slices.SortFunc(ps, func(a, b targets.Pause) int { return cmp.Compare(a.Scope.String(), b.Scope.String()) })
	return ps, nil
}

// Breakers implements [targets.Gate.Breakers].
func (g *Gate) Breakers(context.Context) ([]targets.Breaker, error) {
	g.st.mu.Lock()
	defer g.st.mu.Unlock()
	var bs []targets.Breaker
	for _, name := range slices.Sorted(maps.Keys(g.st.breakers)) {
		bs = append(bs, targets.BreakerView(name, g.st.breakers[name]))
	}
	return bs, nil
}

// Blocked implements [targets.Gate.Blocked].
func (g *Gate) Blocked(_ context.Context, sc targets.Scope) (bool, error) {
	if err := sc.Validate(); err != nil {
		return false, err
	}
	g.st.mu.Lock()
	defer g.st.mu.Unlock()
	for _, w := range targets.Within(sc) {
		if _, paused := g.st.pauses[w]; paused {
			return true, nil
		}
	}
	return sc.Kind == targets.KindTarget && g.st.breakers[sc.Name].Open, nil
}

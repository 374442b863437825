package targets

import (
	"crypto/rand"
	"time"

	"github.com/hookwall/hookwall/shared/internal/registry"
	"github.com/hookwall/hookwall/shared/state/targets/internal/breaker"
)

// BreakerParams returns c's breaker arithmetic in milliseconds, for the
// Gate implementations of this module (targetsdb, memgate); c has its
// defaults.
func (c Config) BreakerParams() breaker.Params {
	return breaker.Params{
		MinCalls: int64(c.MinCalls), FailureRate: c.FailureRate,
		WindowMs: c.Window.Milliseconds(), ProbeMs: c.ProbeInterval.Milliseconds(), RatePerSecond: c.Rate,
	}
}

// NewProbeOwner returns a random probe owner.
func NewProbeOwner() string { return rand.Text() }

// HoldPaused is the Hold of an admission covered by the pause of sc.
func HoldPaused(sc Scope, now time.Time) Admission {
	return Admission{Verdict: Hold, Reason: "paused " + sc.Kind + " " + sc.Name, On: sc, RecheckAt: now.Add(PauseRecheck)}
}

// HoldOpen is the Hold of an admission to the open breaker of target, to
// be looked at again at probeAt (zero: the sweeper's default): the one
// place its reason is spelled.
func HoldOpen(target string, probeAt time.Time) Admission {
	return Admission{Verdict: Hold, Reason: "circuit open: " + target, On: Scope{KindTarget, target}, RecheckAt: probeAt}
}

// HoldDeciding is the Hold of an admission that waited wait for pending
// outcomes of target in vain.
func HoldDeciding(target string, now time.Time, wait time.Duration) Admission {
	return Admission{Verdict: Hold, Reason: "circuit deciding: " + target, On: Scope{KindTarget, target}, RecheckAt: now.Add(max(wait, PollEvery))}
}

// Covering returns the first scope of s that paused holds: handler, tenant,
// then target (see [Covers]).
func Covering(s Subject, paused func(Scope) bool) (Scope, bool) {
	for _, sc := range Covers(s) {
		if paused(sc) {
			return sc, true
		}
	}
	return Scope{}, false
}

// Covers returns the scopes whose pause holds a run of s, in the order they
// are checked: its handler, its tenant, its target (the breaker key) and,
// when that key is a tenant's share of a shared target
// ("<target>/@<tenant>", [BreakerKey]), the shared target, so that a pause
// of target/<target> holds every tenant's calls. Empty names are left out.
func Covers(s Subject) []Scope {
	var scs []Scope
	for _, sc := range []Scope{{KindHandler, s.Handler}, {KindTenant, s.Tenant}} {
		if sc.Name != "" {
			scs = append(scs, sc)
		}
	}
	if s.Target != "" {
		scs = append(scs, Within(Scope{KindTarget, s.Target})...)
	}
	return scs
}

// Within returns sc and, for a tenant's share of a shared target
// (target/<target>/@<tenant>), the target's scope: the scopes whose pause
// blocks sc.
func Within(sc Scope) []Scope {
	if sc.Kind != KindTarget {
		return []Scope{sc}
	}
	if base, tenant := SplitBreakerKey(sc.Name); tenant != "" {
		return []Scope{sc, {KindTarget, base}}
	}
	return []Scope{sc}
}

// BreakerKey returns the breaker key of target, shared by several tenants,
// for tenant: "<target>/@<tenant>". A handler whose target does not name
// the tenant has one breaker per tenant under such keys (failure counts,
// probes, holds); a pause of the target covers them all ([Covers]).
func BreakerKey(target, tenant string) string { return registry.BreakerKey(target, tenant) }

// SplitBreakerKey returns the shared target and the tenant of a key
// [BreakerKey] made; any other key is its own target, tenant "".
func SplitBreakerKey(key string) (target, tenant string) { return registry.SplitBreakerKey(key) }

// BreakerView is the Breaker of target in state s.
func BreakerView(target string, s breaker.State) Breaker {
	b := Breaker{Target: target, State: StateClosed, Calls: int(s.Calls), Fails: int(s.Fails), Oks: int(s.Oks)}
	if s.Open {
		b.State = StateOpen
	}
	for _, f := range []struct {
		ms int64
		t  *time.Time
	}{{s.WindowStart, &b.WindowStart}, {s.OpenedAt, &b.OpenedAt}, {s.ProbeAt, &b.ProbeAt}} {
		if f.ms != 0 {
			*f.t = time.UnixMilli(f.ms)
		}
	}
	return b
}

package targets

import (
	"crypto/rand"
	"time"

	"github.com/hookwall/hookwall/shared/targets/internal/breaker"
)

// Params returns c's breaker arithmetic in milliseconds (for the Gate
// implementations of this module; c has its defaults).
func (c Config) params() breaker.Params {
	return breaker.Params{
		MinCalls: int64(c.MinCalls), FailureRate: c.FailureRate,
		WindowMs: c.Window.Milliseconds(), ProbeMs: c.ProbeInterval.Milliseconds(), RatePerSecond: c.Rate,
	}
}

// newOwner returns a random probe owner.
func newOwner() string { return rand.Text() }

// pausedAdmission is the Hold of an admission covered by the pause of sc.
func pausedAdmission(sc Scope, now time.Time) Admission {
	return Admission{Verdict: Hold, Reason: "paused " + sc.Kind + " " + sc.Name, On: sc, RecheckAt: now.Add(PauseRecheck)}
}

// openAdmission is the Hold of an admission to the open breaker of target.
func openAdmission(target string, probeAt time.Time) Admission {
	return Admission{Verdict: Hold, Reason: "circuit open: " + target, On: Scope{KindTarget, target}, RecheckAt: probeAt}
}

// waitedAdmission is the Hold of an admission that waited Wait for pending
// outcomes of target in vain.
func waitedAdmission(target string, now time.Time, wait time.Duration) Admission {
	return Admission{Verdict: Hold, Reason: "circuit deciding: " + target, On: Scope{KindTarget, target}, RecheckAt: now.Add(max(wait, PollEvery))}
}

// covering returns the first scope of s that paused holds: handler, tenant,
// then target.
func covering(s Subject, paused func(Scope) bool) (Scope, bool) {
	for _, sc := range []Scope{{KindHandler, s.Handler}, {KindTenant, s.Tenant}, {KindTarget, s.Target}} {
		if sc.Name != "" && paused(sc) {
			return sc, true
		}
	}
	return Scope{}, false
}

// view is the Breaker of s.
func view(target string, s breaker.State) Breaker {
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

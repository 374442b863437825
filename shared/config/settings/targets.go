package settings

import (
	"strconv"
	"time"
)

// Targets is the behaviour of the targets' breakers and buckets
// (shared/state/targets), read by the processor (the breaker), the compensator
// (the sweeper's drain) and the CLI (resume, recover). A zero field is
// unset: targets.Config's default applies (targets.Config.With), so the
// defaults are stated there only. Field comments name the variable.
type Targets struct {
	// MinCalls is HOOKWALL_BREAKER_MIN_CALLS: the least completed calls in a
	// window before its failure rate can open a breaker, 1 to 1000.
	MinCalls int
	// FailureRate is HOOKWALL_BREAKER_FAILURE_RATE: the share of failed
	// calls that opens a breaker, more than 0 and at most 1.
	FailureRate float64
	// Window is HOOKWALL_BREAKER_WINDOW: a breaker's counting window, 1s to 1h.
	Window time.Duration
	// ProbeInterval is HOOKWALL_BREAKER_PROBE_INTERVAL: the time between
	// probes of an open breaker, 1s to 1h.
	ProbeInterval time.Duration
	// Rate is HOOKWALL_TARGET_RATE: calls per second to one target when
	// held events drain and in bulk recovery, more than 0 and at most 10000.
	Rate float64
}

// LoadTargets reads [Targets] through getenv, for the programs that read
// no function's settings (the CLI, the local runner); the processor's and
// the compensator's settings embed it.
func LoadTargets(getenv func(string) string) (Targets, error) {
	r := newReader(getenv)
	s := r.targets()
	return s, r.err("targets")
}

// TargetsVariables returns the variables [LoadTargets] reads, sorted.
func TargetsVariables() []string { return variables(func(r *reader) { r.targets() }) }

// targets reads the variables of [Targets]; each is left zero when unset.
func (r *reader) targets() Targets {
	var s Targets
	s.MinCalls = int(r.integer("HOOKWALL_BREAKER_MIN_CALLS", "", 0, 1, 1000))
	s.FailureRate = r.fraction("HOOKWALL_BREAKER_FAILURE_RATE", 0, 1)
	if r.get("HOOKWALL_BREAKER_WINDOW") != "" {
		s.Window, _ = r.durationIn("HOOKWALL_BREAKER_WINDOW", "", 0, 0, time.Second, time.Hour)
	}
	if r.get("HOOKWALL_BREAKER_PROBE_INTERVAL") != "" {
		s.ProbeInterval, _ = r.durationIn("HOOKWALL_BREAKER_PROBE_INTERVAL", "", 0, 0, time.Second, time.Hour)
	}
	s.Rate = r.fraction("HOOKWALL_TARGET_RATE", 0, 10000)
	return s
}

// fraction reads a decimal number in (lo, hi] from name; 0 when unset or
// invalid.
func (r *reader) fraction(name string, lo, hi float64) float64 {
	v := r.get(name)
	if v == "" {
		return 0
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || !(f > lo && f <= hi) {
		r.fail("%s=%q: want a number more than %g and at most %g", name, v, lo, hi)
		return 0
	}
	return f
}

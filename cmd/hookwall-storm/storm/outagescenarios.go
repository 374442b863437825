package storm

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/hookwall/hookwall/shared/settings"
	"github.com/hookwall/hookwall/shared/targets"
)

// The outage scenarios (issue 19): the forward target down, or a scope
// paused, for minutes, longer than the processor's whole retry budget.
const (
	// OutageFor is how long the target stays down (or the scope paused).
	OutageFor = 2 * time.Minute
	// OutageItems caps the items of an outage scenario: the drain runs at
	// the target's rate limit, so its length grows with the events held
	// (500 items ≈ 560 events ≈ 28 s at 20/s; 10,000 would take 9 min).
	OutageItems = 500
)

// OutageEnv are the settings of the outage scenarios, all stated here
// rather than left to defaults: the processor's retries as deployed (5
// attempts, backoff from 2 s doubling, so a 30 s retry budget; ChaosEnv
// lowers them), and the breaker and rate limit of the private stack (a
// probe every 15 s instead of 30 s and 20 calls/s instead of 10 so that a
// scenario stays within 4 minutes).
func OutageEnv() map[string]string {
	return map[string]string{
		"HOOKWALL_RETRY_BASE":             "2s",
		"HOOKWALL_RETRY_CAP":              "15m",
		"HOOKWALL_MAX_ATTEMPTS":           "5",
		"HOOKWALL_BREAKER_MIN_CALLS":      "5",
		"HOOKWALL_BREAKER_FAILURE_RATE":   "0.5",
		"HOOKWALL_BREAKER_WINDOW":         "60s",
		"HOOKWALL_BREAKER_PROBE_INTERVAL": "15s",
		"HOOKWALL_TARGET_RATE":            "20",
	}
}

// outageCheck reads the breaker and rate settings from env as the
// functions read them (settings.LoadTargets, targets.Config's defaults for
// what env leaves unset) and the retry budget from the processor's
// settings as loaded.
func outageCheck(kind string, env map[string]string, s *System) (OutageCheck, error) {
	ts, err := settings.LoadTargets(func(k string) string { return env[k] })
	if err != nil {
		return OutageCheck{}, fmt.Errorf("storm: outage settings: %w", err)
	}
	c, err := targets.Config{}.With(ts).WithDefaults()
	if err != nil {
		return OutageCheck{}, fmt.Errorf("storm: outage settings: %w", err)
	}
	return OutageCheck{Kind: kind, MinCalls: c.MinCalls, ProbeInterval: c.ProbeInterval, Rate: c.Rate, Burst: max(1, c.Rate),
		RetryBudget: RetryBudget(s.Processor.MaxAttempts, s.Processor.RetryBase, s.Processor.RetryCap)}, nil
}

// configureOutage applies OutageEnv and the item cap to o.
func configureOutage(o *Options) {
	o.N = min(o.N, OutageItems)
	if o.Env == nil {
		o.Env = map[string]string{}
	}
	maps.Copy(o.Env, OutageEnv())
}

// targetDown is scenario 1: the forward target answers 503 to every call
// from before the first delivery for OutageFor, then comes back.
func targetDown() Scenario {
	return Scenario{
		Name: "target-down",
		Faults: fmt.Sprintf("the forward target answers 503 to every call for %s from before the first delivery (4x the 30 s retry budget), then comes back; at most %d items",
			OutageFor, OutageItems),
		Configure: func(o *Options) {
			configureOutage(o)
			o.Target.Down = true
			env := o.Env
			o.Inspect = func(r *Report, s *System) {
				c, err := outageCheck("forward target down (503)", env, s)
				out := s.Target.Outages()
				if err != nil || len(out) == 0 || out[0].To.IsZero() {
					r.Outage = &OutageReport{Failures: []string{fmt.Sprintf("outage not measured: %v, outages %v", err, out)}}
					return
				}
				calls, _ := s.Target.Calls()
				r.Outage = AnalyzeOutage(c, out[0].From, out[0].To, calls, r.Outcome)
			}
		},
		During: func(ctx context.Context, f *Faults, s *System) error {
			out := s.Target.Outages()
			if len(out) == 0 {
				return errors.New("target-down: the target is not down")
			}
			sleep(ctx, time.Until(out[0].From.Add(OutageFor)))
			s.Target.SetDown(false)
			return nil
		},
	}
}

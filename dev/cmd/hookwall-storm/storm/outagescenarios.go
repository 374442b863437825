package storm

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/hookwall/hookwall/dev/cmd/hookwall-run/localrun"
	"github.com/hookwall/hookwall/shared/state/targets"
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
	// PauseFor is how long the pause scenarios keep their scope paused
	// (twice the 30 s retry budget: a pause holds without calling, so its
	// length only has to outlast what retries alone would survive).
	PauseFor = time.Minute
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

// outageCheck takes the breaker and rate settings as the functions read
// them ([System.targetsConfig]) and the retry budget from the processor's
// settings as loaded.
func outageCheck(kind string, s *System) (OutageCheck, error) {
	c, err := s.targetsConfig()
	if err != nil {
		return OutageCheck{}, err
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
			o.Inspect = func(r *Report, s *System) {
				c, err := outageCheck("forward target down (503)", s)
				out := s.Target.Outages()
				if err != nil || len(out) == 0 || out[0].To.IsZero() {
					r.Outage = &OutageReport{Failures: []string{fmt.Sprintf("outage not measured: %v, outages %v", err, out)}}
					return
				}
				calls, _ := s.Target.Calls()
				r.Outage = AnalyzeOutage(c, out[0].From, out[0].To, calls, r.Outcome, r.records)
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

// pauseScenario is scenario 2: sc paused before the first delivery, the
// storm held, then resumed PauseFor later as `hookwall resume` does it
// (the pause lifted, then the scope's held events drained at the target's
// rate, [System.Resume]); the target is healthy throughout and must see
// no call while the scope is paused.
func pauseScenario(name string, sc targets.Scope) Scenario {
	var pausedAt, resumedAt time.Time
	var released int
	cli := sc.Kind + "/" + sc.Name
	return Scenario{
		Name: name,
		Faults: fmt.Sprintf("%s paused before the first delivery, resumed %s later (hookwall resume: the pause lifted, the held events drained at the target's rate); the target healthy; at most %d items",
			cli, PauseFor, OutageItems),
		Configure: func(o *Options) {
			configureOutage(o)
			o.Before = func(ctx context.Context, s *System) error {
				pausedAt = time.Now()
				return s.Pause(ctx, sc)
			}
			o.Inspect = func(r *Report, s *System) {
				c, err := outageCheck("paused "+cli, s)
				if err != nil || resumedAt.IsZero() {
					r.Outage = &OutageReport{Failures: []string{fmt.Sprintf("pause not measured: %v", err)}}
					return
				}
				c.MinCalls, c.ProbeInterval = 0, 0 // a paused scope is never called
				calls, _ := s.Target.Calls()
				r.Outage = AnalyzeOutage(c, pausedAt, resumedAt, calls, r.Outcome, r.records)
				r.Outage.ReleasedByResume = released
			}
		},
		During: func(ctx context.Context, f *Faults, s *System) error {
			sleep(ctx, time.Until(pausedAt.Add(PauseFor)))
			if ctx.Err() != nil {
				return nil
			}
			resumedAt = time.Now()
			n, err := s.Resume(ctx, sc)
			released = n
			return err
		},
	}
}

// forwardTarget is the target of the built-in forwarding handler for the
// storm's tenant (forward.Register names "forward/{tenant}").
func forwardTarget() string { return "forward/" + localrun.DefaultTenant }

// outageScenarios returns the outage scenarios, in order.
func outageScenarios() []Scenario {
	return []Scenario{
		targetDown(),
		pauseScenario("pause-tenant", targets.Scope{Kind: targets.KindTenant, Name: localrun.DefaultTenant}),
		pauseScenario("pause-target", targets.Scope{Kind: targets.KindTarget, Name: forwardTarget()}),
	}
}

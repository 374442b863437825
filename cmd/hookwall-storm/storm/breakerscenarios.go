package storm

import (
	"context"
	"fmt"
	"time"

	"github.com/hookwall/hookwall/shared/targets"
	"github.com/hookwall/hookwall/shared/webhook"
)

// BreakerReport is the breaker scenarios' part of a report (issue 29): the
// figures they measured and what failed their checks.
type BreakerReport struct {
	Kind     string         `json:"kind"`
	Figures  map[string]any `json:"figures"`
	Failures []string       `json:"failures,omitempty"`
}

func (b *BreakerReport) fail(format string, a ...any) {
	b.Failures = append(b.Failures, fmt.Sprintf(format, a...))
}

// breakerVars are the breaker's variables: the breaker scenarios leave
// them unset, so that the functions run on targets.Config's defaults.
var breakerVars = []string{"HOOKWALL_BREAKER_MIN_CALLS", "HOOKWALL_BREAKER_FAILURE_RATE", "HOOKWALL_BREAKER_WINDOW"}

// FlakyAttempts are the attempts of the flaky-target scenario: an event
// fails them all with probability 0.2^10 = 1e-7 (at 13,000 events, 0.0013
// expected), so 0 DEAD is what the breaker must not spoil.
const FlakyAttempts = 10

// flakyTarget is issue 29's must-show 6: the forward target fails 20% of
// calls at random (503) and the breaker runs at its defaults; it must never
// open (its false-open rate is about 0.01% of windows), every event ends
// SUCCEEDED (0 FAILED, 0 DEAD), 0 lost, 0 doubled. Then a dead target, on
// the same table and configuration, must open at its MinCalls-th failed
// call.
func flakyTarget() Scenario {
	return Scenario{
		Name: "flaky-target",
		Faults: fmt.Sprintf("the forward target fails 20%% of its calls at random (503); the breaker at its defaults (%d calls at %g); %d attempts; then a dead target's breaker on the same table",
			targets.DefaultMinCalls, targets.DefaultFailureRate, FlakyAttempts),
		Configure: func(o *Options) {
			o.Target.Fail5xx = 0.2
			for _, k := range breakerVars {
				delete(o.Env, k)
			}
			o.Env["HOOKWALL_MAX_ATTEMPTS"] = fmt.Sprint(FlakyAttempts)
			o.Inspect = func(r *Report, s *System) { r.Breaker = inspectFlaky(r, s) }
		},
	}
}

// inspectFlaky checks the flaky-target scenario's run.
func inspectFlaky(r *Report, s *System) *BreakerReport {
	b := &BreakerReport{Kind: "flaky target, 20% at random", Figures: map[string]any{}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg, err := s.targetsConfig()
	if err != nil {
		b.fail("%v", err)
		return b
	}
	b.Figures["min_calls"], b.Figures["failure_rate"], b.Figures["window"] = cfg.MinCalls, cfg.FailureRate, cfg.Window.String()
	op, err := s.operator(ctx)
	if err != nil {
		b.fail("%v", err)
		return b
	}
	breakers, err := op.gate.Breakers(ctx)
	if err != nil {
		b.fail("read the breakers: %v", err)
		return b
	}
	opened := 0
	for _, br := range breakers {
		if br.Open() || !br.OpenedAt.IsZero() {
			opened++
			b.fail("breaker %s opened at %s (a target failing 20%% at random)", br.Target, br.OpenedAt.UTC().Format(time.RFC3339))
		}
	}
	b.Figures["breakers"], b.Figures["breakers_opened"] = len(breakers), opened
	b.Figures["target_calls"], b.Figures["target_failed_5xx"] = r.Target.Requests, r.Target.Failed5xx
	if r.Target.Requests > 0 {
		b.Figures["target_failed_share"] = round(float64(r.Target.Failed5xx)/float64(r.Target.Requests), 4)
	}
	run := r.SendWallS + r.SettleWallS
	b.Figures["run_s"], b.Figures["windows"] = round(run, 1), round(run/cfg.Window.Seconds(), 1)
	for _, st := range []webhook.Status{webhook.StatusFailed, webhook.StatusDead, webhook.StatusCompensated, webhook.StatusHeld} {
		if n := r.Outcome.Statuses[string(st)]; n > 0 {
			b.fail("%d events %s", n, st)
		}
	}
	b.Figures["dead"], b.Figures["dlq"] = r.Outcome.Dead, r.Outcome.DLQ
	// A dead target, the same table and configuration: every call fails.
	// The breaker must open at the MinCalls-th call and hold the next.
	sub := targets.Subject{Handler: "storm.dead", Tenant: "storm", Target: targets.BreakerKey("storm.dead", "storm")}
	calls, openedAt := 0, 0
	for calls < 10*cfg.MinCalls {
		adm, err := op.gate.Admit(ctx, sub)
		if err != nil {
			b.fail("dead target: admit: %v", err)
			return b
		}
		if adm.Verdict == targets.Hold {
			break
		}
		calls++
		tr, err := op.gate.Report(ctx, adm, sub, true)
		if err != nil {
			b.fail("dead target: report: %v", err)
			return b
		}
		if tr.Opened {
			openedAt = calls
		}
	}
	b.Figures["dead_target_calls_before_hold"], b.Figures["dead_target_opened_at_call"] = calls, openedAt
	if openedAt != cfg.MinCalls || calls != cfg.MinCalls {
		b.fail("a dead target opened at call %d and was called %d times, want both %d (MinCalls)", openedAt, calls, cfg.MinCalls)
	}
	return b
}

// breakerScenarios returns the breaker scenarios (issue 29), in order.
func breakerScenarios() []Scenario { return []Scenario{flakyTarget()} }

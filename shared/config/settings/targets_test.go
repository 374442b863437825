package settings

import (
	"slices"
	"testing"
	"time"
)

func TestTargetsUnsetIsZero(t *testing.T) {
	s, err := LoadTargets(env())
	if err != nil || s != (Targets{}) {
		t.Fatalf("LoadTargets(empty) = %+v, %v; want zero (targets.Config's defaults)", s, err)
	}
}

func TestTargetsSet(t *testing.T) {
	getenv := env("HOOKWALL_BREAKER_MIN_CALLS", "3", "HOOKWALL_BREAKER_FAILURE_RATE", "0.25", "HOOKWALL_BREAKER_WINDOW", "2m",
		"HOOKWALL_BREAKER_PROBE_INTERVAL", "10s", "HOOKWALL_TARGET_RATE", "2.5")
	want := Targets{MinCalls: 3, FailureRate: 0.25, Window: 2 * time.Minute, ProbeInterval: 10 * time.Second, Rate: 2.5}
	if s, err := LoadTargets(getenv); err != nil || s != want {
		t.Errorf("LoadTargets = %+v, %v; want %+v", s, err, want)
	}
	p, _, err := LoadProcessor(processorEnv("HOOKWALL_BREAKER_MIN_CALLS", "3", "HOOKWALL_TARGET_RATE", "2.5"))
	if err != nil || p.Targets != (Targets{MinCalls: 3, Rate: 2.5}) {
		t.Errorf("LoadProcessor: Targets %+v, %v", p.Targets, err)
	}
	c, _, err := LoadCompensator(processorEnv("HOOKWALL_BREAKER_PROBE_INTERVAL", "1m"), testCompensatorDefaults)
	if err != nil || c.Targets != (Targets{ProbeInterval: time.Minute}) {
		t.Errorf("LoadCompensator: Targets %+v, %v", c.Targets, err)
	}
}

func TestTargetsBounds(t *testing.T) {
	bad := []string{
		"HOOKWALL_BREAKER_MIN_CALLS", "0", "HOOKWALL_BREAKER_MIN_CALLS", "1001", "HOOKWALL_BREAKER_MIN_CALLS", "x",
		"HOOKWALL_BREAKER_FAILURE_RATE", "0", "HOOKWALL_BREAKER_FAILURE_RATE", "1.01", "HOOKWALL_BREAKER_FAILURE_RATE", "50%",
		"HOOKWALL_BREAKER_FAILURE_RATE", "NaN",
		"HOOKWALL_BREAKER_WINDOW", "999ms", "HOOKWALL_BREAKER_WINDOW", "2h", "HOOKWALL_BREAKER_WINDOW", "60",
		"HOOKWALL_BREAKER_PROBE_INTERVAL", "0s", "HOOKWALL_BREAKER_PROBE_INTERVAL", "61m",
		"HOOKWALL_TARGET_RATE", "0", "HOOKWALL_TARGET_RATE", "-1", "HOOKWALL_TARGET_RATE", "10001", "HOOKWALL_TARGET_RATE", "Inf",
	}
	for i := 0; i < len(bad); i += 2 {
		_, err := LoadTargets(env(bad[i], bad[i+1]))
		wantErrors(t, err, "targets configuration", bad[i])
	}
	for _, ok := range [][2]string{{"HOOKWALL_BREAKER_FAILURE_RATE", "1"}, {"HOOKWALL_BREAKER_WINDOW", "1h"}, {"HOOKWALL_TARGET_RATE", "0.1"},
		{"HOOKWALL_BREAKER_MIN_CALLS", "1"}, {"HOOKWALL_BREAKER_PROBE_INTERVAL", "1s"}} {
		if _, err := LoadTargets(env(ok[0], ok[1])); err != nil {
			t.Errorf("%s=%s: %v", ok[0], ok[1], err)
		}
	}
}

func TestTargetsVariables(t *testing.T) {
	want := []string{"HOOKWALL_BREAKER_FAILURE_RATE", "HOOKWALL_BREAKER_MIN_CALLS", "HOOKWALL_BREAKER_PROBE_INTERVAL",
		"HOOKWALL_BREAKER_WINDOW", "HOOKWALL_TARGET_RATE"}
	if got := TargetsVariables(); !slices.Equal(got, want) {
		t.Errorf("TargetsVariables() = %v, want %v", got, want)
	}
	for name, vars := range map[string][]string{"processor": ProcessorVariables(), "compensator": CompensatorVariables()} {
		for _, v := range want {
			if !slices.Contains(vars, v) {
				t.Errorf("the %s does not read %s", name, v)
			}
		}
	}
}

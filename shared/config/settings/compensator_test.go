package settings

import (
	"log/slog"
	"reflect"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/internal/kernel"
)

// testCompensatorDefaults are deliberately unlike the sweeper's real
// defaults; the lease, retry and retention defaults are the kernel's.
var testCompensatorDefaults = CompensatorDefaults{SweepLimit: 250, SweepLag: 90 * time.Second, SweepMaxPassed: 3000,
	ReenqueueGrace: 4 * time.Second, SweepStuckAfter: 7 * time.Minute}

func TestCompensatorDefaults(t *testing.T) {
	s, warnings, err := LoadCompensator(processorEnv(), testCompensatorDefaults)
	if err != nil || len(warnings) != 0 {
		t.Fatalf("got %v, warnings %v", err, warnings)
	}
	want := Compensator{
		Common: Common{TableName: "hookwall-events", QueueURL: "http://127.0.0.1:9324/000000000000/hookwall-events",
			TenantsSecretARN: "arn:aws:secretsmanager:eu-west-1:1:secret:t", LogLevel: slog.LevelInfo},
		DLQURL:        "http://127.0.0.1:9324/000000000000/hookwall-events-dlq",
		OutcomeEvents: kernel.DefaultOutcomeEvents,
		Lease:         kernel.DefaultLeaseDuration, CompensationAttempts: kernel.DefaultMaxAttempts, RetryBase: kernel.DefaultRetryBase,
		RetryCap: kernel.DefaultRetryCap, Retention: kernel.DefaultRetention,
		SweepLimit: 250, SweepLag: 90 * time.Second, SweepMaxPassed: 3000, ReenqueueGrace: 4 * time.Second,
		SweepStuckAfter: 7 * time.Minute,
	}
	if s.Getenv == nil || s.Getenv("TABLE_NAME") != "hookwall-events" {
		t.Error("Getenv is not the environment the configuration was read from")
	}
	s.Getenv = nil
	if !reflect.DeepEqual(s, want) {
		t.Errorf("got %+v\nwant %+v", s, want)
	}
}

func TestCompensatorValues(t *testing.T) {
	s, _, err := LoadCompensator(processorEnv("EVENT_BUS_NAME", "outcomes", "HOOKWALL_LEASE", "90s",
		"HOOKWALL_COMPENSATION_ATTEMPTS", "9", "HOOKWALL_RETRY_BASE", "1s", "HOOKWALL_RETRY_CAP", "1h",
		"HOOKWALL_RETENTION", "720h", "HOOKWALL_SWEEP_LIMIT", "1000", "HOOKWALL_REENQUEUE_GRACE", "5s",
		"HOOKWALL_SWEEP_STUCK_AFTER", "10m", "HOOKWALL_SWEEP_LAG", "2m", "HOOKWALL_SWEEP_MAX_PASSED", "50000"),
		testCompensatorDefaults)
	if err != nil {
		t.Fatal(err)
	}
	if s.EventBusName != "outcomes" || s.Lease != 90*time.Second || s.CompensationAttempts != 9 || s.RetryBase != time.Second ||
		s.RetryCap != time.Hour || s.Retention != 720*time.Hour || s.SweepLimit != 1000 || s.ReenqueueGrace != 5*time.Second ||
		s.SweepStuckAfter != 10*time.Minute || s.SweepLag != 2*time.Minute || s.SweepMaxPassed != 50000 {
		t.Errorf("got %+v", s)
	}
}

func TestCompensatorErrorsNameEachVariable(t *testing.T) {
	_, _, err := LoadCompensator(env("QUEUE_URL", "nope", "HOOKWALL_COMPENSATION_ATTEMPTS", "0",
		"HOOKWALL_LEASE", "1s", "HOOKWALL_RETRY_CAP", "13h", "HOOKWALL_SWEEP_LIMIT", "x", "HOOKWALL_REENQUEUE_GRACE", "2h",
		"HOOKWALL_SWEEP_STUCK_AFTER", "5s", "HOOKWALL_RETENTION", "1h", "EVENT_BUS_NAME", "bad bus",
		"HOOKWALL_SWEEP_LAG", "1s", "HOOKWALL_SWEEP_MAX_PASSED", "0"), testCompensatorDefaults)
	wantErrors(t, err, "compensator configuration", "TABLE_NAME", "QUEUE_URL", "DLQ_URL", "HOOKWALL_TENANTS_FILE",
		"HOOKWALL_COMPENSATION_ATTEMPTS", "HOOKWALL_LEASE", "HOOKWALL_RETRY_CAP", "HOOKWALL_SWEEP_LIMIT",
		"HOOKWALL_REENQUEUE_GRACE", "HOOKWALL_SWEEP_STUCK_AFTER", "HOOKWALL_RETENTION", "EVENT_BUS_NAME",
		"HOOKWALL_SWEEP_LAG", "HOOKWALL_SWEEP_MAX_PASSED")

	_, _, err = LoadCompensator(processorEnv("HOOKWALL_RETRY_BASE", "2m", "HOOKWALL_RETRY_CAP", "1m"), testCompensatorDefaults)
	wantErrors(t, err, "HOOKWALL_RETRY_BASE", "HOOKWALL_RETRY_CAP")
}

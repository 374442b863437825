package settings

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/internal/kernel"
)

// Test defaults, deliberately unlike the real ones: what the loaders return
// for an unset variable must come from the defaults they are given.
var (
	testReceiverDefaults = ReceiverDefaults{
		DedupWindow: 48 * time.Hour, Budget: time.Second, MaxBody: 4096, Tolerance: time.Minute,
		GraceMargin: 2 * time.Second, EventAgeMargin: 2 * time.Hour,
		HandedOffBytes: 1 << 20, HandedOffMargin: 250 * time.Millisecond,
	}
)

func env(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

func receiverEnv(kv ...string) func(string) string {
	return env(append([]string{"TABLE_NAME", "hookwall-events", "QUEUE_URL", "http://127.0.0.1:9324/000000000000/hookwall-events",
		"HOOKWALL_TENANTS_FILE", "infra/local/tenants.json"}, kv...)...)
}

func processorEnv(kv ...string) func(string) string {
	return env(append([]string{"TABLE_NAME", "hookwall-events", "QUEUE_URL", "http://127.0.0.1:9324/000000000000/hookwall-events",
		"DLQ_URL", "http://127.0.0.1:9324/000000000000/hookwall-events-dlq", "TENANTS_SECRET_ARN", "arn:aws:secretsmanager:eu-west-1:1:secret:t"}, kv...)...)
}

func wantErrors(t *testing.T, err error, names ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want one naming %v", names)
	}
	for _, name := range names {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("error %q does not name %s", err, name)
		}
	}
}

func TestReceiverDefaults(t *testing.T) {
	s, warnings, err := LoadReceiver(receiverEnv(), testReceiverDefaults)
	if err != nil || len(warnings) != 0 {
		t.Fatalf("got %v, warnings %v", err, warnings)
	}
	want := Receiver{
		Common: Common{TableName: "hookwall-events", QueueURL: "http://127.0.0.1:9324/000000000000/hookwall-events",
			TenantsFile: "infra/local/tenants.json", LogLevel: slog.LevelInfo},
		DedupWindow: 48 * time.Hour, ReenqueueGrace: 3 * time.Second, MaxEventAge: 46 * time.Hour,
		Budget: time.Second, MaxBody: 4096, Tolerance: time.Minute,
		HandedOffBytes: 1 << 20, HandedOffTTL: 2750 * time.Millisecond,
	}
	if s != want {
		t.Errorf("got %+v, want %+v", s, want)
	}
}

func TestReceiverSet(t *testing.T) {
	s, _, err := LoadReceiver(receiverEnv("HOOKWALL_DEDUP_WINDOW", "24h", "HOOKWALL_MAX_BODY_BYTES", "2048",
		"LOG_LEVEL", "debug", "HOOKWALL_RECEIVE_BUDGET", "500ms", "HOOKWALL_TIMESTAMP_TOLERANCE", "-1s"), testReceiverDefaults)
	if err != nil {
		t.Fatal(err)
	}
	if s.DedupWindow != 24*time.Hour || s.MaxBody != 2048 || s.LogLevel != slog.LevelDebug || s.Budget != 500*time.Millisecond ||
		s.ReenqueueGrace != 2500*time.Millisecond || s.MaxEventAge != 22*time.Hour || s.Tolerance != -time.Second {
		t.Errorf("got %+v", s)
	}
	// A short window: the default event age keeps at least half of it.
	s, _, err = LoadReceiver(receiverEnv("HOOKWALL_DEDUP_WINDOW", "90m"), testReceiverDefaults)
	if err != nil || s.MaxEventAge != 45*time.Minute {
		t.Errorf("window 90m: max event age %v, %v; want 45m", s.MaxEventAge, err)
	}
	// 0 asks for the derived value, as an unset variable does.
	s, _, err = LoadReceiver(receiverEnv("HOOKWALL_REENQUEUE_GRACE", "0s", "HOOKWALL_MAX_EVENT_AGE", "0"), testReceiverDefaults)
	if err != nil || s.ReenqueueGrace != 3*time.Second || s.MaxEventAge != 46*time.Hour {
		t.Errorf("explicit zeros: %+v, %v", s, err)
	}
}

func TestReceiverNamesEveryBadVariable(t *testing.T) {
	_, _, err := LoadReceiver(env("HOOKWALL_TENANTS_FILE", "/x.json", "TENANTS_SECRET_ARN", "arn:x",
		"HOOKWALL_DEDUP_WINDOW", "soon", "HOOKWALL_MAX_BODY_BYTES", "-1", "HOOKWALL_TIMESTAMP_TOLERANCE", "5 minutes",
		"LOG_LEVEL", "loud"), testReceiverDefaults)
	wantErrors(t, err, "TABLE_NAME is required", "QUEUE_URL is required", "TENANTS_SECRET_ARN",
		`HOOKWALL_DEDUP_WINDOW="soon"`, `HOOKWALL_MAX_BODY_BYTES="-1"`, "HOOKWALL_TIMESTAMP_TOLERANCE", `LOG_LEVEL="loud"`)
	if n := strings.Count(err.Error(), "\n") + 1; n != 7 {
		t.Errorf("got %d errors, want 7 (one per variable): %v", n, err)
	}

	_, _, err = LoadReceiver(receiverEnv("HOOKWALL_RECEIVE_BUDGET", "2s", "HOOKWALL_REENQUEUE_GRACE", "2s"), testReceiverDefaults)
	wantErrors(t, err, "HOOKWALL_REENQUEUE_GRACE (2s) must exceed HOOKWALL_RECEIVE_BUDGET (2s)")
	_, _, err = LoadReceiver(receiverEnv("HOOKWALL_MAX_EVENT_AGE", "48h"), testReceiverDefaults)
	wantErrors(t, err, "HOOKWALL_MAX_EVENT_AGE (48h) must be positive and shorter than HOOKWALL_DEDUP_WINDOW (48h)")
	_, _, err = LoadReceiver(receiverEnv("HOOKWALL_RECEIVE_BUDGET", "-1s", "HOOKWALL_DEDUP_WINDOW", "0s"), testReceiverDefaults)
	wantErrors(t, err, "HOOKWALL_RECEIVE_BUDGET=-1s: must be positive", "HOOKWALL_DEDUP_WINDOW=0s: must be positive")
	_, _, err = LoadReceiver(receiverEnv("QUEUE_URL", "hookwall-events", "TABLE_NAME", "a b"), testReceiverDefaults)
	wantErrors(t, err, "QUEUE_URL: want an absolute http(s) URL", `TABLE_NAME="a b"`)
}

func TestProcessorDefaults(t *testing.T) {
	s, warnings, err := LoadProcessor(processorEnv())
	if err != nil || len(warnings) != 0 {
		t.Fatalf("got %v, warnings %v", err, warnings)
	}
	// The processor's defaults are the kernel's: stated there once, for every binary.
	if s.Concurrency != kernel.DefaultConcurrency || s.Lease != kernel.DefaultLeaseDuration || s.RetryBase != kernel.DefaultRetryBase ||
		s.RetryCap != kernel.DefaultRetryCap || s.MaxAttempts != kernel.DefaultMaxAttempts || s.Retention != kernel.DefaultRetention ||
		s.UnhandledToDLQ || s.EventBusName != "" || s.OutcomeEvents != kernel.DefaultOutcomeEvents || s.DLQURL == "" ||
		s.TenantsSecretARN == "" || s.Getenv == nil || s.Getenv("DLQ_URL") != s.DLQURL {
		t.Errorf("got %+v", s)
	}
}

func TestProcessorSet(t *testing.T) {
	s, warnings, err := LoadProcessor(processorEnv("HOOKWALL_PROCESSOR_CONCURRENCY", "20", "HOOKWALL_LEASE", "30s",
		"HOOKWALL_RETRY_BASE", "500ms", "HOOKWALL_RETRY_CAP", "1h", "HOOKWALL_MAX_ATTEMPTS", "8", "HOOKWALL_RETENTION", "720h",
		"HOOKWALL_UNHANDLED_TO_DLQ", "true", "EVENT_BUS_NAME", "hookwall-outcomes"))
	if err == nil || !strings.Contains(err.Error(), `HOOKWALL_RETRY_BASE=500ms: want 1s to 12h`) {
		t.Errorf("retry base below 1s: got %v", err)
	}
	s, warnings, err = LoadProcessor(processorEnv("HOOKWALL_PROCESSOR_CONCURRENCY", "20", "HOOKWALL_LEASE", "30s",
		"HOOKWALL_RETRY_BASE", "5s", "HOOKWALL_RETRY_CAP", "1h", "HOOKWALL_MAX_ATTEMPTS", "8", "HOOKWALL_RETENTION", "720h",
		"HOOKWALL_UNHANDLED_TO_DLQ", "true", "EVENT_BUS_NAME", "hookwall-outcomes", "HOOKWALL_OUTCOME_EVENTS", "each"))
	if err != nil || len(warnings) != 0 {
		t.Fatalf("got %v, warnings %v", err, warnings)
	}
	if s.Concurrency != 20 || s.Lease != 30*time.Second || s.RetryBase != 5*time.Second || s.RetryCap != time.Hour ||
		s.MaxAttempts != 8 || s.Retention != 30*24*time.Hour || !s.UnhandledToDLQ || s.EventBusName != "hookwall-outcomes" ||
		s.OutcomeEvents != kernel.OutcomesEach {
		t.Errorf("got %+v", s)
	}
}

// The deprecated names are read, in their old units, when the new name is
// unset, and each use is a warning naming the replacement with its value.
func TestProcessorDeprecatedNames(t *testing.T) {
	s, warnings, err := LoadProcessor(processorEnv("PROCESSOR_CONCURRENCY", "3", "LEASE_SECONDS", "30",
		"RETRY_BASE_SECONDS", "4", "RETRY_CAP_SECONDS", "900", "MAX_ATTEMPTS", "6", "RETENTION_DAYS", "14",
		"UNHANDLED_TO_DLQ", "1"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Concurrency != 3 || s.Lease != 30*time.Second || s.RetryBase != 4*time.Second || s.RetryCap != 15*time.Minute ||
		s.MaxAttempts != 6 || s.Retention != 14*24*time.Hour || !s.UnhandledToDLQ {
		t.Errorf("got %+v", s)
	}
	want := []string{
		"PROCESSOR_CONCURRENCY is deprecated: set HOOKWALL_PROCESSOR_CONCURRENCY=3 instead",
		"LEASE_SECONDS is deprecated: set HOOKWALL_LEASE=30s instead",
		"RETRY_BASE_SECONDS is deprecated: set HOOKWALL_RETRY_BASE=4s instead",
		"RETRY_CAP_SECONDS is deprecated: set HOOKWALL_RETRY_CAP=15m instead",
		"MAX_ATTEMPTS is deprecated: set HOOKWALL_MAX_ATTEMPTS=6 instead",
		"RETENTION_DAYS is deprecated: set HOOKWALL_RETENTION=336h instead",
		"UNHANDLED_TO_DLQ is deprecated: set HOOKWALL_UNHANDLED_TO_DLQ=true instead",
	}
	if strings.Join(warnings, "\n") != strings.Join(want, "\n") {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(warnings, "\n"), strings.Join(want, "\n"))
	}

	// Both set: the new name wins and the old one is reported as ignored.
	s, warnings, err = LoadProcessor(processorEnv("HOOKWALL_LEASE", "20s", "LEASE_SECONDS", "30"))
	if err != nil || s.Lease != 20*time.Second || len(warnings) != 1 ||
		warnings[0] != "LEASE_SECONDS is ignored because HOOKWALL_LEASE is set; remove LEASE_SECONDS (deprecated)" {
		t.Errorf("both set: lease %v, warnings %q, %v", s.Lease, warnings, err)
	}

	// An old name's error names the old name, in its old form.
	_, _, err = LoadProcessor(processorEnv("LEASE_SECONDS", "60s", "RETENTION_DAYS", "0", "MAX_ATTEMPTS", "zero",
		"RETRY_BASE_SECONDS", "100", "RETRY_CAP_SECONDS", "10"))
	wantErrors(t, err, `LEASE_SECONDS="60s": want a whole number of seconds`, "RETENTION_DAYS=0s: want 24h to 8760h",
		`MAX_ATTEMPTS="zero"`, "RETRY_BASE_SECONDS (1m40s) is above RETRY_CAP_SECONDS (10s)")
}

func TestProcessorNamesEveryBadVariable(t *testing.T) {
	_, _, err := LoadProcessor(env("HOOKWALL_PROCESSOR_CONCURRENCY", "0", "HOOKWALL_LEASE", "60", "HOOKWALL_RETRY_BASE", "20m",
		"HOOKWALL_MAX_ATTEMPTS", "101", "HOOKWALL_RETENTION", "7d", "HOOKWALL_UNHANDLED_TO_DLQ", "yes",
		"EVENT_BUS_NAME", "my bus", "HOOKWALL_OUTCOME_EVENTS", "all",
		"TENANTS_SECRET_ARN", "arn:aws:secretsmanager:x "))
	wantErrors(t, err, "TABLE_NAME is required", "QUEUE_URL is required", "DLQ_URL is required",
		`HOOKWALL_PROCESSOR_CONCURRENCY="0"`, `HOOKWALL_LEASE="60": want a Go duration such as "`+formatDuration(kernel.DefaultLeaseDuration)+`"`,
		"HOOKWALL_RETRY_BASE (20m) is above HOOKWALL_RETRY_CAP ("+formatDuration(kernel.DefaultRetryCap)+")", `HOOKWALL_MAX_ATTEMPTS="101": want an integer from 1 to 100`,
		`HOOKWALL_RETENTION="7d"`, `HOOKWALL_UNHANDLED_TO_DLQ="yes"`, `EVENT_BUS_NAME="my bus"`,
		`HOOKWALL_OUTCOME_EVENTS="all": want each, failures or none`,
		"TENANTS_SECRET_ARN: contains a space")
	_, _, err = LoadProcessor(processorEnv("HOOKWALL_RETRY_CAP", "13h", "HOOKWALL_LEASE", "2s"))
	wantErrors(t, err, "HOOKWALL_RETRY_CAP=13h: want 1s to 12h", "HOOKWALL_LEASE=2s: want 3s to 15m")
}

func TestLogLevelSetOnError(t *testing.T) {
	s, _, err := LoadProcessor(env("LOG_LEVEL", "ERROR"))
	if err == nil || s.LogLevel != slog.LevelError {
		t.Errorf("log level %v, error %v; want ERROR and an error", s.LogLevel, err)
	}
}

func TestWarningsLog(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, nil))
	Warnings(nil).Log(log)
	if buf.Len() != 0 {
		t.Errorf("no warnings logged %q", buf.String())
	}
	Warnings{"A is deprecated", "B is deprecated"}.Log(log)
	if n := strings.Count(buf.String(), "\n"); n != 1 || !strings.Contains(buf.String(), `"warnings":["A is deprecated","B is deprecated"]`) {
		t.Errorf("logged %q, want one line with both warnings", buf.String())
	}
}

func TestFormatDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		60 * time.Second: "1m", 168 * time.Hour: "168h", 90 * time.Minute: "1h30m", 1500 * time.Millisecond: "1.5s",
		0: "0s", 3*time.Hour + 5*time.Second: "3h0m5s",
	} {
		if got := formatDuration(d); got != want {
			t.Errorf("formatDuration(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestReceiverHandOffCache(t *testing.T) {
	s, _, err := LoadReceiver(receiverEnv("HOOKWALL_HANDOFF_CACHE_BYTES", "0", "HOOKWALL_HANDOFF_CACHE_TTL", "1s"), testReceiverDefaults)
	if err != nil || s.HandedOffBytes != 0 || s.HandedOffTTL != time.Second {
		t.Errorf("cache off, TTL 1s: %+v, %v", s, err)
	}
	_, _, err = LoadReceiver(receiverEnv("HOOKWALL_REENQUEUE_GRACE", "3s", "HOOKWALL_HANDOFF_CACHE_TTL", "3s"), testReceiverDefaults)
	wantErrors(t, err, "HOOKWALL_HANDOFF_CACHE_TTL (3s) must be positive and shorter than HOOKWALL_REENQUEUE_GRACE (3s)")
	_, _, err = LoadReceiver(receiverEnv("HOOKWALL_HANDOFF_CACHE_BYTES", "-5"), testReceiverDefaults)
	wantErrors(t, err, `HOOKWALL_HANDOFF_CACHE_BYTES="-5"`)
}

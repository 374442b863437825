package wiring

import (
	"testing"

	"github.com/hookwall/hookwall/shared/aws/sqsbatch"
	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/config/settings"
	"github.com/hookwall/hookwall/shared/engine/dispatch"
)

func env(kv ...string) func(string) string {
	m := map[string]string{"TABLE_NAME": "hookwall-events", "QUEUE_URL": "http://127.0.0.1:9324/1/q",
		"DLQ_URL": "http://127.0.0.1:9324/1/dlq", "HOOKWALL_TENANTS_FILE": "tenants.json"}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

// Unset tuning variables take the engine's own defaults (the kernel's,
// which settings reads itself).
func TestDefaultsAreTheEngines(t *testing.T) {
	s, _, err := settings.LoadProcessor(env())
	if err != nil {
		t.Fatal(err)
	}
	if s.MaxAttempts != dispatch.DefaultMaxAttempts || s.Concurrency != sqsbatch.DefaultConcurrency {
		t.Errorf("got %+v, want the engine's attempts and concurrency", s)
	}
}

// settings bounds the retry cap by SQS's longest visibility timeout without
// importing the engine; the bound must be the engine's.
func TestRetryCapBoundIsTheEngines(t *testing.T) {
	if _, _, err := settings.LoadProcessor(env("HOOKWALL_RETRY_CAP", webhook.MaxQueueDelay.String())); err != nil {
		t.Errorf("cap %v refused: %v", webhook.MaxQueueDelay, err)
	}
	over := (webhook.MaxQueueDelay + 1).String()
	if _, _, err := settings.LoadProcessor(env("HOOKWALL_RETRY_CAP", over)); err == nil {
		t.Errorf("cap %s accepted, above webhook.MaxQueueDelay", over)
	}
}

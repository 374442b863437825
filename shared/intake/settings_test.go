package intake

import (
	"strings"
	"testing"
	"time"
)

func TestLoadSettings(t *testing.T) {
	env := map[string]string{
		"TABLE_NAME": "t", "QUEUE_URL": "http://q", "HOOKWALL_TENANTS_FILE": "/x.json",
		"HOOKWALL_DEDUP_WINDOW": "24h", "HOOKWALL_MAX_BODY_BYTES": "2048", "LOG_LEVEL": "debug",
	}
	s, err := LoadSettings(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if s.DedupWindow != 24*time.Hour || s.MaxBody != 2048 || s.ReenqueueGrace != DefaultBudget+DefaultGraceMargin || s.MaxEventAge != 23*time.Hour ||
		s.Tolerance != 300*time.Second || s.Budget != DefaultBudget || s.LogLevel.String() != "DEBUG" {
		t.Fatalf("settings = %+v", s)
	}
}

func TestLoadSettingsNamesEveryBadVariable(t *testing.T) {
	env := map[string]string{
		"HOOKWALL_TENANTS_FILE": "/x.json", "TENANTS_SECRET_ARN": "arn:x",
		"HOOKWALL_DEDUP_WINDOW": "soon", "HOOKWALL_MAX_BODY_BYTES": "-1",
	}
	_, err := LoadSettings(func(k string) string { return env[k] })
	if err == nil {
		t.Fatal("want an error")
	}
	for _, name := range []string{"TABLE_NAME", "QUEUE_URL", "TENANTS_SECRET_ARN", "HOOKWALL_DEDUP_WINDOW", "HOOKWALL_MAX_BODY_BYTES"} {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("error %q does not name %s", err, name)
		}
	}
}

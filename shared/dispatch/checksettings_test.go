package dispatch

import (
	"strings"
	"testing"

	"github.com/hookwall/hookwall/shared/process"
)

// CheckSettings names an invalid handler setting before anything starts,
// and passes valid, unset and empty values.
func TestCheckSettingsNamesAnInvalidValue(t *testing.T) {
	register := func(r *process.Registry) {
		_ = r.URL(process.Setting{Name: "NOTIFY_API_URL", Doc: "the notify API"})
		_ = r.Duration(process.Setting{Name: "NOTIFY_TIMEOUT", Doc: "the notify timeout", Default: "2s"})
	}
	env := map[string]string{"NOTIFY_API_URL": "127.0.0.1:9700", "NOTIFY_TIMEOUT": "soon"}
	err := CheckSettings(register, func(k string) string { return env[k] })
	if err == nil {
		t.Fatal("no error for NOTIFY_API_URL=127.0.0.1:9700 and NOTIFY_TIMEOUT=soon")
	}
	for _, want := range []string{"NOTIFY_API_URL: want an absolute http(s) URL", `NOTIFY_TIMEOUT="soon"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	for _, ok := range []map[string]string{{}, {"NOTIFY_API_URL": "http://127.0.0.1:9700", "NOTIFY_TIMEOUT": "1s"}} {
		if err := CheckSettings(register, func(k string) string { return ok[k] }); err != nil {
			t.Errorf("%v: %v", ok, err)
		}
	}
}

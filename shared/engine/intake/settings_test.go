package intake

import (
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/config/settings"
	"github.com/hookwall/hookwall/shared/protocol/provider/standard"
	"github.com/hookwall/hookwall/shared/protocol/provider/wechat"
	"github.com/hookwall/hookwall/shared/protocol/provider/wecom"
)

// The receiver's settings, loaded with Defaults, resolve what is unset to the
// values New itself would choose: the defaults are intake's, and the derived
// ones (grace, event age) follow the same rules.
func TestDefaultsResolveAsNewDoes(t *testing.T) {
	for _, env := range []map[string]string{
		{},
		{"HOOKWALL_DEDUP_WINDOW": "24h", "HOOKWALL_RECEIVE_BUDGET": "800ms"},
		{"HOOKWALL_DEDUP_WINDOW": "90m"},
	} {
		env["TABLE_NAME"], env["QUEUE_URL"], env["HOOKWALL_TENANTS_FILE"] = "events", "http://q.local/1/q", "/x.json"
		s, _, err := settings.LoadReceiver(func(k string) string { return env[k] }, Defaults())
		if err != nil {
			t.Fatal(err)
		}
		h, err := New(Config{Parsers: &Parsers{}, Store: newMemStore(), Queue: &memQueue{},
			DedupWindow: s.DedupWindow, Budget: s.Budget})
		if err != nil {
			t.Fatal(err)
		}
		got := [...]time.Duration{s.ReenqueueGrace, s.MaxEventAge, time.Duration(s.MaxBody)}
		want := [...]time.Duration{h.cfg.ReenqueueGrace, h.cfg.MaxEventAge, time.Duration(h.cfg.MaxBody)}
		if got != want {
			t.Errorf("env %v: settings resolve grace, event age, body limit to %v; New to %v", env, got, want)
		}
	}
}

// The default timestamp tolerance is every signing provider's own default.
func TestDefaultToleranceIsTheProviders(t *testing.T) {
	for name, d := range map[string]time.Duration{
		"wecom": wecom.DefaultTolerance, "wechat": wechat.DefaultTolerance, "standard": standard.DefaultTolerance,
	} {
		if tol := Defaults().Tolerance; tol != d {
			t.Errorf("default tolerance %v, %s's %v", tol, name, d)
		}
	}
}

package targets

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/settings"
)

func TestParseScope(t *testing.T) {
	tests := []struct {
		in   string
		want Scope
		ok   bool
	}{
		{"handler/crm.lead", Scope{KindHandler, "crm.lead"}, true},
		{"tenant/acme", Scope{KindTenant, "acme"}, true},
		{"target/forward/acme", Scope{KindTarget, "forward/acme"}, true},
		{"target#forward/acme", Scope{KindTarget, "forward/acme"}, true},
		{"handler/hookwall.forward", Scope{KindHandler, "hookwall.forward"}, true},
		{"target/crm.lead-from-follow", Scope{KindTarget, "crm.lead-from-follow"}, true},
		{"tenant/" + strings.Repeat("a", 64), Scope{KindTenant, strings.Repeat("a", 64)}, true},
		{"target/" + strings.Repeat("a", 256), Scope{KindTarget, strings.Repeat("a", 256)}, true},
		// Scopes that could never match: a tenant that is no tenant name, a
		// handler or target name that no registration can give.
		{"handler#a#b", Scope{}, false},
		{"tenant/a#b", Scope{}, false},
		{"tenant/a/b", Scope{}, false},
		{"tenant/.acme", Scope{}, false},
		{"tenant/acme corp", Scope{}, false},
		{"tenant/" + strings.Repeat("a", 65), Scope{}, false},
		{"tenant/" + strings.Repeat("a", 400), Scope{}, false},
		{"target/../x", Scope{}, false},
		{"target/forward/../acme", Scope{}, false},
		{"target/./x", Scope{}, false},
		{"target/forward//acme", Scope{}, false},
		{"target/forward/", Scope{}, false},
		{"target//forward", Scope{}, false},
		{"target/forward/a#b", Scope{}, false},
		{"target/" + strings.Repeat("a", 257), Scope{}, false},
		{"handler/crm\x7flead", Scope{}, false},
		{"handler/crm\xfflead", Scope{}, false},
		{"queue/x", Scope{}, false},
		{"tenant/", Scope{}, false},
		{"tenant", Scope{}, false},
		{"", Scope{}, false},
		{"tenant/a\x00b", Scope{}, false},
	}
	for _, tc := range tests {
		got, err := ParseScope(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseScope(%q) = %v, %v; want %v, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
		if err != nil && !errors.Is(err, ErrBadScope) {
			t.Errorf("ParseScope(%q): %v does not wrap ErrBadScope", tc.in, err)
		}
		if err == nil {
			if back, err := ParseScope(got.String()); err != nil || back != got {
				t.Errorf("ParseScope(%q.String()) = %v, %v; want it back", got, back, err)
			}
		}
	}
}

func TestConfigDefaults(t *testing.T) {
	c, err := Config{}.WithDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if c.MinCalls != DefaultMinCalls || c.FailureRate != DefaultFailureRate || c.Window != DefaultWindow ||
		c.ProbeInterval != DefaultProbeInterval || c.Rate != DefaultRate || c.Wait != DefaultWait || c.Now == nil {
		t.Errorf("Config{}.WithDefaults() = %+v; want the defaults", c)
	}
	s := settings.Targets{MinCalls: 3, FailureRate: 0.25, Window: time.Hour, ProbeInterval: time.Second, Rate: 0.5}
	c, err = Config{}.With(s).WithDefaults()
	if err != nil || c.MinCalls != 3 || c.FailureRate != 0.25 || c.Window != time.Hour || c.ProbeInterval != time.Second || c.Rate != 0.5 {
		t.Errorf("With(%+v) = %+v, %v; want the settings", s, c, err)
	}
	set := Config{MinCalls: 7, FailureRate: 0.75, Window: time.Minute, ProbeInterval: time.Minute, Rate: 2, Wait: time.Second}
	if c, _ := set.With(settings.Targets{}).WithDefaults(); c.MinCalls != 7 || c.FailureRate != 0.75 || c.Window != time.Minute ||
		c.ProbeInterval != time.Minute || c.Rate != 2 || c.Wait != time.Second {
		t.Errorf("%+v.With(unset settings).WithDefaults() = %+v; want it unchanged", set, c)
	}
	if c := set.With(s); c.MinCalls != 3 || c.FailureRate != 0.25 || c.Window != time.Hour || c.ProbeInterval != time.Second || c.Rate != 0.5 {
		t.Errorf("%+v.With(%+v) = %+v; want the settings over the config", set, s, c)
	}
	for _, bad := range []Config{{MinCalls: -1}, {FailureRate: 1.5}, {FailureRate: -0.1}, {Window: -time.Second}, {Rate: -1}, {Wait: -1}} {
		if _, err := bad.WithDefaults(); err == nil {
			t.Errorf("%+v.WithDefaults(): no error", bad)
		}
	}
}

func TestWriteCircuitOpen(t *testing.T) {
	var buf bytes.Buffer
	err := WriteCircuitOpen(&buf, "Hookwall", Breaker{Target: "forward/acme", State: StateOpen}, Breaker{Target: "crm", State: StateClosed})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d documents; want 2:\n%s", len(lines), buf.String())
	}
	for i, want := range []struct {
		target string
		value  float64
	}{{"forward/acme", 1}, {"crm", 0}} {
		var doc map[string]any
		if err := json.Unmarshal([]byte(lines[i]), &doc); err != nil {
			t.Fatal(err)
		}
		dims := doc["_aws"].(map[string]any)["CloudWatchMetrics"].([]any)[0].(map[string]any)["Dimensions"]
		if doc["Target"] != want.target || doc[MetricCircuitOpen] != want.value || !strings.Contains(lines[i], `"Dimensions":[["Target"]]`) {
			t.Errorf("document %d: %s (dimensions %v); want Target %s, %s %g", i, lines[i], dims, want.target, MetricCircuitOpen, want.value)
		}
	}
}

func TestVerdictString(t *testing.T) {
	for v, want := range map[Verdict]string{Allow: "allow", Probe: "probe", Hold: "hold", Verdict(9): "Verdict(9)"} {
		if got := v.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", int(v), got, want)
		}
	}
}

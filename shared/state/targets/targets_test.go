package targets

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/config/settings"
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

// The breaker's defaults are stated once, in Config's constants; the
// template's parameter descriptions and docs/CONFIGURATION.md say the same.
func TestDefaultsAgreeWithTemplateAndDocs(t *testing.T) {
	read := func(p string) string {
		b, err := os.ReadFile(filepath.Join("..", "..", "..", p))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	tpl, conf := read("template.yaml"), read("docs/CONFIGURATION.md")
	for _, want := range []struct{ file, text, in string }{
		{"template.yaml", fmt.Sprintf("(1 to 1000; empty %d)", DefaultMinCalls), tpl},
		{"template.yaml", fmt.Sprintf("(more than 0, at most 1; empty %g)", DefaultFailureRate), tpl},
		{"docs/CONFIGURATION.md", fmt.Sprintf("1 to 1000 (default `%d`)", DefaultMinCalls), conf},
		{"docs/CONFIGURATION.md", fmt.Sprintf("at most 1 (default `%g`", DefaultFailureRate), conf},
	} {
		if !strings.Contains(want.in, want.text) {
			t.Errorf("%s does not say %q (the default in shared/state/targets/config.go)", want.file, want.text)
		}
	}
}

// falseOpen is the probability that a window of up to calls outcomes, each
// a failure with probability p at random, opens a breaker of minCalls at
// rate: the running share of failures reaches rate at some outcome from the
// minCalls-th on (exact, by dynamic programming over the failures so far).
func falseOpen(minCalls int, rate, p float64, calls int) float64 {
	dist := map[int]float64{0: 1}
	var opened float64
	for k := 1; k <= calls; k++ {
		next := map[int]float64{}
		for f, pr := range dist {
			for _, o := range []struct {
				df int
				q  float64
			}{{1, p}, {0, 1 - p}} {
				nf := f + o.df
				if k >= minCalls && float64(nf) >= rate*float64(k)-1e-9 {
					opened += pr * o.q
				} else {
					next[nf] += pr * o.q
				}
			}
		}
		dist = next
	}
	return opened
}

// The defaults' false-open rate, as docs/OPERATIONS.md states it: a target
// failing 20% of calls at random opens in about 0.010% of the windows of
// exactly MinCalls calls and 0.011% of windows of up to 600; a dead target
// opens at the MinCalls-th call.
func TestDefaultFalseOpenRate(t *testing.T) {
	exact := falseOpen(DefaultMinCalls, DefaultFailureRate, 0.2, DefaultMinCalls)
	long := falseOpen(DefaultMinCalls, DefaultFailureRate, 0.2, 600)
	if exact > 0.00011 || long > 0.0002 || exact < 0.00009 || long < exact {
		t.Errorf("false-open at p=0.2: %.5f%% (window of %d), %.5f%% (window of 600); docs say 0.010%% and 0.011%%",
			100*exact, DefaultMinCalls, 100*long)
	}
	if old := falseOpen(5, 0.5, 0.2, 5); old < 0.0579 || old > 0.0580 {
		t.Errorf("5 calls at 0.5: %.4f%%, want 5.792%% (the table's first row)", 100*old)
	}
	if dead := falseOpen(DefaultMinCalls, DefaultFailureRate, 1, DefaultMinCalls); dead != 1 {
		t.Errorf("a dead target opens within %d calls with probability %g, want 1", DefaultMinCalls, dead)
	}
}

package templatetest

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/hookwall/hookwall/shared/engine/compensate"
	"github.com/hookwall/hookwall/shared/engine/dispatch"
	"github.com/hookwall/hookwall/shared/engine/intake"
	"github.com/hookwall/hookwall/shared/engine/sweep"
)

const (
	envJSONPath   = "../../env.json"
	samconfigPath = "../../samconfig.toml"
)

// emitted is every EMF metric a function writes (namespace Hookwall,
// dimension Function), from the packages' own constants.
var emitted = map[string][]string{
	"receiver": {intake.MetricReceived, intake.MetricEnqueued, intake.MetricDuplicate, intake.MetricConflict,
		intake.MetricInFlight, intake.MetricReenqueued, intake.MetricReceiverLatency, intake.MetricRejected,
		intake.MetricRejectedUnavailable, intake.MetricHandedOffHit, intake.MetricDeliveryNotCounted},
	"processor": {dispatch.MetricSucceeded, dispatch.MetricRetried, dispatch.MetricFailed, dispatch.MetricUnhandled,
		dispatch.MetricProcessingLatency, dispatch.MetricEndToEndLatency},
	"compensator": {compensate.MetricCompensated, compensate.MetricDead, compensate.MetricCompensationLatency,
		sweep.MetricRequeued, sweep.MetricDeadLettered},
}

// The dashboard is valid JSON once CloudFormation has substituted it, and
// every Hookwall metric it (and every alarm) names is one a function emits,
// with that function's dimension.
func TestDashboardAndAlarmsUseEmittedMetrics(t *testing.T) {
	root := parse(t)
	body := get(root, "Resources", "Dashboard", "Properties", "DashboardBody")
	if body == nil || body.Tag != "!Sub" {
		t.Fatal("Dashboard.DashboardBody is not a !Sub string")
	}
	subst := regexp.MustCompile(`\$\{[A-Za-z0-9:.]+\}`).ReplaceAllString(body.Value, "x")
	var dash struct {
		Widgets []struct {
			Properties struct {
				Title   string `json:"title"`
				Metrics [][]any
			} `json:"properties"`
		} `json:"widgets"`
	}
	if err := json.Unmarshal([]byte(subst), &dash); err != nil {
		t.Fatalf("DashboardBody is not JSON: %v", err)
	}
	seen := map[string]bool{}
	for _, w := range dash.Widgets {
		// CloudWatch's shorthand: "." repeats the previous row's item at
		// that place, "..." the previous row's items but the last ones.
		var prev []string
		for _, row := range w.Properties.Metrics {
			var items []string
			for _, v := range row {
				if s, ok := v.(string); ok {
					items = append(items, s)
				}
			}
			if len(items) > 0 && items[0] == "..." {
				items = append(slices.Clone(prev[:len(prev)-(len(items)-1)]), items[1:]...)
			}
			for i := range items {
				if items[i] == "." && i < len(prev) {
					items[i] = prev[i]
				}
			}
			prev = items
			if len(items) < 4 || items[0] != "Hookwall" {
				continue
			}
			name, fn := items[1], items[3]
			if items[2] != "Function" || !slices.Contains(emitted[fn], name) {
				t.Errorf("dashboard %q: Hookwall %s %s=%s is no metric the code emits", w.Properties.Title, name, items[2], fn)
			}
			seen[name] = true
		}
	}
	for _, name := range []string{"Received", "Duplicate", "Conflict", "Enqueued", "Succeeded", "Failed", "Compensated",
		"ReceiverLatency", "ProcessingLatency", "EndToEndLatency"} {
		if !seen[name] {
			t.Errorf("the dashboard does not show %s", name)
		}
	}
	if !strings.Contains(subst, "ApproximateNumberOfMessagesVisible") {
		t.Error("the dashboard does not show the queues' depth")
	}

	// Alarms on Hookwall metrics: a single metric or a metric-math input.
	res := get(root, "Resources")
	for _, id := range wantAlarms {
		p := get(res, id, "Properties")
		metrics := []struct{ ns, name, fn string }{}
		dim := func(dims []*yaml.Node) string {
			for _, d := range dims {
				if n := get(d, "Name"); n != nil && n.Value == "Function" {
					return get(d, "Value").Value
				}
			}
			return ""
		}
		if ns := get(p, "Namespace"); ns != nil {
			metrics = append(metrics, struct{ ns, name, fn string }{ns.Value, get(p, "MetricName").Value, dim(list(get(p, "Dimensions")))})
		}
		for _, m := range list(get(p, "Metrics")) {
			if mm := get(m, "MetricStat", "Metric"); mm != nil {
				metrics = append(metrics, struct{ ns, name, fn string }{get(mm, "Namespace").Value, get(mm, "MetricName").Value, dim(list(get(mm, "Dimensions")))})
			}
		}
		for _, m := range metrics {
			if m.ns == "Hookwall" && !slices.Contains(emitted[m.fn], m.name) {
				t.Errorf("alarm %s: Hookwall %s Function=%s is no metric the code emits", id, m.name, m.fn)
			}
		}
	}
}

// env.json fills, for sam local, only what the template declares (SAM
// ignores the rest silently), names only the template's functions, and
// gives every function the tenants file and an empty secret ARN.
func TestEnvJSONMatchesTheTemplate(t *testing.T) {
	b, err := os.ReadFile(envJSONPath)
	if err != nil {
		t.Fatal(err)
	}
	var env map[string]map[string]string
	if err := json.Unmarshal(b, &env); err != nil {
		t.Fatalf("env.json: %v", err)
	}
	root := parse(t)
	for section := range env {
		if _, ok := functionByID(section); !ok && section != "Parameters" {
			t.Errorf("env.json: %q is neither Parameters nor a function of the template", section)
		}
	}
	for _, fn := range functions {
		declared := map[string]bool{}
		for _, m := range []*yaml.Node{get(root, "Globals", "Function", "Environment", "Variables"),
			get(root, "Resources", fn.logicalID, "Properties", "Environment", "Variables")} {
			for _, k := range keys(m) {
				declared[k] = true
			}
		}
		merged := map[string]string{}
		for k, v := range env["Parameters"] {
			merged[k] = v
		}
		for k, v := range env[fn.logicalID] {
			if !declared[k] {
				t.Errorf("env.json: %s.%s is not declared by the template, so sam local drops it", fn.logicalID, k)
			}
			merged[k] = v
		}
		if v, ok := merged["TENANTS_SECRET_ARN"]; !ok || v != "" {
			t.Errorf("env.json: %s: TENANTS_SECRET_ARN must be set empty (else SAM passes the parameter's logical id)", fn.logicalID)
		}
		if merged["HOOKWALL_TENANTS_FILE"] != "/var/task/local-tenants.json" {
			t.Errorf("env.json: %s: HOOKWALL_TENANTS_FILE is %q, want /var/task/local-tenants.json (make sam-local-prep copies it there)",
				fn.logicalID, merged["HOOKWALL_TENANTS_FILE"])
		}
		for _, name := range fn.reads() {
			if _, ok := merged[name]; !ok && strings.HasSuffix(name, "_URL") && !isHandlerSetting(name) {
				t.Errorf("env.json: %s: %s is not set (the template's !Ref would name a logical id)", fn.logicalID, name)
			}
		}
		for _, name := range fn.endpoints {
			if _, ok := merged[name]; !ok {
				t.Errorf("env.json: %s: %s is not set", fn.logicalID, name)
			}
		}
	}
}

// samconfig.toml builds in source, cached, and deploys with CAPABILITY_IAM;
// sam local gets env.json and the host network. The Makefile's
// sam-local-prep copies the tenants file into every function's output.
func TestSamconfigAndMakefile(t *testing.T) {
	b, err := os.ReadFile(samconfigPath)
	if err != nil {
		t.Fatal(err)
	}
	cfg := string(b)
	for _, want := range []string{
		"[default.build.parameters]", "build_in_source = true", "cached = true",
		"[default.deploy.parameters]", `capabilities = "CAPABILITY_IAM"`, "parameter_overrides",
		"[default.local_invoke.parameters]", "[default.local_start_api.parameters]",
		`env_vars = "env.json"`, `docker_network = "host"`,
	} {
		if !strings.Contains(cfg, want) {
			t.Errorf("samconfig.toml lacks %s", want)
		}
	}
	mk, err := os.ReadFile(makefilePath)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^SAM_FUNCTIONS := (.*)$`).FindSubmatch(mk)
	if m == nil {
		t.Fatal("the Makefile has no SAM_FUNCTIONS")
	}
	listed := strings.Fields(string(m[1]))
	for _, fn := range functions {
		if !slices.Contains(listed, fn.logicalID) {
			t.Errorf("the Makefile's SAM_FUNCTIONS lacks %s (sam-local-prep)", fn.logicalID)
		}
	}
}

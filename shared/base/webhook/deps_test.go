package webhook_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The targets' shared state (breakers, buckets, pauses) and what it imports
// of ours: its arithmetic and its settings.
const targetsPkg = "shared/state/targets"

// targetsDB is the targets' table in DynamoDB (the SDK side of targets).
const targetsDB = "shared/state/targets/targetsdb"

var targetsDeps = []string{"shared/state/targets/internal/breaker", "shared/config/settings"}

// formatDeps are the format versions and the release, which every package
// that persists or sends may import (docs/FORMATS.md); stampDeps add the
// stamp, the SDK middleware of the AWS configuration's loaders.
var (
	formatDeps = []string{"shared/base/format", "shared/base/release"}
	stampDeps  = []string{"shared/base/format", "shared/base/release", "shared/aws/stamp"}
)

// TestImportRules enforces the layering of style.md §2.1: imports flow
// functions/* → shared/* → shared/base/webhook; the domain, the providers and the
// processor core import no AWS SDK; obs imports nothing of ours.
func TestImportRules(t *testing.T) {
	const mod = "github.com/hookwall/hookwall/"
	rules := []struct {
		pkg       string
		forbidden []string // import path prefixes
		allowOurs []string // our packages it may import (nil: any)
	}{
		{"shared/base/webhook", []string{"github.com/"}, []string{}},
		{"shared/base/obs", []string{"github.com/aws/"}, []string{}},
		// The provider registry: the domain only. The list package: the
		// registry and the providers. (Every provider package is checked
		// below, whatever its name.)
		{"shared/protocol/provider", []string{"github.com/"}, []string{"shared/base/webhook"}},
		{"shared/protocol/providers", []string{"github.com/aws/"}, providerDeps},
		// The providers' helpers: the crypto and XML of WeCom and WeChat.
		{"shared/protocol/provider/wxcrypto", []string{"github.com/aws/"}, []string{"shared/base/webhook"}},
		{"shared/protocol/provider/xmljson", []string{"github.com/aws/"}, []string{"shared/base/webhook"}},
		{"shared/protocol/provider/wxmsg", []string{"github.com/aws/"}, []string{"shared/base/webhook", "shared/protocol/provider/wxcrypto", "shared/protocol/provider/xmljson"}},
		// The team API: the domain and the engines' view of the registry, no
		// engine and no SDK.
		{"shared/engine/process", []string{"github.com/"}, []string{"shared/base/webhook", "shared/internal/registry", "shared/config/setting"}},
		// The setting record: the standard library only.
		{"shared/config/setting", []string{"github.com/"}, []string{}},
		// What the platform gives the teams and the registry's builder: the
		// team API, the tenants document and the SDK's types, no engine.
		{"shared/engine/platform", nil, append([]string{"shared/base/webhook", "shared/internal/registry", "shared/config/setting", "shared/engine/process",
			"shared/config/tenants"}, providerDeps...)},
		{"shared/internal/registry", []string{"github.com/"}, []string{"shared/base/webhook"}},
		// The processor engine: no AWS SDK and no adapter; a phase on the
		// kernel, it declares the interfaces it needs and store, queue and
		// bus satisfy them; it speaks the SDK-free targets' types (the gate
		// is targets.Gate).
		{"shared/engine/dispatch", []string{"github.com/aws/"}, []string{"shared/base/webhook", "shared/base/obs", "shared/internal/fanout", "shared/internal/registry",
			"shared/engine/process", "shared/config/setting", "shared/internal/kernel", targetsPkg, targetsDeps[0], targetsDeps[1]}},
		{"shared/internal/fanout", []string{"github.com/"}, []string{}},
		// The leased-attempt kernel both engines run on: the domain, obs, the
		// fan-out and the registry's error vocabulary; no SDK, no Lambda library.
		{"shared/internal/kernel", []string{"github.com/"}, []string{"shared/base/webhook", "shared/base/obs", "shared/internal/fanout",
			"shared/internal/registry"}},
		// The Lambda SQS side of the engines: the kernel and the Lambda
		// library's events, no SDK.
		{"shared/aws/sqsbatch", []string{"github.com/aws/aws-sdk-go-v2"}, append([]string{"shared/base/webhook", "shared/base/obs", "shared/internal/fanout",
			"shared/internal/kernel", "shared/internal/registry"}, formatDeps...)},
		// The compensator engine: like the processor's, no AWS SDK (nor the
		// Lambda library); a phase on the kernel, with the team registry.
		{"shared/engine/compensate", []string{"github.com/aws/"}, []string{"shared/base/webhook", "shared/base/obs", "shared/internal/fanout",
			"shared/internal/registry", "shared/engine/process", "shared/config/setting", "shared/internal/kernel"}},
		// The one driver of the test kits processtest and compensatetest:
		// the events table (in memory or DynamoDB Local) as both engines
		// use it, and the kernel's message and verdicts.
		{"shared/engine/internal/testkit", nil, append([]string{"shared/base/webhook", "shared/base/webhook/webhooktest", "shared/state/store", "shared/state/store/memstore",
			"shared/aws/awstest", "shared/internal/kernel", "shared/internal/registry", "shared/base/obs", "shared/internal/fanout",
			"shared/engine/dispatch", "shared/engine/compensate", "shared/engine/process", "shared/config/setting", targetsPkg, targetsDeps[0], targetsDeps[1]}, stampDeps...)},
		// Adapters import the domain and the SDK, never the engine or each other.
		{"shared/base/batch", []string{"github.com/"}, []string{}},
		{"shared/state/store", nil, append([]string{"shared/base/webhook"}, formatDeps...)},
		{"shared/state/store/memstore", nil, append([]string{"shared/base/webhook", "shared/state/store"}, formatDeps...)},
		{"shared/aws/queue", nil, append([]string{"shared/base/webhook", "shared/base/batch", "shared/internal/fanout"}, formatDeps...)},
		{"shared/aws/bus", nil, append([]string{"shared/base/webhook", "shared/base/batch"}, formatDeps...)},
		// The format versions, below everything that persists: the standard
		// library only; the stamp (an SDK middleware) adds the SDK.
		{"shared/base/format", []string{"github.com/"}, []string{}},
		{"shared/base/release", []string{"github.com/"}, []string{}},
		{"shared/aws/stamp", nil, formatDeps},
		// The sweeper: the store and the queues, never an engine; the
		// kernel's defaults (the engines' retry cap, the receiver's grace).
		// It releases held records through the drain and reads the
		// targets' breakers and pauses.
		{"shared/engine/sweep", nil, append([]string{"shared/base/webhook", "shared/base/obs", "shared/state/store", "shared/aws/queue", "shared/base/batch", "shared/internal/fanout",
			"shared/internal/kernel", "shared/internal/registry", "shared/engine/drain", targetsPkg, targetsDeps[0], targetsDeps[1]}, formatDeps...)},
		// The drain of held records: the store and the targets.
		{"shared/engine/drain", nil, append([]string{"shared/base/webhook", "shared/state/store", "shared/base/batch", targetsPkg, targetsDeps[0], targetsDeps[1],
			"shared/base/obs", "shared/internal/kernel", "shared/internal/fanout", "shared/internal/registry"}, formatDeps...)},
		// The operator's controls (pause, resume, the targets' panel): the
		// targets, the drain and the op events' types; no SDK of its own.
		{"shared/ops/control", nil, append([]string{"shared/base/webhook", "shared/state/store", "shared/engine/drain", "shared/aws/bus", "shared/base/batch", targetsPkg,
			targetsDeps[0], targetsDeps[1], "shared/base/obs", "shared/internal/kernel", "shared/internal/fanout", "shared/internal/registry"}, formatDeps...)},
		// The AWS side of the processor's and the compensator's wiring: the
		// adapters and the engines' ports, never an engine's wiring.
		{"shared/ops/backend", nil, append([]string{"shared/base/webhook", "shared/base/obs", "shared/internal/fanout", "shared/internal/registry", "shared/internal/kernel", "shared/engine/process", "shared/config/setting", "shared/engine/platform", "shared/engine/dispatch",
			"shared/aws/awsconf", "shared/config/tenants", "shared/state/store", "shared/aws/queue", "shared/aws/bus", "shared/base/batch",
			targetsPkg, targetsDeps[0], targetsDeps[1], targetsDB}, append(stampDeps, providerDeps...)...)},
		// The functions' shared cold start: their settings (and what settings
		// reads its defaults from) and the logger.
		{"shared/config/startup", nil, []string{"shared/base/webhook", "shared/base/release", "shared/base/obs", "shared/config/settings", "shared/internal/kernel",
			"shared/internal/fanout", "shared/internal/registry"}},
		// The tuned SDK configuration every function loads (with the SDK's log lines through slog): the SDK and the stamp.
		{"shared/aws/awsconf", nil, stampDeps},
		// The receiver's hand-off cache: the standard library only.
		{"shared/engine/handoff", []string{"github.com/"}, []string{}},
		// The tenants document: each provider's section and its validation
		// come from the registry.
		{"shared/config/tenants", nil, providerDeps},
		// The configuration: the standard library, the domain and the
		// kernel's defaults and bounds only (no SDK), so every function, the
		// receiver included, can import it.
		{"shared/config/settings", []string{"github.com/", "gopkg.in/"}, []string{"shared/base/webhook", "shared/internal/kernel", "shared/base/obs",
			"shared/internal/fanout", "shared/internal/registry"}},
		// The targets' shared state (breakers, buckets, pauses): its types,
		// the settings it is configured from and obs's EMF, no SDK and never
		// an engine. Its arithmetic imports nothing; its table (targetsdb)
		// adds the SDK; memgate is the same in memory.
		{"shared/state/targets", []string{"github.com/aws/"}, []string{"shared/state/targets/internal/breaker", "shared/config/settings", "shared/base/obs",
			"shared/base/webhook", "shared/internal/kernel", "shared/internal/fanout", "shared/internal/registry"}},
		{targetsDB, nil, []string{"shared/state/targets", "shared/state/targets/internal/breaker", "shared/config/settings", "shared/base/obs",
			"shared/base/webhook", "shared/internal/kernel", "shared/internal/fanout", "shared/internal/registry"}},
		{"shared/state/targets/internal/breaker", []string{"github.com/"}, []string{}},
		{"shared/state/targets/memgate", nil, []string{"shared/state/targets", "shared/state/targets/internal/breaker", "shared/config/settings", "shared/base/obs",
			"shared/base/webhook", "shared/internal/kernel", "shared/internal/fanout", "shared/internal/registry"}},
		// The audit view (events API, CLI): the store's records, and the
		// registry's route names.
		{"shared/state/audit", nil, append(append([]string{"shared/state/store"}, formatDeps...), providerDeps...)},
		// The request signer (CLI, make events, tests): the tenants document
		// and the providers' signing, never the receiver or an adapter.
		{"shared/config/signer", nil, append([]string{"shared/config/tenants"}, providerDeps...)},
		// The pre-traffic hook: the signer and the tenants document, the SDK
		// configuration and the settings; never the receiver, an engine or an
		// adapter (it reaches the table only through the versions it invokes).
		{"shared/ops/pretraffic", nil, append([]string{"shared/base/batch", "shared/config/signer", "shared/config/tenants", "shared/aws/awsconf", "shared/config/settings",
			"shared/base/obs", "shared/internal/kernel", "shared/internal/fanout", "shared/internal/registry"}, append(stampDeps, providerDeps...)...)},
		// The receiver core: providers and adapters, never the processor.
		{"shared/engine/intake", nil, append([]string{"shared/base/obs", "shared/aws/awsconf", "shared/engine/handoff", "shared/config/tenants", "shared/config/settings", "shared/state/store", "shared/aws/queue", "shared/base/batch", "shared/internal/fanout", "shared/state/audit",
			"shared/internal/kernel", "shared/internal/registry"}, append(stampDeps, providerDeps...)...)},
	}
	for _, r := range rules {
		checkRule(t, mod, r.pkg, r.forbidden, r.allowOurs)
	}
	// Every provider package, whatever its name: no AWS SDK; the domain,
	// the registry and other provider packages (helpers) only (test
	// helpers: also the domain's, webhooktest).
	list, err := exec.Command("go", "list", mod+"shared/protocol/provider/...").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, pkg := range strings.Fields(string(list)) {
		checkRule(t, mod, strings.TrimPrefix(pkg, mod), []string{"github.com/aws/"}, []string{"shared/base/webhook", "shared/base/webhook/webhooktest", "shared/protocol/provider", "shared/protocol/provider/..."})
	}
	// The hookwall CLI: the shared adapters, the signer and the operator's
	// jobs (targets, drain, recovery, op events), never a function's engine
	// or wiring (it runs no handler).
	checkRule(t, mod, "cmd/hookwall", nil, append([]string{"shared/base/release", "shared/base/obs", "shared/aws/awsconf", "shared/engine/handoff", "shared/config/tenants", "shared/config/settings",
		"shared/state/store", "shared/aws/queue", "shared/base/batch", "shared/internal/fanout", "shared/state/audit", "shared/config/signer", "shared/engine/intake",
		"shared/internal/kernel", "shared/internal/registry", "shared/aws/bus", "shared/state/targets", "shared/state/targets/internal/breaker", targetsDB,
		"shared/engine/drain", "shared/ops/recovery", "shared/ops/control",
		"shared/config/runfile", "shared/base/repo", "cmd/internal/scaffold"}, append(stampDeps, providerDeps...)...))
	// runner.json, shared by the runner and the CLI: the standard library only.
	checkRule(t, mod, "shared/config/runfile", []string{"github.com/"}, []string{})
	// The repository root and the handler scaffold (source files only, no
	// engine): the standard library.
	checkRule(t, mod, "shared/base/repo", []string{"github.com/"}, []string{})
	checkRule(t, mod, "cmd/internal/scaffold", []string{"github.com/"}, []string{"shared/base/repo"})
	// The receiver binary links no processor code.
	checkRule(t, mod, "functions/receiver", nil, nil)
	out, err := exec.Command("go", "list", "-deps", mod+"functions/receiver").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, mod+"shared/engine/process") || strings.HasPrefix(dep, mod+"shared/engine/dispatch") || strings.HasPrefix(dep, mod+"functions/processor") ||
			strings.HasPrefix(dep, mod+"shared/engine/compensate") || strings.HasPrefix(dep, mod+"functions/compensator") {
			t.Errorf("functions/receiver depends on %s", dep)
		}
	}
	// The processor links no compensator code (the compensator imports the
	// processor's handlers, never the other way).
	out, err = exec.Command("go", "list", "-deps", mod+"functions/processor").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, mod+"shared/engine/compensate") || strings.HasPrefix(dep, mod+"functions/compensator") {
			t.Errorf("functions/processor depends on %s", dep)
		}
	}
}

// checkRule fails t for every dependency of pkg that starts with a
// forbidden prefix (unless it is one of ours that is allowed), and every
// package of ours that allowOurs does not list (nil: any of ours).
func checkRule(t *testing.T, mod, pkg string, forbidden, allowOurs []string) {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", mod+pkg).Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	watchSources(t, mod+pkg)
	for _, dep := range strings.Fields(string(out)) {
		if dep == mod+pkg {
			continue
		}
		for _, f := range forbidden {
			if strings.HasPrefix(dep, f) && !(strings.HasPrefix(dep, mod) && allowed(dep, allowOurs, mod)) {
				t.Errorf("%s depends on %s", pkg, dep)
			}
		}
		if strings.HasPrefix(dep, mod) && !allowed(dep, allowOurs, mod) {
			t.Errorf("%s imports %s, which it must not", pkg, dep)
		}
	}
}

// watchSources stats the directories and Go files of pkg and its
// dependencies (a module cache's are read-only and cheap) so that the go command's test
// cache, which records the files a test touches, reruns this test when an
// import in them changes (the go list it runs is invisible to the cache).
func watchSources(t *testing.T, pkg string) {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", "-f", `{{if not .Standard}}{{$d := .Dir}}{{$d}}{{"\n"}}{{range .GoFiles}}{{$d}}/{{.}}{{"\n"}}{{end}}{{end}}`, pkg).Output()
	if err != nil {
		t.Fatalf("go list %s: %v", pkg, err)
	}
	for _, f := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if f != "" {
			if _, err := os.Stat(f); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// providerDeps are what a user of the provider registry may import for it:
// the domain, the registry, the list and every provider package.
var providerDeps = []string{"shared/base/webhook", "shared/protocol/provider", "shared/protocol/providers", "shared/protocol/provider/..."}

// allowed reports whether dep is one of ours (an entry ending in "/..."
// allows every package below it).
func allowed(dep string, ours []string, mod string) bool {
	if ours == nil {
		return true
	}
	for _, o := range ours {
		if dep == mod+o {
			return true
		}
		if under, ok := strings.CutSuffix(o, "/..."); ok && strings.HasPrefix(dep, mod+under+"/") {
			return true
		}
	}
	return false
}

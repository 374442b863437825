package webhook_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestKitImports enforces issue 31's layering for the test kits: a kit for
// packages X imports X, what X depends on, the shared test infrastructure
// below every engine (webhooktest, awstest, memstore) and packages of a lower
// tier than its own (TestTiers), never a package above X (one that imports
// X). processtest and compensatetest drive the engines a team's handler runs
// in, so they are kits of those engines, beside them in shared/engine/, and
// testkit is the one driver of both.
func TestKitImports(t *testing.T) {
	const mod = "github.com/hookwall/hookwall/"
	infra := []string{"shared/base/webhook/webhooktest", "shared/aws/awstest", "shared/state/store/memstore", "shared/state/store"}
	processor := []string{"shared/engine/process", "shared/engine/platform", "shared/engine/dispatch"}
	kits := []struct {
		kit string
		of  []string
	}{
		{"shared/base/webhook/webhooktest", []string{"shared/base/webhook"}},
		{"shared/state/store/memstore/memtest", []string{"shared/state/store/memstore"}},
		{"shared/state/targets/targetstest", []string{"shared/state/targets"}},
		{"shared/protocol/provider/wxmsg/wxmsgtest", []string{"shared/protocol/provider/wxmsg"}},
		{"shared/engine/intake/intaketest", []string{"shared/engine/intake"}},
		// A handler's run and its undo, through their one driver, testkit.
		{"shared/engine/processtest", append(processor, "shared/engine/compensate", "shared/engine/internal/testkit")},
		{"shared/engine/compensatetest", append(processor, "shared/engine/compensate", "shared/engine/internal/testkit")},
		{"shared/engine/internal/testkit", []string{"shared/engine/dispatch", "shared/engine/compensate"}},
	}
	cache := map[string][]string{}
	for _, k := range kits {
		if above := importsAbove(t, cache, mod, k.kit, k.of, infra); len(above) > 0 {
			t.Errorf("%s (the kit of %v) imports %v, above them", k.kit, k.of, above)
		}
	}
}

// importsAbove returns the packages of ours that kit depends on and that
// are neither in of, nor a dependency of them, nor in infra (nor their
// dependencies), nor on a lower tier than kit. cache keeps the dependencies
// listed, by package.
func importsAbove(t *testing.T, cache map[string][]string, mod, kit string, of, infra []string) []string {
	t.Helper()
	allowed := map[string]bool{mod + kit: true}
	for _, p := range append(append([]string{}, of...), infra...) {
		for _, d := range deps(t, cache, mod+p) {
			allowed[d] = true
		}
	}
	var above []string
	for _, d := range deps(t, cache, mod+kit) {
		if strings.HasPrefix(d, mod) && !allowed[d] && !lowerTier(strings.TrimPrefix(d, mod), kit) {
			above = append(above, strings.TrimPrefix(d, mod))
		}
	}
	return above
}

// deps returns pkg and the packages it depends on (not its tests'),
// listed once per cache.
func deps(t *testing.T, cache map[string][]string, pkg string) []string {
	t.Helper()
	if d, ok := cache[pkg]; ok {
		return d
	}
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", pkg).Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	watchSources(t, pkg)
	cache[pkg] = strings.Fields(string(out))
	return cache[pkg]
}

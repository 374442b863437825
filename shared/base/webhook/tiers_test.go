package webhook_test

import (
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"strings"
	"testing"
)

// tiers are shared/'s folders from the ground up (docs/DESIGN-NOTES.md,
// "Package layout"): a package imports packages of its own tier or of a
// lower one, never of a higher one. Test kits (processtest, storetest, …)
// are packages of their tier like any other.
var tiers = []string{
	"base",     // the domain's vocabulary and what every tier uses: webhook, obs, batch, format, release, repo
	"protocol", // each platform's wire format, verification and keys: provider/*, providers
	"internal", // the engines' insides: the leased-attempt kernel, the registry's entries, the fan-out
	"config",   // what a function is told: settings, a setting's declaration, tenants, signer, cold start, runner.json
	"aws",      // the AWS clients: SDK configuration, the format stamp, queue, Lambda SQS batches, bus, awstest
	"state",    // what is stored and its rules: the events table (store), the targets' breakers, the audit view
	"engine",   // receiver (intake), processor (process, platform, dispatch), compensator, sweeper, drain
	"ops",      // what operates the engines: their wiring to AWS (backend), controls, recovery, pre-traffic
}

// sharedPath is the import path prefix of shared/'s packages.
const sharedPath = "github.com/hookwall/hookwall/shared/"

// tierRank returns the rank of the tier of pkg (a path relative to the
// module, "shared/<tier>/…"), and false when pkg is in no tier.
func tierRank(pkg string) (int, bool) {
	rest, ok := strings.CutPrefix(pkg, "shared/")
	if !ok {
		return 0, false
	}
	tier, _, _ := strings.Cut(rest, "/")
	for i, t := range tiers {
		if t == tier {
			return i, true
		}
	}
	return 0, false
}

// lowerTier reports whether package a (relative to the module) is on a
// lower tier than package b.
func lowerTier(a, b string) bool {
	ra, oka := tierRank(a)
	rb, okb := tierRank(b)
	return oka && okb && ra < rb
}

// goPackage is what tierViolations reads of `go list -json`.
type goPackage struct {
	ImportPath string
	Imports    []string
}

// tierViolations returns, for each package of pkgs under shared/, every
// import of a package on a higher tier, and every package in no tier.
func tierViolations(pkgs []goPackage) []string {
	var bad []string
	for _, p := range pkgs {
		rel, ok := strings.CutPrefix(p.ImportPath, "github.com/hookwall/hookwall/")
		if !ok || !strings.HasPrefix(p.ImportPath, sharedPath) {
			continue
		}
		r, ok := tierRank(rel)
		if !ok {
			bad = append(bad, rel+" is in no tier (shared/<tier>/…, tiers "+strings.Join(tiers, " < ")+")")
			continue
		}
		for _, imp := range p.Imports {
			irel, ours := strings.CutPrefix(imp, "github.com/hookwall/hookwall/")
			if ir, ok := tierRank(irel); ours && ok && ir > r {
				bad = append(bad, rel+" (tier "+tiers[r]+") imports "+irel+" (tier "+tiers[ir]+", higher)")
			}
		}
	}
	return bad
}

// TestTiers fails for every import, by a package under shared/, of a
// package on a higher tier, and for a package in no tier.
func TestTiers(t *testing.T) {
	out, err := exec.Command("go", "list", "-json=ImportPath,Imports", sharedPath+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	watchSources(t, sharedPath+"...")
	var pkgs []goPackage
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p goPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) < 40 {
		t.Fatalf("go list found %d packages under shared/, want the whole tree", len(pkgs))
	}
	for _, v := range tierViolations(pkgs) {
		t.Error(v)
	}
}

// The check finds an upward import and a package in no tier, and passes a
// downward import.
func TestTierViolationsFindsAnUpwardImport(t *testing.T) {
	m := "github.com/hookwall/hookwall/"
	got := tierViolations([]goPackage{
		{ImportPath: m + "shared/state/store", Imports: []string{m + "shared/base/webhook", "context"}},
		{ImportPath: m + "shared/aws/queue", Imports: []string{m + "shared/engine/dispatch"}},
		{ImportPath: m + "shared/misc", Imports: nil},
		{ImportPath: m + "functions/receiver", Imports: []string{m + "shared/ops/backend"}},
	})
	if len(got) != 2 || !strings.Contains(got[0], "shared/aws/queue (tier aws) imports shared/engine/dispatch") ||
		!strings.Contains(got[1], "shared/misc is in no tier") {
		t.Errorf("got %q, want the queue's upward import and shared/misc", got)
	}
}

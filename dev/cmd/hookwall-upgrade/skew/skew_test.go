package skew

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hookwall/hookwall/shared/base/release"
	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/state/store"
)

// TestReleasesFile: the repository's releases.tsv parses, lists v0.1.0 at
// 903736a, and has a released version before the current one to build.
func TestReleasesFile(t *testing.T) {
	rels, err := ReadReleases(filepath.Join("..", "..", "..", "..", "releases.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	if len(rels) == 0 || rels[0].Version != "0.1.0" || rels[0].Commit != "903736a" {
		t.Fatalf("releases %+v: want 0.1.0 at 903736a first", rels)
	}
	prev, err := Previous(rels, release.Version)
	if err != nil || prev.Version == release.Version || !prev.Released() {
		t.Errorf("previous of %s: %+v, %v", release.Version, prev, err)
	}
}

func TestParseReleases(t *testing.T) {
	rels, err := ParseReleases([]byte("# header\n\n0.1.0\tabc\t2026-01-01\tfirst\n0.2.0\tunreleased\tunreleased\tnext\n0.3.0\tdef\t2026-03-01\n"))
	if err != nil || len(rels) != 3 {
		t.Fatalf("%+v, %v", rels, err)
	}
	if rels[1].Released() || !rels[2].Released() || rels[0].Note != "first" {
		t.Errorf("%+v", rels)
	}
	if p, err := Previous(rels, "0.3.0"); err != nil || p.Version != "0.1.0" {
		t.Errorf("previous of 0.3.0: %+v, %v (the unreleased 0.2.0 is skipped)", p, err)
	}
	if p, err := Previous(rels, "0.4.0"); err != nil || p.Version != "0.3.0" {
		t.Errorf("previous of 0.4.0: %+v, %v", p, err)
	}
	if _, err := Previous(rels[:1], "0.1.0"); err == nil {
		t.Error("no release before the only one: want an error")
	}
	if _, err := ParseReleases([]byte("0.1.0 abc 2026-01-01\n")); err == nil {
		t.Error("spaces instead of tabs: want an error")
	}
}

// TestJudge: each problem is counted, and OK only when there is none.
func TestJudge(t *testing.T) {
	rec := func(s webhook.Status) *store.Record { return &store.Record{Status: s} }
	one := map[string]int{"idem-1": 1}
	keys := []string{"ok", "lost", "doubled", "twice", "failed", "dead", "comp", "open"}
	effects := map[string]map[string]int{
		"ok": one, "doubled": {"idem-1": 1, "idem-2": 1}, "twice": {"idem-1": 2}, "failed": one, "open": one,
	}
	records := map[string]*store.Record{
		"ok": rec(webhook.StatusSucceeded), "lost": rec(webhook.StatusSucceeded), "doubled": rec(webhook.StatusSucceeded),
		"twice": rec(webhook.StatusSucceeded), "failed": rec(webhook.StatusFailed), "dead": rec(webhook.StatusDead),
		"comp": rec(webhook.StatusCompensated), "open": rec(webhook.StatusProcessing),
	}
	got := Judge(keys, effects, records)
	want := Tally{Events: 8, Lost: 1, Doubled: 2, Succeeded: 4, Failed: 1, Dead: 1, Compensated: 1, Unsettled: 1}
	if got.Samples["lost"][0] != "lost" || len(got.Samples["doubled"]) != 2 {
		t.Errorf("samples %v", got.Samples)
	}
	got.Samples, want.Samples = nil, nil
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("tally %+v, want %+v", got, want)
	}
	if got.OK() || got.Settled() {
		t.Error("a tally with problems is OK or settled")
	}
	clean := Judge([]string{"ok"}, effects, records)
	if !clean.OK() {
		t.Errorf("clean tally %+v not OK", clean)
	}
	clean.DLQ = 1
	if clean.OK() {
		t.Error("a dead letter left on the queue is OK")
	}
}

// TestMixes: the three mixes of issue #32, each mixing both versions, the
// rollback ending on the old processor.
func TestMixes(t *testing.T) {
	ms := Mixes("0.1.0", "0.2.0")
	if len(ms) != 3 {
		t.Fatalf("%d mixes", len(ms))
	}
	for _, m := range ms {
		seen := map[string]bool{}
		for _, r := range Roles {
			for _, v := range m.Start[r] {
				seen[v] = true
			}
		}
		for _, c := range m.Changes {
			for _, v := range c.Versions {
				seen[v] = true
			}
		}
		if !seen["0.1.0"] || !seen["0.2.0"] {
			t.Errorf("mix %s does not mix the releases: %s", m.Name, m.Describe())
		}
	}
	if end := ms[2].End(); strings.Join(end[Processor], ",") != "0.1.0" || strings.Join(end[Receiver], ",") != "0.2.0" {
		t.Errorf("rollback ends on %v", end)
	}
	if _, err := Select(ms, []string{"rollback", "nosuch"}); err == nil {
		t.Error("an unknown mix: want an error")
	}
}

// TestCountNewer: the metric is summed over EMF lines only.
func TestCountNewer(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.log")
	lines := `{"msg":"not EMF","NewerFormat":7}
{"_aws":{"CloudWatchMetrics":[{"Metrics":[{"Name":"NewerFormat"}]}]},"NewerFormat":2}
not json
{"_aws":{},"NewerFormat":3}
`
	if err := os.WriteFile(a, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	b := filepath.Join(dir, "b.log")
	if err := os.WriteFile(b, []byte(`{"_aws":{},"Other":1}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if n, found, err := CountNewer([]string{a, b}); err != nil || !found || n != 5 {
		t.Errorf("CountNewer = %d, %v, %v; want 5, true", n, found, err)
	}
	if n, found, err := CountNewer([]string{b}); err != nil || found || n != 0 {
		t.Errorf("without the metric: %d, %v, %v", n, found, err)
	}
}

func TestPorts(t *testing.T) {
	p, err := ParsePorts("8404-8405")
	if err != nil {
		t.Fatal(err)
	}
	a, _ := p.Take()
	b, _ := p.Take()
	if a != 8404 || b != 8405 {
		t.Errorf("took %d, %d", a, b)
	}
	if _, err := p.Take(); err == nil {
		t.Error("out of ports: want an error")
	}
	p.Give(a)
	if c, err := p.Take(); err != nil || c != a {
		t.Errorf("after a give: %d, %v", c, err)
	}
	for _, bad := range []string{"8404", "9-8", "x-y"} {
		if _, err := ParsePorts(bad); err == nil {
			t.Errorf("ports %q: want an error", bad)
		}
	}
}

// TestUnexercised: a receiver or processor version of the mix never
// invoked fails it; the compensator may go unused.
func TestUnexercised(t *testing.T) {
	m := Mixes("0.1.0", "0.2.0")[2] // rollback: processor 0.2.0, then 0.2.0+0.1.0, then 0.1.0
	if got := m.Uses(Processor); strings.Join(got, ",") != "0.1.0,0.2.0" {
		t.Errorf("processor uses %v", got)
	}
	inv := map[string]int64{"receiver@0.2.0": 10, "processor@0.2.0": 4}
	if got := m.Unexercised(inv); strings.Join(got, ",") != "processor@0.1.0" {
		t.Errorf("unexercised %v, want the old processor", got)
	}
	inv["processor@0.1.0"] = 1
	if got := m.Unexercised(inv); len(got) != 0 {
		t.Errorf("unexercised %v with every version invoked (no compensator invocation needed)", got)
	}
	r := Result{Unexercised: []string{"processor@0.1.0"}}
	if r.OK() {
		t.Error("a mix that did not mix is OK")
	}
}

// TestBuildCommitMissing: a commit the clone lacks fails before any build,
// saying how to fetch it.
func TestBuildCommitMissing(t *testing.T) {
	_, err := BuildCommit(t.Context(), "9.9.9", filepath.Join("..", "..", "..", ".."), "0000000000000000000000000000000000000000", t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "git fetch origin tag v9.9.9") {
		t.Errorf("error %v: want the fetch hint", err)
	}
}

package reach

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"golang.org/x/tools/go/ssa"
)

// TestFixture analyzes testdata/fixture, a Lambda function over a fake SDK
// and a fake Lambda runtime, and checks every call its comments mark WANT
// (with the operation, the index and the items it must carry) is found,
// and no call marked NOT is: the handler reached only by reflection, a
// client behind an interface, a closure, a paginator walked back to its
// NextPage, IndexName traced through a helper, TransactWriteItems' kinds;
// and neither a test double's call nor the closure of a function that
// never runs (VTA's context-insensitivity through retry).
func TestFixture(t *testing.T) {
	const dir = "testdata/fixture"
	p, err := Load(Config{Dir: dir, Mains: map[string]string{"fn": "./fn"}})
	if err != nil {
		t.Fatal(err)
	}
	a, err := p.Analyze("fn")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(a.Roots, "Handle$bound") {
		t.Errorf("roots %v lack the handler given to lambda.Start", a.Roots)
	}

	src, err := os.ReadFile(dir + "/fn/main.go")
	if err != nil {
		t.Fatal(err)
	}
	got := map[int][]Site{}
	for _, s := range a.Sites {
		if s.File != "fn/main.go" {
			t.Errorf("a site outside the fixture's code: %+v", s)
		}
		got[s.Line] = append(got[s.Line], s)
	}
	mark := regexp.MustCompile(`// (WANT|NOT)\b ?(\S*) ?(\S*)(?: index "([^"]*)")?(?: items (\S+))?`)
	for i, line := range strings.Split(string(src), "\n") {
		m := mark.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		n := i + 1
		if m[1] == "NOT" {
			if len(got[n]) > 0 {
				t.Errorf("line %d: found %+v, which is not reachable", n, got[n])
			}
			continue
		}
		sites := got[n]
		delete(got, n)
		if len(sites) == 0 {
			t.Errorf("line %d: no site for %s %s", n, m[2], m[3])
			continue
		}
		var descs []string
		for _, s := range sites {
			desc := fmt.Sprintf("%s %s", s.Service, s.Operation)
			if s.Indexes != nil {
				desc += fmt.Sprintf(" index %q", strings.Join(s.Indexes, ","))
			}
			if s.Items != nil {
				desc += " items " + strings.Join(s.Items, ",")
			}
			descs = append(descs, desc)
		}
		want := m[2] + " " + m[3]
		if m[4] != "" || m[3] == "Query" || m[3] == "Scan" {
			want += fmt.Sprintf(" index %q", m[4])
		}
		if m[5] != "" {
			want += " items " + m[5]
		}
		if !slices.Contains(descs, want) {
			t.Errorf("line %d: got %v, want %s", n, descs, want)
		}
	}
	for n, sites := range got {
		t.Errorf("line %d: unexpected sites %+v", n, sites)
	}

	// The paginator's Scan is the caller's NextPage, in the handler.
	for _, s := range a.Sites {
		if s.Operation == "Scan" && s.Enclosing != "(*main.handler).Handle" {
			t.Errorf("paginated Scan attributed to %s", s.Enclosing)
		}
	}
	if path := a.Path(a.Sites[0]); len(path) < 2 || !strings.HasSuffix(path[0], "(root)") {
		t.Errorf("Path: %v", path)
	}
}

func TestShortNameAndWrappers(t *testing.T) {
	p, err := Load(Config{Dir: "testdata/fixture", Mains: map[string]string{"fn": "./fn"}})
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for fn := range reachableAll(p) {
		names[ShortName(fn)] = true
	}
	for _, want := range []string{"(*main.handler).Handle", "(*main.handler).Handle$1", "main.byIndex", "(*dynamodb.ScanPaginator).NextPage"} {
		if !names[want] {
			t.Errorf("no reachable function named %s", want)
		}
	}
}

// reachableAll returns what the fixture's function reaches.
func reachableAll(p *Program) map[*ssa.Function]bool {
	a, err := p.Analyze("fn")
	if err != nil {
		panic(err)
	}
	return a.reach
}

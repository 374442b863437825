package process

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"io/fs"
	"slices"
	"strings"
	"testing"
)

// maxExported is the team API's budget: the exported names `go doc -all
// ./shared/engine/process` lists (types, funcs, methods, consts, vars). The engine
// lives in shared/engine/dispatch and shared/engine/compensate; the setting record in
// shared/config/setting, a team's declaration and dependencies in shared/engine/platform.
const maxExported = 30

// exportedNames returns the exported names of this package as go doc lists
// them, and the ones without a doc comment.
func exportedNames(t *testing.T) (names, undocumented []string) {
	t.Helper()
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi fs.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") },
		parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	files := []*ast.File{}
	for _, f := range pkgs["process"].Files {
		files = append(files, f)
	}
	p, err := doc.NewFromFiles(fset, files, "github.com/hookwall/hookwall/shared/engine/process")
	if err != nil {
		t.Fatal(err)
	}
	add := func(name, docText string) {
		names = append(names, name)
		if strings.TrimSpace(docText) == "" {
			undocumented = append(undocumented, name)
		}
	}
	values := func(vs []*doc.Value) {
		for _, v := range vs {
			for _, n := range v.Names {
				add(n, v.Doc)
			}
		}
	}
	funcs := func(fs []*doc.Func, recv string) {
		for _, f := range fs {
			add(recv+f.Name, f.Doc)
		}
	}
	values(p.Consts)
	values(p.Vars)
	funcs(p.Funcs, "")
	for _, typ := range p.Types {
		add(typ.Name, typ.Doc)
		values(typ.Consts)
		values(typ.Vars)
		funcs(typ.Funcs, "")
		funcs(typ.Methods, typ.Name+".")
	}
	slices.Sort(names)
	return names, undocumented
}

func TestTeamAPIFitsItsBudget(t *testing.T) {
	names, undocumented := exportedNames(t)
	t.Logf("%d exported names: %v", len(names), names)
	if len(names) > maxExported {
		t.Errorf("shared/engine/process exports %d names, at most %d: %v (engine names belong in shared/engine/dispatch)", len(names), maxExported, names)
	}
	if len(undocumented) > 0 {
		t.Errorf("exported names without a doc comment: %v", undocumented)
	}
	for _, want := range []string{"Registry", "Handle", "Event.Step", "StepResult", "Compensate"} {
		if !slices.Contains(names, want) {
			t.Errorf("the team API lacks %s (or the counter misses it): %v", want, names)
		}
	}
}

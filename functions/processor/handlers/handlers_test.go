package handlers

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/hookwall/hookwall/functions/processor/handlers/approvals"
	"github.com/hookwall/hookwall/functions/processor/handlers/crm"
	"github.com/hookwall/hookwall/functions/processor/handlers/forward"
	"github.com/hookwall/hookwall/shared/dispatch"
	"github.com/hookwall/hookwall/shared/process"
	"github.com/hookwall/hookwall/shared/tenants"
)

const thisPackage = "github.com/hookwall/hookwall/functions/processor/handlers"

// team is one team's package under functions/processor/handlers/, as its
// source declares it.
type team struct {
	dir          string   // directory name, e.g. "crm"
	hasRegister  bool     // declares func Register
	handlerNames []string // values of its exported …HandlerName string constants
}

// teams reads every package directory under this one.
func teams(t *testing.T) []team {
	t.Helper()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	var out []team
	for _, e := range entries {
		if !e.IsDir() || e.Name() == "testdata" {
			continue
		}
		fset := token.NewFileSet()
		files, err := filepath.Glob(filepath.Join(e.Name(), "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		tm := team{dir: e.Name()}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			file, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatalf("parse %s: %v", f, err)
			}
			for _, d := range file.Decls {
				switch d := d.(type) {
				case *ast.FuncDecl:
					if d.Recv == nil && d.Name.Name == "Register" {
						tm.hasRegister = true
					}
				case *ast.GenDecl:
					if d.Tok == token.CONST {
						tm.handlerNames = append(tm.handlerNames, handlerNameConsts(t, d)...)
					}
				}
			}
		}
		if len(files) > 0 {
			out = append(out, tm)
		}
	}
	return out
}

// handlerNameConsts returns the string values of the exported constants of
// d whose name ends in HandlerName.
func handlerNameConsts(t *testing.T, d *ast.GenDecl) []string {
	t.Helper()
	var out []string
	for _, spec := range d.Specs {
		vs := spec.(*ast.ValueSpec)
		for i, name := range vs.Names {
			if !name.IsExported() || !strings.HasSuffix(name.Name, "HandlerName") || i >= len(vs.Values) {
				continue
			}
			lit, ok := vs.Values[i].(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				t.Errorf("%s is not a string literal; the test cannot read it", name.Name)
				continue
			}
			v, err := strconv.Unquote(lit.Value)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, v)
		}
	}
	return out
}

// wiredTeams returns the directories of the team packages whose Register
// this package's Register calls.
func wiredTeams(t *testing.T) []string {
	t.Helper()
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, "handlers.go", nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]string{} // local package name → directory under this one
	for _, imp := range file.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		dir, ok := strings.CutPrefix(path, thisPackage+"/")
		if !ok {
			continue
		}
		name := filepath.Base(dir)
		if imp.Name != nil {
			name = imp.Name.Name
		}
		byName[name] = dir
	}
	var wired []string
	for _, d := range file.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Recv != nil || fn.Name.Name != "Register" {
			continue
		}
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || sel.Sel.Name != "Register" {
				return true
			}
			if pkg, ok := sel.X.(*ast.Ident); ok && byName[pkg.Name] != "" {
				wired = append(wired, byName[pkg.Name])
			}
			return true
		})
	}
	return wired
}

func testTenants(t *testing.T) *tenants.Tenants {
	t.Helper()
	doc, err := tenants.Parse([]byte(`{"tenants":{
		"acme":  {"line":{"channelSecret":"c"},"forward":{"url":"https://acme.example/hooks"}},
		"plain": {"line":{"channelSecret":"c"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// fullDeps returns Deps with every field set, found by reflection, so that
// every team is registered, including one whose setting is added to Deps
// later. A field of a kind it cannot fill fails the test: teach it.
func fullDeps(t *testing.T) Deps {
	t.Helper()
	var deps Deps
	v := reflect.ValueOf(&deps).Elem()
	ddb := reflect.ValueOf(&dynamodb.Client{})
	for i := range v.NumField() {
		f, field := v.Field(i), v.Type().Field(i)
		switch {
		case field.Type == reflect.TypeFor[*tenants.Tenants]():
			f.Set(reflect.ValueOf(testTenants(t)))
		case field.Type == reflect.TypeFor[*slog.Logger]():
			f.Set(reflect.ValueOf(slog.New(slog.DiscardHandler)))
		case field.Type == reflect.TypeFor[*http.Client]():
			f.Set(reflect.ValueOf(&http.Client{}))
		case field.Type.Kind() == reflect.String:
			f.SetString("https://example.test/" + strings.ToLower(field.Name))
		case field.Type.Kind() == reflect.Bool:
			f.SetBool(true)
		case field.Type.Kind() == reflect.Interface && ddb.Type().Implements(field.Type):
			f.Set(ddb)
		default:
			t.Fatalf("Deps.%s (%s): fullDeps cannot fill it; teach it, so that the full registry stays full", field.Name, field.Type)
		}
	}
	return deps
}

// register runs Register and turns a panic (a duplicate handler name, a
// missing dependency) into a test failure that names it.
func register(t *testing.T, r *process.Registry, deps Deps) {
	t.Helper()
	defer func() {
		if p := recover(); p != nil {
			t.Fatalf("Register panicked: %v", p)
		}
	}()
	Register(r, deps)
}

func names(r *process.Registry) []string {
	var out []string
	for _, h := range dispatch.Handlers(r) {
		out = append(out, h.Name)
	}
	slices.Sort(out)
	return out
}

// Every team package is called from Register, and with every dependency
// set, every handler name a team declares is registered, once, completely.
func TestRegisterWiresEveryTeam(t *testing.T) {
	all := teams(t)
	if len(all) < 3 {
		t.Fatalf("found %d team packages, want at least approvals, crm and forward", len(all))
	}
	wired := wiredTeams(t)
	r := process.NewRegistry()
	register(t, r, fullDeps(t))
	got := names(r)
	var declared []string
	for _, tm := range all {
		if !tm.hasRegister {
			t.Errorf("team package %s declares no func Register", tm.dir)
		}
		if !slices.Contains(wired, tm.dir) {
			t.Errorf("team package %s: handlers.Register never calls %s.Register", tm.dir, tm.dir)
		}
		if len(tm.handlerNames) == 0 {
			t.Errorf("team package %s declares no exported …HandlerName constant", tm.dir)
		}
		for _, n := range tm.handlerNames {
			declared = append(declared, n)
			if !slices.Contains(got, n) {
				t.Errorf("team %s: handler %q is not registered with every dependency set (got %v)", tm.dir, n, got)
			}
		}
	}
	if len(got) != len(slices.Compact(slices.Clone(got))) {
		t.Errorf("a handler name registered twice: %v", got)
	}
	slices.Sort(declared)
	if len(declared) != len(slices.Compact(slices.Clone(declared))) {
		t.Errorf("two teams declare the same handler name: %v", declared)
	}
	for _, h := range dispatch.Handlers(r) {
		if h.Name == "" || h.Provider == "" || h.EventType == "" {
			t.Errorf("handler %q: incomplete registration (provider %q, event type %q)", h.Name, h.Provider, h.EventType)
		}
	}
}

// The registry panics on a name registered twice; the test above relies on
// that to catch two teams choosing one name.
func TestRegisterTwicePanicsOnTheDuplicateName(t *testing.T) {
	r := process.NewRegistry()
	deps := fullDeps(t)
	register(t, r, deps)
	defer func() {
		p := recover()
		if p == nil || !strings.Contains(fmt.Sprint(p), "registered twice") {
			t.Errorf("got panic %v, want a duplicate handler name", p)
		}
	}()
	Register(r, deps)
}

func TestRegisterListsTheTeamsWhoseSettingsArePresent(t *testing.T) {
	tt := testTenants(t)
	tests := []struct {
		name string
		deps Deps
		want []string
	}{
		{"nothing configured: forward only", Deps{}, []string{forward.HandlerName}},
		{"crm only", Deps{CRMLeadsURL: "https://crm.example/api"}, []string{crm.HandlerName, forward.HandlerName}},
		{"approvals only", Deps{DynamoDB: &dynamodb.Client{}, ApprovalsTable: "approvals"}, []string{approvals.HandlerName, forward.HandlerName}},
		{"every team", Deps{Tenants: tt, DynamoDB: &dynamodb.Client{}, CRMLeadsURL: "https://crm.example/api", ApprovalsTable: "approvals"},
			[]string{approvals.HandlerName, crm.HandlerName, forward.HandlerName}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := process.NewRegistry()
			register(t, r, tc.deps)
			want := slices.Sorted(slices.Values(tc.want))
			if got := names(r); !slices.Equal(got, want) {
				t.Errorf("got handlers %v, want %v", got, want)
			}
		})
	}
}

func TestForwardRunsLastAndOnlyForItsTenants(t *testing.T) {
	tt := testTenants(t)
	all := process.NewRegistry()
	register(t, all, Deps{Tenants: tt, CRMLeadsURL: "https://crm.example/api"})
	var order []string
	for _, h := range dispatch.Match(all, "line", "acme", "follow") {
		order = append(order, h.Name)
	}
	if want := []string{crm.HandlerName, forward.HandlerName}; !slices.Equal(order, want) {
		t.Errorf("acme's LINE follow: got handlers %v, want %v (forward last)", order, want)
	}
	r := process.NewRegistry()
	register(t, r, Deps{Tenants: tt})
	if got := dispatch.Match(r, "wecom", "acme", "text"); len(got) != 1 || got[0].Name != forward.HandlerName {
		t.Errorf("acme's wecom text: got %v, want the forward handler", got)
	}
	if got := dispatch.Match(r, "wecom", "plain", "text"); len(got) != 0 {
		t.Errorf("plain's wecom text: got %v, want no handler", got)
	}
}

func TestApprovalsWithoutDynamoDBPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("no panic for APPROVALS_TABLE without a DynamoDB client")
		}
	}()
	Register(process.NewRegistry(), Deps{ApprovalsTable: "approvals"})
}

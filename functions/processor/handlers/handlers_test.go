package handlers

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/hookwall/hookwall/functions/processor/handlers/approvals"
	"github.com/hookwall/hookwall/functions/processor/handlers/crm"
	"github.com/hookwall/hookwall/functions/processor/handlers/forward"
	"github.com/hookwall/hookwall/shared/config/tenants"
	"github.com/hookwall/hookwall/shared/engine/dispatch"
	"github.com/hookwall/hookwall/shared/engine/platform"
	"github.com/hookwall/hookwall/shared/engine/process"
)

const (
	module      = "github.com/hookwall/hookwall/"
	thisPackage = module + "functions/processor/handlers"
)

// team is one team's package under functions/processor/handlers/, as its
// source declares it.
type team struct {
	dir     string // directory name, e.g. "crm"
	hasTeam bool   // declares var Team = platform.Team{...}, the one shape
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
			if lit := varLiteral(file, "Team"); lit != nil {
				tm.hasTeam = isSelector(lit.Type, "platform", "Team")
			}
		}
		if len(files) > 0 {
			out = append(out, tm)
		}
	}
	return out
}

// varLiteral returns the composite literal file's package-level var name
// is set to, or nil.
func varLiteral(file *ast.File, name string) *ast.CompositeLit {
	for _, d := range file.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.VAR {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			if len(vs.Names) == 1 && vs.Names[0].Name == name && len(vs.Values) == 1 {
				lit, _ := vs.Values[0].(*ast.CompositeLit)
				return lit
			}
		}
	}
	return nil
}

// isSelector reports whether x is pkg.name.
func isSelector(x ast.Expr, pkg, name string) bool {
	sel, ok := x.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	id, ok := sel.X.(*ast.Ident)
	return ok && id.Name == pkg && sel.Sel.Name == name
}

// wiredTeams returns the directories of the team packages whose Team this
// package's Teams lists, in order.
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
	lit := varLiteral(file, "Teams")
	if lit == nil {
		t.Fatal("handlers.go declares no var Teams = []platform.Team{...}")
	}
	var wired []string
	for _, el := range lit.Elts {
		sel, ok := el.(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != "Team" {
			continue
		}
		if pkg, ok := sel.X.(*ast.Ident); ok && byName[pkg.Name] != "" {
			wired = append(wired, byName[pkg.Name])
		}
	}
	return wired
}

// packageOf returns the import path, less the module's, of the package
// that declares fn.
func packageOf(fn any) string {
	name := runtime.FuncForPC(reflect.ValueOf(fn).Pointer()).Name()
	slash := strings.LastIndexByte(name, '/')
	if dot := strings.IndexByte(name[slash+1:], '.'); dot >= 0 {
		name = name[:slash+1+dot]
	}
	return strings.TrimPrefix(name, module)
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

// deps are the dependencies the wiring gives the teams (backend.TeamDeps).
func deps(t *testing.T) platform.Deps {
	return platform.Deps{Tenants: testTenants(t), AWS: aws.Config{}, DynamoDB: &dynamodb.Client{}}
}

// build builds the registry of every team as the wiring does, with env.
func build(t *testing.T, env map[string]string, deps platform.Deps) *process.Registry {
	t.Helper()
	r, err := platform.Build(func(name string) string { return env[name] }, deps, Teams...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// fullEnv sets every handler setting the teams declare to a valid value
// (its example), so that every team registers.
func fullEnv(t *testing.T) map[string]string {
	t.Helper()
	settings, err := platform.Settings(Teams...)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for _, s := range settings {
		env[s.Name] = s.Sample()
	}
	return env
}

func names(r *process.Registry) []string {
	var out []string
	for _, h := range dispatch.Handlers(r) {
		out = append(out, h.Name)
	}
	slices.Sort(out)
	return out
}

// Every team package has the one Team shape and is listed in Teams,
// forward last, under its own package as Owner; with every setting set (to
// its example) and every dependency given, each registers a handler, and
// every registration is complete.
func TestRegisterWiresEveryTeam(t *testing.T) {
	all := teams(t)
	if len(all) < 3 {
		t.Fatalf("found %d team packages, want at least approvals, crm and forward", len(all))
	}
	wired := wiredTeams(t)
	if len(wired) == 0 || wired[len(wired)-1] != "forward" {
		t.Errorf("handlers.Teams lists %v, want forward last", wired)
	}
	for _, tm := range Teams {
		if got := packageOf(tm.Register); tm.Owner != got {
			t.Errorf("team %q: its Register is of package %s, want Owner to name it", tm.Owner, got)
		}
	}
	r := build(t, fullEnv(t), deps(t))
	owners := map[string]int{}
	for _, h := range dispatch.Handlers(r) {
		owners[strings.TrimPrefix(h.Owner, "functions/processor/handlers/")]++
		if h.Name == "" || h.Provider == "" || h.EventType == "" {
			t.Errorf("handler %q: incomplete registration (provider %q, event type %q)", h.Name, h.Provider, h.EventType)
		}
	}
	for _, tm := range all {
		if !tm.hasTeam {
			t.Errorf("team package %s declares no var Team = platform.Team{...}", tm.dir)
		}
		if !slices.Contains(wired, tm.dir) {
			t.Errorf("team package %s: handlers.Teams does not list %s.Team", tm.dir, tm.dir)
		}
		if owners[tm.dir] == 0 {
			t.Errorf("team package %s registers no handler with every setting set (handlers by package: %v)", tm.dir, owners)
		}
	}
	settings, err := platform.Settings(Teams...)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range settings {
		if !strings.HasPrefix(s.Owner, "functions/processor/handlers/") {
			t.Errorf("setting %s is declared by %s, not by a team package", s.Name, s.Owner)
		}
	}
}

// The registry refuses a name registered twice; the test above relies on
// that to catch two teams choosing one name.
func TestRegisterTwiceFailsOnTheDuplicateName(t *testing.T) {
	env := fullEnv(t)
	_, err := platform.Build(func(name string) string { return env[name] }, deps(t), append(Teams, Teams...)...)
	if err == nil || !strings.Contains(err.Error(), "registered twice") {
		t.Errorf("got %v, want a duplicate handler name", err)
	}
}

func TestRegisterListsTheTeamsWhoseSettingsArePresent(t *testing.T) {
	crmURL, table := crm.LeadsURL.Name, approvals.Table.Name
	tests := []struct {
		name string
		env  map[string]string
		want []string
	}{
		{"nothing configured: forward only", nil, []string{forward.HandlerName}},
		{"crm only", map[string]string{crmURL: "https://crm.example/api"}, []string{crm.HandlerName, forward.HandlerName}},
		{"approvals only", map[string]string{table: "approvals"}, []string{approvals.HandlerName, forward.HandlerName}},
		{"every team", map[string]string{crmURL: "https://crm.example/api", table: "approvals"},
			[]string{approvals.HandlerName, crm.HandlerName, forward.HandlerName}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want := slices.Sorted(slices.Values(tc.want))
			if got := names(build(t, tc.env, deps(t))); !slices.Equal(got, want) {
				t.Errorf("got handlers %v, want %v", got, want)
			}
		})
	}
}

func TestForwardRunsLastAndOnlyForItsTenants(t *testing.T) {
	all := build(t, map[string]string{crm.LeadsURL.Name: "https://crm.example/api"}, deps(t))
	var order []string
	for _, h := range dispatch.Match(all, "line", "acme", "follow") {
		order = append(order, h.Name)
	}
	if want := []string{crm.HandlerName, forward.HandlerName}; !slices.Equal(order, want) {
		t.Errorf("acme's LINE follow: got handlers %v, want %v (forward last)", order, want)
	}
	r := build(t, nil, platform.Deps{Tenants: testTenants(t)})
	if got := dispatch.Match(r, "wecom", "acme", "text"); len(got) != 1 || got[0].Name != forward.HandlerName {
		t.Errorf("acme's wecom text: got %v, want the forward handler", got)
	}
	if got := dispatch.Match(r, "wecom", "plain", "text"); len(got) != 0 {
		t.Errorf("plain's wecom text: got %v, want no handler", got)
	}
}

// An invalid handler setting fails the build (the processor's and the
// compensator's cold start) with an error naming each variable at fault.
func TestInvalidSettingsNameTheVariable(t *testing.T) {
	env := map[string]string{crm.LeadsURL.Name: "crm.example/leads", approvals.Table.Name: "ab"}
	_, err := platform.Build(func(name string) string { return env[name] }, deps(t), Teams...)
	for _, want := range []string{"CRM_LEADS_URL: want an absolute http(s) URL", `APPROVALS_TABLE="ab"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v, want an error with %q", err, want)
		}
	}
	if err != nil && strings.Contains(err.Error(), "crm.example/leads") {
		t.Errorf("the error %q shows the URL's value (it may carry a token)", err)
	}
}

func TestApprovalsWithoutDynamoDBFails(t *testing.T) {
	_, err := platform.Build(func(name string) string {
		return map[string]string{approvals.Table.Name: "approvals"}[name]
	}, platform.Deps{Tenants: testTenants(t)}, Teams...)
	if err == nil || !strings.Contains(err.Error(), "no DynamoDB client") {
		t.Errorf("got %v, want an error for APPROVALS_TABLE without a DynamoDB client", err)
	}
}

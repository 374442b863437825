package scaffold

import (
	"errors"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hookwall/hookwall/shared/base/repo"
)

func TestCheckTeam(t *testing.T) {
	for _, ok := range []string{"billing", "b2b", "tickets", "x"} {
		if err := CheckTeam(ok); err != nil {
			t.Errorf("CheckTeam(%q) = %v, want nil", ok, err)
		}
	}
	for _, bad := range []string{"", "Billing", "bil_ling", "bil-ling", "9lives", "func", "string", "len", "internal",
		"testdata", "aws", "hookwall", "café", strings.Repeat("a", 31)} {
		if err := CheckTeam(bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("CheckTeam(%q) = %v, want ErrInvalid", bad, err)
		}
	}
}

func TestSlug(t *testing.T) {
	for in, want := range map[string]string{"message": "message", "sys_approval_change": "sys-approval-change",
		"CLICK": "click", "im.message.receive_v1": "im-message-receive-v1", "__x__": "x"} {
		if got := slug(in); got != want {
			t.Errorf("slug(%q) = %q, want %q", in, got, want)
		}
	}
}

const handlersGo = `// Package handlers lists the teams.
package handlers

import (
	"github.com/hookwall/hookwall/functions/processor/handlers/approvals"
	"github.com/hookwall/hookwall/functions/processor/handlers/crm"
	"github.com/hookwall/hookwall/functions/processor/handlers/forward"
	"github.com/hookwall/hookwall/shared/engine/platform"
	"github.com/hookwall/hookwall/shared/engine/process"
)

// Teams are every team.
var Teams = []platform.Team{
	crm.Team,
	approvals.Team, // a trailing comment stays on its line

	// Built in, always, and last.
	forward.Team,
}
`

// added returns the lines of after that before does not have, in order.
func added(before, after string) []string {
	have := map[string]int{}
	for _, l := range strings.Split(before, "\n") {
		have[l]++
	}
	var out []string
	for _, l := range strings.Split(after, "\n") {
		if have[l] > 0 {
			have[l]--
			continue
		}
		out = append(out, l)
	}
	return out
}

func TestAddTeamAddsTheImportAndTheEntryBeforeTheForwarder(t *testing.T) {
	got, err := addTeam([]byte(handlersGo), "billing")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"\t\"github.com/hookwall/hookwall/functions/processor/handlers/billing\"", "\tbilling.Team,"}
	if a := added(handlersGo, string(got)); !slices.Equal(a, want) {
		t.Errorf("added lines %q, want %q; got:\n%s", a, want, got)
	}
	if a := added(string(got), handlersGo); len(a) != 0 {
		t.Errorf("removed lines %q", a)
	}
	s := string(got)
	if !(strings.Index(s, "approvals.Team, // a trailing") < strings.Index(s, "billing.Team,") &&
		strings.Index(s, "billing.Team,") < strings.Index(s, "// Built in") &&
		strings.Index(s, `handlers/approvals"`) < strings.Index(s, `handlers/billing"`) &&
		strings.Index(s, `handlers/billing"`) < strings.Index(s, `handlers/crm"`)) {
		t.Errorf("the entry or the import is out of place:\n%s", s)
	}
}

func TestAddTeamToAListWithoutTeams(t *testing.T) {
	src := strings.Replace(strings.Replace(handlersGo, "\tcrm.Team,\n\tapprovals.Team, // a trailing comment stays on its line\n\n", "", 1),
		"\t\"github.com/hookwall/hookwall/functions/processor/handlers/approvals\"\n\t\"github.com/hookwall/hookwall/functions/processor/handlers/crm\"\n", "", 1)
	got, err := addTeam([]byte(src), "billing")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(got), "{\n\tbilling.Team,\n\n\t// Built in, always, and last.\n\tforward.Team,\n}") {
		t.Errorf("got:\n%s", got)
	}
}

func TestAddTeamRefuses(t *testing.T) {
	tests := []struct {
		name, src, team string
		invalid         bool // a usage error (ErrInvalid), not a broken handlers.go
	}{
		{"a team imported already", handlersGo, "crm", true},
		{"a name handlers.go uses", handlersGo, "process", true},
		{"no forwarder", strings.Replace(handlersGo, "\tforward.Team,\n", "", 1), "billing", false},
		{"no Teams", strings.Replace(handlersGo, "var Teams =", "var teams =", 1), "billing", false},
		{"not Go", "package", "billing", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := addTeam([]byte(tc.src), tc.team)
			if err == nil || errors.Is(err, ErrInvalid) != tc.invalid {
				t.Errorf("got %v, want an error (a usage error: %v)", err, tc.invalid)
			}
		})
	}
}

func root(t *testing.T) string {
	t.Helper()
	r, err := repo.FindRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestFindEvent(t *testing.T) {
	r := root(t)
	ev, err := findEvent(r, "line/message")
	if err != nil || ev != (event{provider: "line", typ: "message", pkg: "line", typeVar: "Message", dataType: "MessageEvent"}) {
		t.Errorf("line/message: got %+v, %v", ev, err)
	}
	ev, err = findEvent(r, "line/beacon")
	if err != nil || ev.typeVar != "" || ev.pkg != "line" {
		t.Errorf("line/beacon (no typed event): got %+v, %v; want a local type", ev, err)
	}
	_, err = findEvent(r, "nosuch/message")
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "line/message") {
		t.Errorf("an unknown provider: got %v, want a usage error listing the typed events", err)
	}
	for _, bad := range []string{"line", "/message", "line/", "Line/message", "line/mes sage"} {
		if _, err := findEvent(r, bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("findEvent(%q) = %v, want ErrInvalid", bad, err)
		}
	}
}

// module makes a module root in a temporary directory with this
// repository's handlers.go and LINE provider package.
func module(t *testing.T) string {
	t.Helper()
	src, dst := root(t), t.TempDir()
	for _, f := range []string{"go.mod", filepath.Join(HandlersDir, "handlers.go"), filepath.Join(ProvidersDir, "line", "events.go"),
		filepath.Join(SamplesDir, "line-message.json"), filepath.Join(SamplesDir, "line-follow.json"), filepath.Join(SamplesDir, "line-beacon.json")} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dst, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

func TestNewHandlerWritesTheTeamAndItsEntry(t *testing.T) {
	for _, tc := range []struct {
		event, wantType, wantHandler string
	}{
		{"", "line.Message", "billing.from-line-message"},
		{"line/follow", "line.Follow", "billing.from-line-follow"},
		{"line/beacon", "EventType", "billing.from-line-beacon"},
	} {
		t.Run("event "+tc.event, func(t *testing.T) {
			dir := module(t)
			res, err := NewHandler(Options{Root: dir, Team: "billing", Event: tc.event})
			if err != nil {
				t.Fatal(err)
			}
			wantFiles := []string{"functions/processor/handlers/billing/doc.go", "functions/processor/handlers/billing/billing.go",
				"functions/processor/handlers/billing/billing_test.go", "functions/processor/handlers/billing/testdata/sample.json"}
			if !slices.Equal(res.Created, wantFiles) || !slices.Equal(res.Changed, []string{"functions/processor/handlers/handlers.go"}) ||
				res.Handler != tc.wantHandler || res.Setting != "BILLING_API_URL" {
				t.Errorf("got %+v", res)
			}
			fset := token.NewFileSet()
			for _, f := range res.Created[:3] {
				file, err := parser.ParseFile(fset, filepath.Join(dir, f), nil, parser.ParseComments)
				if err != nil {
					t.Fatalf("%s: %v", f, err)
				}
				if want := "billing"; f != wantFiles[2] && file.Name.Name != want {
					t.Errorf("%s: package %s", f, file.Name.Name)
				}
			}
			code, _ := os.ReadFile(filepath.Join(dir, wantFiles[1]))
			for _, want := range []string{`process.Handle(r, HandlerName, ` + tc.wantType + `, c.handle,`, `Name:    "BILLING_API_URL",`,
				`const HandlerName = "` + tc.wantHandler + `"`, "process.Compensate(c.undo)"} {
				if !strings.Contains(string(code), want) {
					t.Errorf("billing.go lacks %q:\n%s", want, code)
				}
			}
			listed, _ := os.ReadFile(filepath.Join(dir, HandlersDir, "handlers.go"))
			if !strings.Contains(string(listed), "\tbilling.Team,\n") {
				t.Errorf("handlers.go:\n%s", listed)
			}
		})
	}
}

func TestNewHandlerWritesNothingWhenItRefuses(t *testing.T) {
	dir := module(t)
	listed, _ := os.ReadFile(filepath.Join(dir, HandlersDir, "handlers.go"))
	for _, o := range []Options{{Team: "Billing"}, {Team: "crm"}, {Team: "billing", Event: "nosuch/x"}} {
		o.Root = dir
		if _, err := NewHandler(o); !errors.Is(err, ErrInvalid) {
			t.Errorf("%+v: got %v, want ErrInvalid", o, err)
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, HandlersDir, "crm"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := NewHandler(Options{Root: dir, Team: "crm"}); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "exists") {
		t.Errorf("an existing team: got %v, want ErrInvalid saying it exists", err)
	}
	if _, err := NewHandler(Options{Root: t.TempDir(), Team: "billing"}); !errors.Is(err, ErrInvalid) {
		t.Errorf("outside a module root: got %v, want ErrInvalid", err)
	}
	after, _ := os.ReadFile(filepath.Join(dir, HandlersDir, "handlers.go"))
	entries, _ := os.ReadDir(filepath.Join(dir, HandlersDir))
	if string(after) != string(listed) || len(entries) != 2 { // handlers.go and the crm directory made above
		t.Errorf("a refused call wrote something: %d entries, handlers.go changed: %v", len(entries), string(after) != string(listed))
	}
}

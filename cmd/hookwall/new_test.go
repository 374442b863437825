package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hookwall/hookwall/cmd/internal/scaffold"
	"github.com/hookwall/hookwall/shared/base/repo"
)

// smallModule makes a module root in a temporary directory with what `new
// handler` reads: go.mod, handlers.go and the LINE provider's typed events.
func smallModule(t *testing.T) string {
	t.Helper()
	src, err := repo.FindRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	dst := t.TempDir()
	for _, f := range []string{"go.mod", filepath.Join(scaffold.HandlersDir, "handlers.go"), filepath.Join(scaffold.ProvidersDir, "line", "events.go"),
		filepath.Join(scaffold.SamplesDir, "line-message.json"), filepath.Join(scaffold.SamplesDir, "line-follow.json")} {
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

// runNew runs hookwall with args in wd, with generate standing for `make
// generate` (nil: one that succeeds), and returns the exit code, stdout,
// stderr and the roots generate was called for.
func runNew(t *testing.T, wd string, generate func() error, args ...string) (int, string, string, []string) {
	t.Helper()
	var out, errOut bytes.Buffer
	a := newApp(&out, &errOut, func(string) string { return "" })
	a.wd = wd
	var roots []string
	a.generate = func(_ context.Context, root string, _ io.Writer) error {
		roots = append(roots, root)
		if generate != nil {
			return generate()
		}
		return nil
	}
	code := a.main(context.Background(), args)
	return code, out.String(), errOut.String(), roots
}

func TestNewHandlerWritesTheTeamThenGenerates(t *testing.T) {
	root := smallModule(t)
	code, out, errOut, roots := runNew(t, filepath.Join(root, scaffold.HandlersDir), nil, "new", "handler", "ledger")
	want(t, code, out, errOut, exitOK, []string{
		"created functions/processor/handlers/ledger/ledger.go", "created functions/processor/handlers/ledger/ledger_test.go",
		"changed functions/processor/handlers/handlers.go: ledger.Team before the built-in forwarder",
		"generated template.yaml, README.md (go run ./cmd/hookwall-gen)", "LEDGER_API_URL",
		"go test ./functions/processor/handlers/ledger/"}, nil)
	if !slices.Equal(roots, []string{root}) {
		t.Errorf("generate ran for %v, want once for %s (found from the working directory)", roots, root)
	}
	if _, err := os.Stat(filepath.Join(root, scaffold.HandlersDir, "ledger", "doc.go")); err != nil {
		t.Error(err)
	}
}

func TestNewHandlerJSONAndDir(t *testing.T) {
	root := smallModule(t)
	code, out, errOut, _ := runNew(t, t.TempDir(), nil, "new", "handler", "--json", "--dir", root, "--event", "line/follow", "ledger")
	want(t, code, out, errOut, exitOK, nil, nil)
	var got newHandlerJSON
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("stdout is not the JSON alone: %v\n%s", err, out)
	}
	if got.Team != "ledger" || got.Handler != "ledger.from-line-follow" || got.Event != "line/follow" || got.Setting != "LEDGER_API_URL" ||
		len(got.Created) != 4 || !slices.Equal(got.Changed, []string{"functions/processor/handlers/handlers.go"}) ||
		!slices.Equal(got.Generated, []string{"template.yaml", "README.md"}) {
		t.Errorf("got %+v", got)
	}
}

func TestNewHandlerUsageErrors(t *testing.T) {
	root := smallModule(t)
	if err := os.Mkdir(filepath.Join(root, scaffold.HandlersDir, "crm"), 0o755); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		wd    string
		args  []string
		inErr []string
	}{
		{"no team", root, []string{"new", "handler"}, []string{"want one team name", "Run 'hookwall new handler --help'"}},
		{"two teams", root, []string{"new", "handler", "a", "b"}, []string{"want one team name"}},
		{"not a package name", root, []string{"new", "handler", "Ledger"}, []string{`team name "Ledger": want lower-case letters`}},
		{"a keyword", root, []string{"new", "handler", "func"}, []string{"a Go keyword"}},
		{"an existing team", root, []string{"new", "handler", "crm"}, []string{"functions/processor/handlers/crm exists"}},
		{"an unknown event", root, []string{"new", "handler", "ledger", "--event", "nosuch/x"}, []string{"no provider package shared/protocol/provider/nosuch", "line/follow"}},
		{"outside the repository", t.TempDir(), []string{"new", "handler", "ledger"}, []string{"no go.mod of github.com/hookwall/hookwall", "give --dir"}},
		{"no subcommand", root, []string{"new"}, []string{"new needs a subcommand", "hookwall new handler TEAM"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut, roots := runNew(t, tc.wd, nil, tc.args...)
			want(t, code, out, errOut, exitUsage, nil, tc.inErr)
			if len(roots) != 0 {
				t.Errorf("generate ran on a usage error")
			}
		})
	}
	if entries, _ := os.ReadDir(filepath.Join(root, scaffold.HandlersDir)); len(entries) != 2 {
		t.Errorf("a usage error wrote something: %v", entries)
	}
}

func TestNewHandlerSaysHowToGenerateWhenItCannot(t *testing.T) {
	root := smallModule(t)
	code, out, errOut, _ := runNew(t, root, func() error { return errors.New("go: not found") }, "new", "handler", "ledger")
	want(t, code, out, errOut, exitFailed, []string{"created functions/processor/handlers/ledger/ledger.go"},
		[]string{"the package and its entry are written", "go: not found", "cd " + root + " && make generate"})
}

func TestNewHandlerHelp(t *testing.T) {
	code, out, errOut, _ := runNew(t, t.TempDir(), nil, "new", "handler", "--help")
	want(t, code, out, errOut, exitOK, []string{"hookwall new handler TEAM", "--event", "--dir", "processtest"}, nil)
	if !strings.Contains(topUsage, "new handler TEAM") {
		t.Errorf("hookwall help does not list new handler")
	}
}

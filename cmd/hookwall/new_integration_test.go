//go:build integration

package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hookwall/hookwall/cmd/internal/scaffold"
	"github.com/hookwall/hookwall/shared/base/repo"
)

// The proof that adding a configurable handler is one new package plus one
// line: in a copy of the module, `hookwall new handler ledger` writes the
// team, the team gets a second setting the way the README's recipe says
// (declared once, listed in its Team, read in Register), `make generate` runs, and
// `go test` passes on the new package, on handlers (every team listed and
// registering) and on the generator (no drift). What changed in the copy is
// exactly the new package, handlers.go (the entry and its import) and the
// two generated files.
func TestNewHandlerIsOnePackageAndOneLine(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatalf("git is needed to list the module's files: %v", err)
	}
	src, err := repo.FindRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "hookwall")
	copyModule(t, src, dst)
	before := snapshot(t, dst)

	// Offline, on the shared module and build caches: the copy needs
	// nothing the module cache does not hold.
	t.Setenv("GOFLAGS", "-mod=mod")
	t.Setenv("GOPROXY", "off")
	t.Setenv("GOWORK", "off")
	t.Chdir(filepath.Join(dst, "shared")) // the root is found from the working directory up

	var stdout, stderr bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if code := run(ctx, []string{"new", "handler", "ledger"}, &stdout, &stderr, os.Getenv); code != exitOK {
		t.Fatalf("hookwall new handler ledger: exit %d\nstdout:\n%s\nstderr:\n%s", code, &stdout, &stderr)
	}
	for _, want := range []string{"created functions/processor/handlers/ledger/ledger.go", "generated template.yaml, README.md"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("stdout lacks %q:\n%s", want, &stdout)
		}
	}

	// The README's step 2: declare the setting once, list it in the team's
	// Settings and read it in Register through the getter of its kind.
	team := filepath.Join(dst, scaffold.HandlersDir, "ledger", "ledger.go")
	edit(t, team,
		"// HandlerName is", `// Timeout bounds one run of the handler.
var Timeout = setting.Setting{
	Name:    "LEDGER_TIMEOUT",
	Kind:    setting.KindDuration,
	Doc:     "how long one run of the ledger handler may take",
	Default: "10s",
}

// HandlerName is`,
		"Settings: []setting.Setting{APIURL},", "Settings: []setting.Setting{APIURL, Timeout},",
		"\tbase := r.String(APIURL)\n", "\tbase := r.String(APIURL)\n\ttimeout := r.Duration(Timeout)\n",
		"process.Compensate(c.undo))", "process.Compensate(c.undo), process.Timeout(timeout))")
	goCmd(ctx, t, dst, "make", "generate")
	goCmd(ctx, t, dst, "go", "test", "-count=1", "./functions/processor/handlers/ledger/", "./functions/processor/handlers/", "./cmd/hookwall-gen/")

	after := snapshot(t, dst)
	var changed []string
	for name := range maps.Keys(after) {
		if before[name] != after[name] {
			changed = append(changed, name)
		}
	}
	for name := range maps.Keys(before) {
		if _, ok := after[name]; !ok {
			changed = append(changed, name)
		}
	}
	slices.Sort(changed)
	want := []string{"README.md", "functions/processor/handlers/handlers.go", "functions/processor/handlers/ledger/doc.go",
		"functions/processor/handlers/ledger/ledger.go", "functions/processor/handlers/ledger/ledger_test.go",
		"functions/processor/handlers/ledger/testdata/sample.json", "template.yaml"}
	if !slices.Equal(changed, want) {
		t.Errorf("changed files %q, want %q", changed, want)
	}

	orig := func(name string) string { return readFile(t, filepath.Join(src, name)) }
	now := func(name string) string { return readFile(t, filepath.Join(dst, name)) }
	handlersGo := filepath.Join(scaffold.HandlersDir, "handlers.go")
	checkAdded(t, handlersGo, orig(handlersGo), now(handlersGo), func(added []string) bool {
		return slices.Equal(added, []string{"\t\"github.com/hookwall/hookwall/functions/processor/handlers/ledger\"", "\tledger.Team,"})
	})
	checkAdded(t, "README.md", orig("README.md"), now("README.md"), func(added []string) bool {
		return len(added) == 2 && strings.HasPrefix(added[0], "| `LEDGER_API_URL` (`LedgerApiUrl`) | URL |") &&
			strings.HasPrefix(added[1], "| `LEDGER_TIMEOUT` (`LedgerTimeout`) | duration | `10s` |")
	})
	checkAdded(t, "template.yaml", orig("template.yaml"), now("template.yaml"), func(added []string) bool {
		joined := strings.Join(added, "\n")
		return strings.Count(joined, "LEDGER_API_URL: !Ref LedgerApiUrl") == 2 && strings.Count(joined, "LEDGER_TIMEOUT: !Ref LedgerTimeout") == 2 &&
			strings.Contains(joined, "  LedgerApiUrl:\n") && strings.Contains(joined, "  LedgerTimeout:\n")
	})
}

// Every provider's new team runs its test on a real delivery of its event
// (testdata/sample.*, from events/bodies) and passes; the test of the test:
// with a delivery carrying no event of the type, or an event with none of
// its fields, the new team's test fails.
func TestNewHandlerTestsRunOnARealSample(t *testing.T) {
	src, err := repo.FindRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "hookwall")
	copyModule(t, src, dst)
	t.Setenv("GOFLAGS", "-mod=mod")
	t.Setenv("GOPROXY", "off")
	t.Setenv("GOWORK", "off")
	t.Chdir(dst)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	teams := map[string]string{"ona": "line/message", "onb": "wecom/text", "onc": "wechat/subscribe", "ond": "slack/app_mention",
		"one": "feishu/im.message.receive_v1", "onf": "standard/order.paid", "ong": "wecom/sys_approval_change"}
	var pkgs []string
	for _, team := range slices.Sorted(maps.Keys(teams)) {
		if _, err := scaffold.NewHandler(scaffold.Options{Root: dst, Team: team, Event: teams[team]}); err != nil {
			t.Fatalf("new handler --event %s %s: %v", teams[team], team, err)
		}
		pkgs = append(pkgs, "./"+filepath.ToSlash(filepath.Join(scaffold.HandlersDir, team))+"/")
	}
	goCmd(ctx, t, dst, "go", append([]string{"test", "-count=1"}, pkgs...)...)

	// The test of the test: a LINE delivery with no message event; then the
	// real sample again, and a handler that leaves the event out of its call.
	dir := filepath.Join(dst, scaffold.HandlersDir, "ona")
	sample := filepath.Join(dir, "testdata", "sample.json")
	orig := readFile(t, sample)
	mustFail := func(what string) {
		t.Helper()
		c := exec.CommandContext(ctx, "go", "test", "-count=1", "-run", "TestTheAPIHearsOfTheEvent", pkgs[0])
		c.Dir = dst
		if out, err := c.CombinedOutput(); err == nil {
			t.Errorf("the new team's test passed with %s:\n%s", what, out)
		}
	}
	if err := os.WriteFile(sample, []byte(`{"destination":"U00000000000000000000000000000001","events":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	mustFail("a delivery carrying no event")
	if err := os.WriteFile(sample, []byte(orig), 0o644); err != nil {
		t.Fatal(err)
	}
	edit(t, filepath.Join(dir, "ona.go"), `"event": ev.Data,`, `"event": nil,`)
	mustFail("a handler that ignores the event's data")
}

// copyModule copies the files of the module at src that git tracks, or
// would track (untracked files that are not ignored), into dst: no .git,
// nothing ignored (.local, builds).
func copyModule(t *testing.T, src, dst string) {
	t.Helper()
	out, err := exec.Command("git", "-C", src, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	for _, name := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		from := filepath.Join(src, name)
		fi, err := os.Lstat(from)
		if err != nil || !fi.Mode().IsRegular() {
			continue // deleted in the working tree, a link or a submodule
		}
		b, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		to := filepath.Join(dst, name)
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(to, b, fi.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
	if !repo.IsRoot(dst) {
		t.Fatalf("the copy in %s has no go.mod of %s", dst, repo.Module)
	}
}

// snapshot returns the SHA-256 of every file under dir, by slash path.
func snapshot(t *testing.T, dir string) map[string][sha256.Size]byte {
	t.Helper()
	out := map[string][sha256.Size]byte{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		out[filepath.ToSlash(rel)] = sha256.Sum256(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// edit replaces, in the file at path, each old text (which must occur
// exactly once) with its new text; pairs are old, new, old, new, ...
func edit(t *testing.T, path string, pairs ...string) {
	t.Helper()
	s := readFile(t, path)
	for i := 0; i+1 < len(pairs); i += 2 {
		if n := strings.Count(s, pairs[i]); n != 1 {
			t.Fatalf("%s: %q occurs %d times, want once (the generated code changed?)", path, pairs[i], n)
		}
		s = strings.Replace(s, pairs[i], pairs[i+1], 1)
	}
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// goCmd runs name args in dir and fails the test with its output if it fails.
func goCmd(ctx context.Context, t *testing.T, dir, name string, args ...string) {
	t.Helper()
	c := exec.CommandContext(ctx, name, args...)
	c.Dir = dir
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

// checkAdded fails the test unless after is before with lines added only
// (none removed), and ok accepts the added lines, in order.
func checkAdded(t *testing.T, name, before, after string, ok func(added []string) bool) {
	t.Helper()
	added, removed := lineDiff(before, after)
	if len(removed) > 0 || !ok(added) {
		t.Errorf("%s: added %q, removed %q", name, added, removed)
	}
}

// lineDiff returns the lines of after missing from before and the lines of
// before missing from after (as multisets, each in its file's order).
func lineDiff(before, after string) (added, removed []string) {
	count := func(s string) map[string]int {
		m := map[string]int{}
		for _, l := range strings.Split(s, "\n") {
			m[l]++
		}
		return m
	}
	b, a := count(before), count(after)
	for _, l := range strings.Split(after, "\n") {
		if b[l] > 0 {
			b[l]--
			continue
		}
		added = append(added, l)
	}
	for _, l := range strings.Split(before, "\n") {
		if a[l] > 0 {
			a[l]--
			continue
		}
		removed = append(removed, l)
	}
	return added, removed
}

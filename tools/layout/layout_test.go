package layout

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// root is the repository's root, from tools/layout.
var root = filepath.Join("..", "..")

func TestNoFunctionOverTheLimitOutsideTests(t *testing.T) {
	long, err := LongFuncs(root, MaxFuncLines)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range long {
		t.Errorf("%s: over %d lines: split it into named stages", f, MaxFuncLines)
	}
}

func TestProductModuleRequiresNoHarnessDependency(t *testing.T) {
	found, err := Required(filepath.Join(root, "go.mod"), HarnessOnly)
	if err != nil {
		t.Fatal(err)
	}
	if len(found) > 0 {
		t.Errorf("the product's go.mod requires %s: only the harnesses (dev/) use it; run go mod tidy, or move the code that needs it into dev/", strings.Join(found, ", "))
	}
	// The harnesses' module does, so the check looks where it should.
	inDev, err := Required(filepath.Join(root, "dev", "go.mod"), HarnessOnly)
	if err != nil {
		t.Fatal(err)
	}
	if len(inDev) == 0 {
		t.Errorf("dev/go.mod requires none of %v: is HarnessOnly still right?", HarnessOnly)
	}
}

func TestLongFuncsFindsLongFunctionsAndLiterals(t *testing.T) {
	dir := t.TempDir()
	body := strings.Repeat("\t_ = 1\n", 10)
	src := "package p\n\nfunc Short() {\n" + body + "}\n\nfunc Long() {\n" + body + body + "}\n\n" +
		"var f = func() {\n" + body + body + "}\n"
	write(t, filepath.Join(dir, "p.go"), src)
	write(t, filepath.Join(dir, "p_test.go"), "package p\n\nfunc TestLong() {\n"+body+body+body+"}\n")
	write(t, filepath.Join(dir, "testdata", "q.go"), src)
	write(t, filepath.Join(dir, ".local", "q.go"), src)
	long, err := LongFuncs(dir, 15)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range long {
		got = append(got, f.String())
	}
	want := []string{"p.go:16 Long (22 lines)", "p.go:39 func literal (22 lines)"}
	if strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Errorf("LongFuncs = %q, want %q", got, want)
	}
}

func TestRequiredFindsDirectAndIndirect(t *testing.T) {
	p := filepath.Join(t.TempDir(), "go.mod")
	write(t, p, "module example.com/m\n\ngo 1.26\n\nrequire (\n\tgithub.com/rs/zerolog v1.33.0 // indirect\n\tgithub.com/chromedp/chromedp v0.23.1\n\tgolang.org/x/mod v0.42.0\n)\n")
	found, err := Required(p, HarnessOnly)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(found, ",") != "github.com/rs/zerolog,github.com/chromedp/chromedp" {
		t.Errorf("Required = %q", found)
	}
}

func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

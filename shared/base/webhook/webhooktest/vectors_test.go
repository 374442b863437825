package webhooktest

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestVectorsDirFindsTheSharedVectors(t *testing.T) {
	t.Setenv(VectorsEnv, "")
	dir := VectorsDir(t)
	if _, err := os.Stat(filepath.Join(dir, "line.json")); err != nil {
		t.Errorf("%s holds no line.json: %v", dir, err)
	}
}

func TestVectorsDirHonoursTheEnvironment(t *testing.T) {
	want := t.TempDir()
	t.Setenv(VectorsEnv, want)
	if got := VectorsDir(t); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestOnlyTestsImportIt checks that no package that ships imports this one:
// only test files and test-support packages (named …test, or the kits'
// shared driver, shared/engine/internal/testkit) may.
func TestOnlyTestsImportIt(t *testing.T) {
	const self = "github.com/hookwall/hookwall/shared/base/webhook/webhooktest"
	// -e: a package that does not build is still listed with its imports.
	out, err := exec.Command("go", "list", "-e", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "github.com/hookwall/hookwall/...").Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go list: %v: %s", err, ee.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 || strings.HasSuffix(fields[0], "test") || strings.HasSuffix(fields[0], "/internal/testkit") {
			continue
		}
		for _, imp := range fields[1:] {
			if imp == self {
				t.Errorf("%s imports %s, which is for tests only", fields[0], self)
			}
		}
	}
}

package repo

import (
	"os"
	"path/filepath"
	"testing"
)

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestFindRootSkipsOtherModules(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "go.mod"), "// the module\nmodule "+Module+"\n\ngo 1.26\n")
	write(t, filepath.Join(root, "a", "go.mod"), "module example.com/nested\n")
	deep := filepath.Join(root, "a", "b", "c")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	got, err := FindRoot(deep)
	if err != nil || got != root {
		t.Errorf("FindRoot(%s) = %q, %v; want %q", deep, got, err, root)
	}
	if IsRoot(filepath.Join(root, "a")) {
		t.Errorf("IsRoot of the nested module: got true, want false")
	}
}

func TestFindRootAcceptsAQuotedModulePath(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "go.mod"), "module \""+Module+"\"\n")
	if got, err := FindRoot(root); err != nil || got != root {
		t.Errorf("FindRoot = %q, %v; want %q", got, err, root)
	}
}

func TestFindRootOutsideTheRepositoryFails(t *testing.T) {
	if got, err := FindRoot(t.TempDir()); err == nil {
		t.Errorf("FindRoot outside a repository = %q, want an error", got)
	}
}

func TestFindRootFindsThisRepository(t *testing.T) {
	root, err := FindRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "shared", "base", "repo", "repo.go")); err != nil {
		t.Errorf("root %s does not hold this package: %v", root, err)
	}
}

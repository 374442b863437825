package webhooktest

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// VectorsEnv is the environment variable naming the shared test-vectors
// directory (line.json, wecom.json, wechat.json, standardwebhooks.json).
const VectorsEnv = "HOOKWALL_VECTORS_DIR"

// VectorsDir returns the shared test-vectors directory: $HOOKWALL_VECTORS_DIR
// if set, else shared/vectors beside the repository (../shared/vectors
// relative to the directory holding go.mod, found from the working
// directory up). It fails t if the directory does not exist.
func VectorsDir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv(VectorsEnv)
	if dir == "" {
		root, err := moduleRoot()
		if err != nil {
			t.Fatalf("test vectors: %v (set %s to the shared/vectors directory)", err, VectorsEnv)
		}
		dir = filepath.Join(root, "..", "shared", "vectors")
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		t.Fatalf("test vectors directory %q not found (set %s to the shared/vectors directory): %v", dir, VectorsEnv, err)
	}
	return dir
}

// moduleRoot returns the nearest directory, from the working directory up,
// that holds a go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

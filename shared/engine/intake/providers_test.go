package intake_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hookwall/hookwall/shared/engine/intake/intaketest"
	"github.com/hookwall/hookwall/shared/protocol/providers"
)

// Every provider of the registry passes the conformance checks through the
// real receiver, and the vectors of its package (testdata/vectors.json,
// where it has them) pass too: a new provider is tested here with no edit.
func TestEveryProvider(t *testing.T) {
	root := moduleRoot(t)
	withVectors := 0
	for _, p := range providers.All() {
		t.Run(p.Name, func(t *testing.T) {
			t.Run("conformance", func(t *testing.T) { intaketest.Conformance(t, p.Name) })
			// The provider's package is that of its settings type.
			pkg := reflect.TypeOf(p.NewSettings()).Elem().PkgPath()
			rel, ok := strings.CutPrefix(pkg, "github.com/hookwall/hookwall/")
			if !ok {
				t.Fatalf("settings type of package %s, outside the module", pkg)
			}
			file := filepath.Join(root, filepath.FromSlash(rel), "testdata", "vectors.json")
			if _, err := os.Stat(file); errors.Is(err, fs.ErrNotExist) {
				return // its vectors are elsewhere (the shared vectors: TestVectorsOverHTTP)
			}
			withVectors++
			t.Run("vectors", func(t *testing.T) { intaketest.RunVectors(t, file) })
		})
	}
	t.Logf("%d providers, %d with testdata/vectors.json", len(providers.All()), withVectors)
}

// moduleRoot returns the directory holding go.mod, from the working
// directory up.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the working directory")
		}
		dir = parent
	}
}

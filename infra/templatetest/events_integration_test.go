//go:build integration

package templatetest

import (
	"crypto/sha256"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// digests is every file under dir, by its path relative to dir.
func digests(t *testing.T, dir string) map[string][32]byte {
	t.Helper()
	out := map[string][32]byte{}
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		out[rel] = sha256.Sum256(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// `make events` signs the receiver samples anew into EVENTS_OUT and leaves
// the committed events/ as they are (it used to rewrite eight of them, so
// that every `make sam-local-prep` dirtied the git tree). It runs make and go
// but needs no services.
func TestMakeEventsLeavesTheTreeClean(t *testing.T) {
	committed := filepath.Join("..", "..", "events")
	before := digests(t, committed)
	out := t.TempDir()
	cmd := exec.Command("make", "-C", filepath.Join("..", ".."), "events", "EVENTS_OUT="+out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make events: %v\n%s", err, b)
	}
	after := digests(t, committed)
	for name, sum := range before {
		if after[name] != sum {
			t.Errorf("make events changed events/%s", name)
		}
	}
	for name := range after {
		if _, ok := before[name]; !ok {
			t.Errorf("make events added events/%s", name)
		}
	}
	var signed, samples []string
	for name := range digests(t, filepath.Join(out, "receiver")) {
		signed = append(signed, name)
	}
	for name := range before {
		if filepath.Dir(name) == "receiver" {
			samples = append(samples, filepath.Base(name))
		}
	}
	slices.Sort(signed)
	slices.Sort(samples)
	if len(signed) == 0 || !slices.Equal(signed, samples) {
		t.Errorf("make events wrote %v to EVENTS_OUT/receiver, want the samples of events/receiver %v", signed, samples)
	}
}

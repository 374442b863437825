//go:build integration

package templatetest

import (
	"bufio"
	"bytes"
	"debug/elf"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// `make build-<LogicalId> ARTIFACTS_DIR=…`, as `sam build` calls it, builds
// each function into a static linux/arm64 bootstrap from its own main
// package. It runs make and go but needs no services.
func TestBuildTargetsMakeStaticArm64Bootstraps(t *testing.T) {
	for _, fn := range allFunctions {
		t.Run(fn.logicalID, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			cmd := exec.Command("make", "-C", filepath.Join("..", ".."), "build-"+fn.logicalID, "ARTIFACTS_DIR="+dir)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("make build-%s: %v\n%s", fn.logicalID, err, out)
			}
			bootstrap := filepath.Join(dir, "bootstrap")
			out, err := exec.Command("go", "version", "-m", bootstrap).Output()
			if err != nil {
				t.Fatalf("go version -m %s: %v", bootstrap, err)
			}
			info := map[string]string{}
			sc := bufio.NewScanner(bytes.NewReader(out))
			for sc.Scan() {
				f := strings.Fields(sc.Text())
				switch {
				case len(f) >= 2 && f[0] == "path":
					info["path"] = f[1]
				case len(f) >= 2 && f[0] == "build":
					if k, v, ok := strings.Cut(f[1], "="); ok {
						info[k] = v
					}
				}
			}
			want := map[string]string{
				"path":        "github.com/hookwall/hookwall/functions/" + fn.dir,
				"GOOS":        "linux",
				"GOARCH":      "arm64",
				"CGO_ENABLED": "0",
				"-tags":       "lambda.norpc",
				"-trimpath":   "true",
			}
			for k, v := range want {
				if info[k] != v {
					t.Errorf("%s: %s = %q, want %q\n%s", bootstrap, k, info[k], v, out)
				}
			}
			f, err := elf.Open(bootstrap)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if f.Machine != elf.EM_AARCH64 {
				t.Errorf("%s: ELF machine %v, want EM_AARCH64", bootstrap, f.Machine)
			}
			for _, p := range f.Progs {
				if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
					t.Errorf("%s: has %v: not a static binary", bootstrap, p.Type)
				}
			}
		})
	}
}

// Package repo finds the Hookwall repository a command runs in: the nearest
// directory, at or above a starting one, whose go.mod declares this module.
// The local runner, the storm's private stacks and `hookwall new` look for
// the root this one way.
package repo

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Module is the module path a root's go.mod declares.
const Module = "github.com/hookwall/hookwall"

// FindRoot returns the nearest directory at or above dir whose go.mod
// declares [Module] (a go.mod of another module, such as a nested one, does
// not count).
func FindRoot(dir string) (string, error) {
	d, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("repo: %w", err)
	}
	for {
		if IsRoot(d) {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("no go.mod of %s at or above %s", Module, dir)
		}
		d = parent
	}
}

// IsRoot reports whether dir holds a go.mod that declares [Module].
func IsRoot(dir string) bool {
	f, err := os.Open(filepath.Join(dir, "go.mod"))
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, 64<<10))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`) == Module
		}
	}
	return false
}

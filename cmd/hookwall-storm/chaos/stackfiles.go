package chaos

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// findRepoRoot walks up from dir to the first directory holding both go.mod
// and scripts/services-up.sh.
func findRepoRoot(dir string) (string, error) {
	for d := dir; ; {
		if fileExists(filepath.Join(d, "go.mod")) && fileExists(filepath.Join(d, "scripts", "services-up.sh")) {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("no repo root (go.mod + scripts/services-up.sh) at or above %s", dir)
		}
		d = parent
	}
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// readPID reads a positive PID from a PID file.
func readPID(path string) (int, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("read PID file: %w", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || pid <= 0 {
		return 0, fmt.Errorf("PID file %s: bad content %q", path, strings.TrimSpace(string(data)))
	}
	return pid, nil
}

// cmdlineHas reports whether process pid is alive and its command line
// contains marker.
func cmdlineHas(pid int, marker string) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return false
	}
	return strings.Contains(strings.ReplaceAll(string(data), "\x00", " "), marker)
}

// tailFile returns the last n lines of a file, or a note why it cannot.
func tailFile(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "(no output)"
		}
		return fmt.Sprintf("(cannot read: %v)", err)
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

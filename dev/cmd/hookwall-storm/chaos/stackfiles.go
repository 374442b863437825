package chaos

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

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

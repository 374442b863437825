package localrun

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// LockFile is the runner's lock and PID file in the run directory.
const LockFile = "hookwall-run.pid"

// AlreadyRunningError says another runner holds the run directory's lock.
type AlreadyRunningError struct {
	PID  int    // the other runner's PID (0 if unknown)
	Page string // its page URL, if it wrote one
	Path string // the lock file
}

// Error says which runner holds the lock and how to stop it.
func (e *AlreadyRunningError) Error() string {
	var b strings.Builder
	b.WriteString("hookwall-run is already running")
	if e.PID > 0 {
		fmt.Fprintf(&b, " (pid %d)", e.PID)
	}
	if e.Page != "" {
		fmt.Fprintf(&b, "; its page is %s", e.Page)
	}
	b.WriteString(". Use that one, or stop it first (Ctrl-C in its terminal")
	if e.PID > 0 {
		fmt.Fprintf(&b, ", or kill %d", e.PID)
	}
	fmt.Fprintf(&b, "). Lock: %s", e.Path)
	return b.String()
}

// lock is the held lock of a run directory.
type lock struct {
	f *os.File
}

// acquireLock takes an exclusive flock on dir/LockFile without waiting and
// writes this process's PID into it. The kernel releases the lock when the
// process dies, so a crashed runner never blocks the next one.
func acquireLock(dir string) (*lock, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("localrun: run directory: %w", err)
	}
	path := filepath.Join(dir, LockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("localrun: lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		b, _ := os.ReadFile(path)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			e := &AlreadyRunningError{Path: path}
			lines := strings.Split(strings.TrimSpace(string(b)), "\n")
			e.PID, _ = strconv.Atoi(strings.TrimSpace(lines[0]))
			if len(lines) > 1 {
				e.Page = strings.TrimSpace(lines[1])
			}
			return nil, e
		}
		return nil, fmt.Errorf("localrun: lock %s: %w", path, err)
	}
	l := &lock{f: f}
	if err := l.write(""); err != nil {
		l.release()
		return nil, err
	}
	return l, nil
}

// write records the PID and, once known, the page URL.
func (l *lock) write(page string) error {
	if err := l.f.Truncate(0); err != nil {
		return fmt.Errorf("localrun: lock: %w", err)
	}
	if _, err := l.f.WriteAt([]byte(fmt.Sprintf("%d\n%s\n", os.Getpid(), page)), 0); err != nil {
		return fmt.Errorf("localrun: lock: %w", err)
	}
	return nil
}

// release removes the lock file and then drops the lock.
func (l *lock) release() {
	_ = os.Remove(l.f.Name())
	_ = l.f.Close()
}

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

// Holders of the run directory's lock, as [AlreadyRunningError] names them.
const (
	HolderRun       = "make run"        // the local runner (hookwall-run)
	HolderSamLocal  = "make sam-local"  // the functions in Lambda containers
	HolderSamInvoke = "make sam-invoke" // sam local invoke on the samples
)

// AlreadyRunningError says another runner holds the run directory's lock.
type AlreadyRunningError struct {
	PID    int    // the other runner's PID (0 if unknown)
	Page   string // where it can be reached (the page, or sam local's API), if it wrote it
	Holder string // which command holds it (HolderRun, …; "" from an older runner)
	Path   string // the lock file
}

// Error says which runner holds the lock, that the local runs share the
// run directory and services (so one runs at a time), and how to stop it.
func (e *AlreadyRunningError) Error() string {
	var b strings.Builder
	holder := e.Holder
	if holder == "" {
		holder = HolderRun
	}
	b.WriteString(holder + " is already running")
	if e.PID > 0 {
		fmt.Fprintf(&b, " (pid %d)", e.PID)
	}
	if e.Page != "" {
		fmt.Fprintf(&b, " at %s", e.Page)
	}
	b.WriteString(". make run, make sam-local and make sam-invoke share the run directory and the local services, so one runs at a time")
	b.WriteString(". Use that one, or stop it first (Ctrl-C in its terminal")
	if e.PID > 0 {
		fmt.Fprintf(&b, ", or kill %d", e.PID)
	}
	fmt.Fprintf(&b, "). Lock: %s", e.Path)
	return b.String()
}

// lock is the held lock of a run directory.
type lock struct {
	f      *os.File
	holder string // written beside the PID
}

// acquireLock takes an exclusive flock on dir/LockFile without waiting and
// writes this process's PID and holder (HolderRun, …) into it. The kernel
// releases the lock when the process dies, so a crashed runner never blocks
// the next one.
func acquireLock(dir, holder string) (*lock, error) {
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
			if len(lines) > 2 {
				e.Holder = strings.TrimSpace(lines[2])
			}
			return nil, e
		}
		return nil, fmt.Errorf("localrun: lock %s: %w", path, err)
	}
	l := &lock{f: f, holder: holder}
	if err := l.write(""); err != nil {
		l.release()
		return nil, err
	}
	return l, nil
}

// write records the PID, once known the URL where the holder is reached,
// and the holder.
func (l *lock) write(page string) error {
	if err := l.f.Truncate(0); err != nil {
		return fmt.Errorf("localrun: lock: %w", err)
	}
	if _, err := l.f.WriteAt([]byte(fmt.Sprintf("%d\n%s\n%s\n", os.Getpid(), page, l.holder)), 0); err != nil {
		return fmt.Errorf("localrun: lock: %w", err)
	}
	return nil
}

// release removes the lock file and then drops the lock.
func (l *lock) release() {
	_ = os.Remove(l.f.Name())
	_ = l.f.Close()
}

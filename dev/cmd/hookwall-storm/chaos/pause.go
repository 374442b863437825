package chaos

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// stopWait bounds how long Pause waits for every thread of the process to
// be stopped.
const stopWait = 5 * time.Second

// Pause stops process pid with SIGSTOP and returns once every thread of it
// is stopped: its listening sockets stay open (the kernel still completes
// TCP handshakes into the backlog) but nothing is read or answered, so
// clients hang until their own timeouts. (kill returns when the signal is
// sent; each thread stops on its own way back to user space, which on a
// loaded machine may come later, so Pause watches /proc.) resume sends
// SIGCONT; calling it more than once is harmless. Only pass PIDs you
// started (for example [Stack.DynamoPID] / [Stack.SQSPID]); [Stack.Stop]
// resumes both before stopping them.
func Pause(pid int) (resume func() error, err error) {
	if pid <= 0 {
		return nil, fmt.Errorf("chaos: pause: invalid pid %d", pid)
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		return nil, fmt.Errorf("chaos: pause pid %d (SIGSTOP): %w", pid, err)
	}
	resume = func() error {
		if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
			return fmt.Errorf("chaos: resume pid %d (SIGCONT): %w", pid, err)
		}
		return nil
	}
	deadline := time.Now().Add(stopWait)
	for {
		running, err := runningThreads(pid)
		if err != nil {
			_ = resume()
			return nil, fmt.Errorf("chaos: pause pid %d: %w", pid, err)
		}
		if running == 0 {
			return resume, nil
		}
		if time.Now().After(deadline) {
			_ = resume()
			return nil, fmt.Errorf("chaos: pause pid %d: %d thread(s) not stopped after %s", pid, running, stopWait)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// runningThreads counts the threads of pid that are not stopped (state T
// or t in /proc/<pid>/task/<tid>/stat). A thread that exits meanwhile is
// not counted.
func runningThreads(pid int) (int, error) {
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/stat", pid))
	if err != nil || len(tasks) == 0 {
		return 0, errors.Join(errors.New("no threads in /proc (is it running?)"), err)
	}
	running := 0
	for _, path := range tasks {
		b, err := os.ReadFile(path)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("read %s: %w", path, err)
		}
		// The state follows the command name, which is in parentheses
		// and may hold spaces or parentheses itself.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 || i+2 >= len(s) {
			return 0, fmt.Errorf("read %s: no state in %q", path, s)
		}
		if st := s[i+2]; st != 'T' && st != 't' {
			running++
		}
	}
	return running, nil
}

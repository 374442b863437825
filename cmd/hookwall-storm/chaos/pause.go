package chaos

import (
	"fmt"
	"syscall"
)

// Pause stops process pid with SIGSTOP now: its listening sockets stay open
// (the kernel still completes TCP handshakes into the backlog) but nothing is
// read or answered, so clients hang until their own timeouts. resume sends
// SIGCONT; calling it more than once is harmless. Only pass PIDs you started
// (for example [Stack.DynamoPID] / [Stack.SQSPID]); [Stack.Stop] resumes both
// before stopping them.
func Pause(pid int) (resume func() error, err error) {
	if pid <= 0 {
		return nil, fmt.Errorf("chaos: pause: invalid pid %d", pid)
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		return nil, fmt.Errorf("chaos: pause pid %d (SIGSTOP): %w", pid, err)
	}
	return func() error {
		if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
			return fmt.Errorf("chaos: resume pid %d (SIGCONT): %w", pid, err)
		}
		return nil
	}, nil
}

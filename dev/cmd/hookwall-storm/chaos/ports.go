package chaos

import (
	"fmt"
	"net"
)

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago (the
// kernel picks it; the listener is closed before returning). Another process
// may take it before the caller binds it, so callers that start servers on it
// should fail clearly when the bind fails.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("chaos: find a free port: %w", err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	if err := l.Close(); err != nil {
		return 0, fmt.Errorf("chaos: close probe listener on port %d: %w", port, err)
	}
	return port, nil
}

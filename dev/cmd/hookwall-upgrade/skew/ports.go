package skew

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
)

// Ports hands out the ports the stack listens on: from a fixed range when
// one is given (a shared machine's allotment), else free ones the system
// picks.
type Ports struct {
	mu   sync.Mutex
	free []int
	any  bool
}

// ParsePorts reads "FROM-TO" (or "" for any free port).
func ParsePorts(s string) (*Ports, error) {
	if s == "" {
		return &Ports{any: true}, nil
	}
	from, to, ok := strings.Cut(s, "-")
	a, err1 := strconv.Atoi(from)
	b, err2 := strconv.Atoi(to)
	if !ok || err1 != nil || err2 != nil || a <= 0 || b < a || b > 65535 {
		return nil, fmt.Errorf("skew: ports %q: want FROM-TO, such as 8404-8409", s)
	}
	p := &Ports{}
	for i := a; i <= b; i++ {
		p.free = append(p.free, i)
	}
	return p, nil
}

// Take returns a port to listen on.
func (p *Ports) Take() (int, error) {
	if p.any {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, fmt.Errorf("skew: a free port: %w", err)
		}
		defer ln.Close()
		return ln.Addr().(*net.TCPAddr).Port, nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.free) == 0 {
		return 0, fmt.Errorf("skew: out of ports (give a wider -ports range)")
	}
	n := p.free[0]
	p.free = p.free[1:]
	return n, nil
}

// Give returns a port no longer listened on.
func (p *Ports) Give(n int) {
	if p.any {
		return
	}
	p.mu.Lock()
	p.free = append(p.free, n)
	p.mu.Unlock()
}

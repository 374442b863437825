package localrun

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Timeouts bound every connection of the runner's HTTP servers, so that a
// client that stalls (a body that never ends, a keep-alive connection left
// idle) cannot hold the runner's memory or its connections.
type Timeouts struct {
	// ReadHeader bounds reading a request's headers.
	ReadHeader time.Duration
	// Read bounds reading a whole request, body included
	// (HOOKWALL_RUN_READ_TIMEOUT).
	Read time.Duration
	// Write bounds handling a request and writing its answer: longer than
	// the receiver's timeout ([ReceiverTimeout]) and a page listing.
	Write time.Duration
	// Idle bounds how long a keep-alive connection waits for its next
	// request (HOOKWALL_RUN_IDLE_TIMEOUT).
	Idle time.Duration
}

// DefaultTimeouts are the runner's timeouts: a webhook body of the
// receiver's limit arrives over loopback, or a tunnel, well within Read.
var DefaultTimeouts = Timeouts{ReadHeader: 5 * time.Second, Read: 15 * time.Second, Write: 30 * time.Second, Idle: 30 * time.Second}

// newServer returns an HTTP server for h with the timeouts t (zero fields:
// DefaultTimeouts) and a bound on the headers' size.
func newServer(h http.Handler, t Timeouts) *http.Server {
	d := DefaultTimeouts
	pick := func(v, def time.Duration) time.Duration {
		if v > 0 {
			return v
		}
		return def
	}
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: pick(t.ReadHeader, d.ReadHeader),
		ReadTimeout:       pick(t.Read, d.Read),
		WriteTimeout:      pick(t.Write, d.Write),
		IdleTimeout:       pick(t.Idle, d.Idle),
		MaxHeaderBytes:    64 << 10,
	}
}

// LoopbackHosts are the host names the runner's page, its API and the
// events API answer to (with the runner's port).
var LoopbackHosts = []string{"127.0.0.1", "localhost", "[::1]"}

// LocalOnly guards what the runner serves for the developer alone (the
// page, its API, the events API) against DNS rebinding and other origins:
// a request whose Host is not a loopback name with the runner's port is
// answered 421 Misdirected Request, and one whose Origin header (when
// present) is not http://<that same host> is answered 403. The webhook
// route is not behind it: platforms (through a tunnel) name other hosts.
type LocalOnly struct {
	// Port is the runner's port, as the Host header carries it.
	Port int
	// Next serves the requests that pass.
	Next http.Handler
}

// ServeHTTP refuses foreign hosts and origins, and passes the rest to Next.
func (g LocalOnly) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !g.AllowedHost(r.Host) {
		http.Error(w, fmt.Sprintf("hookwall-run: Host %q refused: the page and its API answer only %s (a guard against DNS rebinding); "+
			"the webhook route %s answers any host", r.Host, strings.Join(g.hosts(), ", "), Route), http.StatusMisdirectedRequest)
		return
	}
	if o := r.Header.Get("Origin"); o != "" && !strings.EqualFold(o, "http://"+r.Host) {
		http.Error(w, fmt.Sprintf("hookwall-run: Origin %q refused: only pages of http://%s itself may call it", o, r.Host), http.StatusForbidden)
		return
	}
	g.Next.ServeHTTP(w, r)
}

// AllowedHost reports whether host (a Host header) names the runner: a
// loopback name with its port (without a port only when the port is 80).
func (g LocalOnly) AllowedHost(host string) bool {
	name, port, err := net.SplitHostPort(host)
	switch {
	case err != nil:
		name, port = host, "80"
	case strings.Contains(name, ":"): // SplitHostPort strips the brackets of [::1]
		name = "[" + name + "]"
	}
	if port != strconv.Itoa(g.Port) {
		return false
	}
	for _, h := range LoopbackHosts {
		if strings.EqualFold(name, h) {
			return true
		}
	}
	return false
}

func (g LocalOnly) hosts() []string {
	out := make([]string, len(LoopbackHosts))
	for i, h := range LoopbackHosts {
		out[i] = h + ":" + strconv.Itoa(g.Port)
	}
	return out
}

// ListenForward returns forwardURL when it is set; otherwise a listener on
// a free loopback port for the local forward target standing for the
// business ([Servers.ServeForward]), and that target's URL.
func ListenForward(forwardURL string) (net.Listener, string, error) {
	if forwardURL != "" {
		return nil, forwardURL, nil
	}
	ln, err := ListenLoopback("the forward target")
	if err != nil {
		return nil, "", err
	}
	return ln, "http://" + ln.Addr().String() + "/hookwall", nil
}

// ListenLoopback returns a listener on a free port of [DefaultHost], for
// what (named in the error): the runners serve nothing beyond loopback.
func ListenLoopback(what string) (net.Listener, error) {
	ln, err := net.Listen("tcp", DefaultHost+":0")
	if err != nil {
		return nil, fmt.Errorf("localrun: listen for %s: %w", what, err)
	}
	return ln, nil
}

// shutdownGrace bounds the servers' graceful shutdown.
const shutdownGrace = 5 * time.Second

// Servers are the HTTP servers of a local run (make run, make sam-local,
// make sam-invoke, the storm): each serves one handler on its own listener
// with the same [Timeouts] and a bound on the headers' size, until
// [Servers.Shutdown]. The zero value is ready to use, with
// [DefaultTimeouts]. Its methods are for one goroutine.
type Servers struct {
	// Timeouts bound every connection (zero fields: [DefaultTimeouts]).
	Timeouts Timeouts

	list   []*http.Server
	failed chan error
}

// Serve serves h on ln in a goroutine of its own; ln is closed by
// [Servers.Shutdown].
func (s *Servers) Serve(ln net.Listener, h http.Handler) {
	s.Failed() // makes the channel
	failed := s.failed
	srv := newServer(h, s.Timeouts)
	s.list = append(s.list, srv)
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			select {
			case failed <- fmt.Errorf("localrun: server on %s: %w", ln.Addr(), err):
			default: // the first failure is the one reported
			}
		}
	}()
}

// ServeForward serves the forward target standing for the business on ln,
// from [ListenForward], appending what it receives to path; a nil ln (the
// business is elsewhere) serves nothing.
func (s *Servers) ServeForward(ln net.Listener, path string, log *slog.Logger) {
	if ln == nil {
		return
	}
	mux := http.NewServeMux()
	mux.Handle("/", &ForwardTarget{Path: path, Secret: DemoForwardSecret, Log: log})
	s.Serve(ln, mux)
}

// Failed receives the first error a server stopped with (not one stopped
// by [Servers.Shutdown]).
func (s *Servers) Failed() <-chan error {
	if s.failed == nil {
		s.failed = make(chan error, 1)
	}
	return s.failed
}

// Shutdown stops the servers, letting the requests in flight finish for at
// most shutdownGrace, even when ctx is done already.
func (s *Servers) Shutdown(ctx context.Context) {
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
	defer cancel()
	for _, srv := range s.list {
		_ = srv.Shutdown(sctx)
	}
}

package localrun

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Servers serve each handler on its loopback listener, the forward target
// records what it receives, a server that cannot serve is reported, and
// Shutdown closes the listeners.
func TestServersServeForwardAndShutdown(t *testing.T) {
	var s Servers
	ln, err := ListenLoopback("the test server")
	if err != nil {
		t.Fatal(err)
	}
	if host, _, _ := net.SplitHostPort(ln.Addr().String()); host != DefaultHost {
		t.Errorf("listening on %s, want %s", ln.Addr(), DefaultHost)
	}
	s.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "hello") }))
	fwdLn, forwardURL, err := ListenForward("")
	if err != nil {
		t.Fatal(err)
	}
	forwarded := filepath.Join(t.TempDir(), ForwardedFile)
	s.ServeForward(fwdLn, forwarded, discard())
	s.ServeForward(nil, forwarded, discard()) // the business is elsewhere: nothing served

	resp, err := http.Get("http://" + ln.Addr().String() + "/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "hello" {
		t.Errorf("served %q, want hello", b)
	}
	resp, err = http.Post(forwardURL, "application/json", strings.NewReader(`{"n":1}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got, err := os.ReadFile(forwarded); err != nil || !strings.Contains(string(got), `"n":1`) {
		t.Errorf("forward target recorded %q (%v), want the posted body; answered %d", got, err, resp.StatusCode)
	}
	if len(s.list) != 2 {
		t.Errorf("%d servers, want 2 (a nil forward listener serves nothing)", len(s.list))
	}

	closed, err := ListenLoopback("a closed listener")
	if err != nil {
		t.Fatal(err)
	}
	closed.Close()
	s.Serve(closed, http.NotFoundHandler())
	if err := <-s.Failed(); err == nil || !strings.Contains(err.Error(), "localrun: server on") {
		t.Errorf("a server that cannot serve: %v", err)
	}

	s.Shutdown(context.Background())
	if c, err := net.Dial("tcp", ln.Addr().String()); err == nil {
		c.Close()
		t.Errorf("%s still accepts connections after Shutdown", ln.Addr())
	}
}

package awstest

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// Fault is what a HoldProxy does with one request.
type Fault int

// Faults.
const (
	// Pass forwards the request and returns the answer.
	Pass Fault = iota
	// ApplyThenHang forwards the request (the server applies it) but holds
	// the answer until the client gives up: a write applied whose client saw
	// a timeout.
	ApplyThenHang
	// DropThenHang never forwards the request and holds the client until it
	// gives up: a write that was not applied, with the same symptom.
	DropThenHang
)

// HoldProxy is an HTTP proxy in front of an AWS endpoint (DynamoDB Local,
// the SQS server) that injects faults whose outcome the client cannot know.
// A rule chooses the fault per request from the operation's name (the
// X-Amz-Target header's part after the dot, e.g. "PutItem") and a per-
// operation counter starting at 0. Point a client's BaseEndpoint at URL.
type HoldProxy struct {
	// URL is the proxy's address.
	URL string

	target string
	mu     sync.Mutex
	rule   func(op string, n int) Fault
	count  map[string]int
}

// NewHoldProxy starts a proxy to target (e.g. "http://127.0.0.1:8000") that
// passes everything until SetRule, and closes it when the test ends.
func NewHoldProxy(t testing.TB, target string) *HoldProxy {
	t.Helper()
	p := &HoldProxy{target: strings.TrimSuffix(target, "/"), count: map[string]int{}}
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	p.URL = srv.URL
	return p
}

// SetRule sets the rule (nil: pass everything) and resets the counters.
func (p *HoldProxy) SetRule(rule func(op string, n int) Fault) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rule, p.count = rule, map[string]int{}
}

// ServeHTTP applies the rule to one request.
func (p *HoldProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	op := r.Header.Get("X-Amz-Target")
	if i := strings.LastIndexByte(op, '.'); i >= 0 {
		op = op[i+1:]
	}
	p.mu.Lock()
	fault := Pass
	if p.rule != nil {
		fault = p.rule(op, p.count[op])
	}
	p.count[op]++
	p.mu.Unlock()

	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	if fault == DropThenHang {
		<-r.Context().Done()
		return
	}
	// Forward on a context the client cannot cancel, so that the server
	// applies the request whatever the client does meanwhile.
	out, err := http.NewRequestWithContext(context.WithoutCancel(r.Context()), r.Method, p.target+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	out.Header = r.Header.Clone()
	resp, err := http.DefaultTransport.RoundTrip(out)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(resp.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	if fault == ApplyThenHang {
		<-r.Context().Done()
		return
	}
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(answer)
}

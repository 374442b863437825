package chaos

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/rs/zerolog"
)

// Target names the service behind one proxy of a [Harness].
type Target string

// The two proxied services.
const (
	// Dynamo is the proxy in front of DynamoDB (Local).
	Dynamo Target = "dynamodb"
	// SQS is the proxy in front of the SQS server.
	SQS Target = "sqs"
)

// Harness runs toxiproxy in-process (no HTTP API, logging off) with one TCP
// proxy per [Target], each listening on its own free port on 127.0.0.1.
// Faults are toxics added to a proxy or the proxy being disabled. All
// methods are safe for concurrent use.
type Harness struct {
	// DynamoURL and SQSURL are http://127.0.0.1:<proxy port>: give these to
	// Hookwall's AWS clients (e.g. as AWS_ENDPOINT_URL_DYNAMODB /
	// AWS_ENDPOINT_URL_SQS) instead of the servers' own endpoints.
	DynamoURL, SQSURL string

	server  *toxiproxy.ApiServer
	proxies map[Target]*toxiproxy.Proxy

	mu        sync.Mutex
	outages   map[Target]int // active Outage calls per target
	seq       int            // for unique toxic names
	restoreEr error          // first failure to re-enable a proxy
	closed    bool
}

// Start starts the harness: a proxy to dynamoUpstream and one to sqsUpstream
// (each host:port, e.g. "127.0.0.1:8100"). The upstreams need not be up yet:
// toxiproxy dials them per accepted connection. ctx is only checked before
// starting (proxies start synchronously).
func Start(ctx context.Context, dynamoUpstream, sqsUpstream string) (*Harness, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("chaos: start harness: %w", err)
	}
	for _, up := range []string{dynamoUpstream, sqsUpstream} {
		if _, _, err := net.SplitHostPort(up); err != nil {
			return nil, fmt.Errorf("chaos: start harness: upstream %q is not host:port: %w", up, err)
		}
	}
	h := &Harness{
		server:  toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop()),
		proxies: make(map[Target]*toxiproxy.Proxy),
		outages: make(map[Target]int),
	}
	for _, tu := range []struct {
		t        Target
		upstream string
		url      *string
	}{{Dynamo, dynamoUpstream, &h.DynamoURL}, {SQS, sqsUpstream, &h.SQSURL}} {
		p := toxiproxy.NewProxy(h.server, string(tu.t), "127.0.0.1:0", tu.upstream)
		if err := h.server.Collection.Add(p, true); err != nil {
			_ = h.server.Collection.Clear()
			return nil, fmt.Errorf("chaos: start harness: proxy %s -> %s: %w", tu.t, tu.upstream, err)
		}
		h.proxies[tu.t] = p
		*tu.url = "http://" + p.Listen // Listen now holds the bound address
	}
	return h, nil
}

// Close stops both proxies (closing their connections) and drops all
// toxics. It returns an error if an earlier Outage restore failed to
// re-open a proxy's port. Calling Close again is harmless.
func (h *Harness) Close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil
	}
	h.closed = true
	if err := h.server.Collection.Clear(); err != nil {
		return fmt.Errorf("chaos: close harness: %w", err)
	}
	if h.restoreEr != nil {
		return fmt.Errorf("chaos: close harness: earlier restore failed: %w", h.restoreEr)
	}
	return nil
}

// Outage disables t's proxy: its listener is closed, so new connections are
// refused, and every open connection through it (including idle keep-alive
// ones in clients' pools) is closed. The upstream server keeps running.
// restore re-opens the same port; it is idempotent. Outages nest: with two
// active Outage calls on one target the proxy comes back after both restores.
// If re-opening fails (another process took the port) the error is kept and
// returned by [Harness.Close] and [Harness.Err].
func (h *Harness) Outage(t Target) (restore func(), err error) {
	p, err := h.proxy(t)
	if err != nil {
		return nil, fmt.Errorf("chaos: outage: %w", err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, fmt.Errorf("chaos: outage %s: harness closed", t)
	}
	h.outages[t]++
	if h.outages[t] == 1 {
		p.Stop()
	}
	var once sync.Once
	return func() { once.Do(func() { h.endOutage(t, p) }) }, nil
}

func (h *Harness) endOutage(t Target, p *toxiproxy.Proxy) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.outages[t]--
	if h.outages[t] > 0 || h.closed {
		return
	}
	if err := p.Start(); err != nil && !errors.Is(err, toxiproxy.ErrProxyAlreadyStarted) && h.restoreEr == nil {
		h.restoreEr = fmt.Errorf("chaos: restore %s proxy on %s: %w", t, p.Listen, err)
	}
}

// Err returns the first failure of an Outage restore, or nil.
func (h *Harness) Err() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.restoreEr
}

// URL returns the proxy endpoint for t (http://127.0.0.1:<port>).
func (h *Harness) URL(t Target) (string, error) {
	switch t {
	case Dynamo:
		return h.DynamoURL, nil
	case SQS:
		return h.SQSURL, nil
	}
	return "", fmt.Errorf("chaos: unknown target %q", t)
}

func (h *Harness) proxy(t Target) (*toxiproxy.Proxy, error) {
	p, ok := h.proxies[t]
	if !ok {
		return nil, fmt.Errorf("unknown target %q (want %q or %q)", t, Dynamo, SQS)
	}
	return p, nil
}

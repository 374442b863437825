package dispatch

import (
	"bytes"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
)

// callLog records the outside HTTP calls of one attempt, from every
// handler it runs and from concurrent requests: the newest
// [webhook.MaxCalls] (bounded memory, whatever a handler does) and how many
// were made. The attempt's settling write stores them on the record
// ([webhook.Lease.AddCalls]); a lost lease stores nothing.
type callLog struct {
	now func() time.Time

	mu     sync.Mutex
	newest []webhook.Call // oldest first, at most webhook.MaxCalls
	made   int
}

// add records one call.
func (c *callLog) add(call webhook.Call) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.newest) == webhook.MaxCalls {
		copy(c.newest, c.newest[1:])
		c.newest = c.newest[:webhook.MaxCalls-1]
	}
	c.newest = append(c.newest, call)
	c.made++
}

// onto returns l with the attempt's calls added, for its settling write.
func (c *callLog) onto(l webhook.Lease) webhook.Lease {
	c.mu.Lock()
	defer c.mu.Unlock()
	l.AddCalls(c.newest, c.made)
	return l
}

// transport returns base wrapped so that each round trip is recorded as a
// call to target: the handler's target (the unit of its circuit breaker,
// rate limit and pause), or when target is "" the request's host.
func (c *callLog) transport(base http.RoundTripper, target string) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return &callTransport{base: base, log: c, target: target}
}

// callTransport records each round trip of a handler's HTTP client: when it
// started, its target, the status (0 when no answer came, with the error),
// the latency to the response's headers, and for an answer other than 2xx
// the first [webhook.MaxCallSnippet] bytes of its body, read ahead and
// handed on to the caller unchanged. Error and snippet are cleaned UTF-8
// ([webhook.CleanText]): they quote what an outside system sent.
type callTransport struct {
	base   http.RoundTripper
	log    *callLog
	target string
}

func (t *callTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	call := webhook.Call{At: t.log.now(), Target: t.target}
	if call.Target == "" {
		call.Target = req.URL.Host
	}
	start := time.Now()
	resp, err := t.base.RoundTrip(req)
	call.Latency = time.Since(start)
	switch {
	case err != nil:
		call.Error = webhook.CleanText(err.Error(), webhook.MaxCallError)
	case resp != nil:
		call.Status = resp.StatusCode
		if (resp.StatusCode < 200 || resp.StatusCode > 299) && resp.Body != nil {
			call.Snippet = snippet(resp)
		}
	}
	t.log.add(call)
	return resp, err
}

// snippet reads the first bytes of resp's body, at most
// webhook.MaxCallSnippet, and puts them back in front of the rest.
func snippet(resp *http.Response) string {
	buf := make([]byte, webhook.MaxCallSnippet)
	n, _ := io.ReadFull(resp.Body, buf) // a short body or a read error: what came is kept
	resp.Body = &prefixedBody{Reader: io.MultiReader(bytes.NewReader(buf[:n]), resp.Body), Closer: resp.Body}
	return webhook.CleanText(string(buf[:n]), webhook.MaxCallSnippet)
}

// prefixedBody is a response body whose first bytes were read ahead.
type prefixedBody struct {
	io.Reader
	io.Closer
}

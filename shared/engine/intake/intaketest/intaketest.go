// Package intaketest drives the real receiver (package intake, over HTTP,
// with the in-memory store) with a provider's requests: [Conformance]
// checks any registered provider from its registration alone, and
// [RunVectors] runs a provider's test vectors file. Provider packages call
// both from an external test package (package <name>_test: intake imports
// every provider); shared/engine/intake runs them for every provider of the
// registry.
package intaketest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/base/webhook/webhooktest"
	"github.com/hookwall/hookwall/shared/config/tenants"
	"github.com/hookwall/hookwall/shared/engine/intake"
	"github.com/hookwall/hookwall/shared/protocol/provider"
	"github.com/hookwall/hookwall/shared/state/store/memstore"
)

// dedupWindow is long enough for vectors captured years ago: their events
// stay inside the accepted event age (its own tests are in intake).
const dedupWindow = 20 * 365 * 24 * time.Hour

// Receiver is the receiver of one tenants document: the real intake
// handler behind an HTTP server, the in-memory store, a queue that records
// what it is sent, and a clock the test moves.
type Receiver struct {
	// URL is the server's base URL.
	URL string
	// Clock is the receiver's and the store's clock.
	Clock *webhooktest.Clock

	mu    sync.Mutex
	sent  []webhook.Envelope
	done  int // sent[:done] were processed
	store *memstore.Store
}

// NewReceiver returns a receiver for the tenants document doc at time now.
// It fails t if the document does not load.
func NewReceiver(t testing.TB, doc []byte, now time.Time) *Receiver {
	t.Helper()
	ts, err := tenants.Parse(doc)
	if err != nil {
		t.Fatalf("tenants document: %v", err)
	}
	parsers, err := intake.BuildParsers(ts, intake.ParserOptions{})
	if err != nil {
		t.Fatalf("parsers: %v", err)
	}
	r := &Receiver{Clock: webhooktest.NewClock(now)}
	r.store = memstore.New(memstore.Config{Now: r.Clock.Now})
	h, err := intake.New(intake.Config{Parsers: parsers, Store: r.store, Queue: (*queue)(r), Now: r.Clock.Now, DedupWindow: dedupWindow})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	r.URL = srv.URL
	return r
}

// queue records the envelopes the receiver sends.
type queue Receiver

// Send records envs.
func (q *queue) Send(_ context.Context, envs []webhook.Envelope) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.sent = append(q.sent, envs...)
	return nil
}

// Sent returns every envelope the receiver has sent so far.
func (r *Receiver) Sent() []webhook.Envelope {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.sent)
}

// Records returns how many event records the store holds.
func (r *Receiver) Records() int { return len(r.store.Records()) }

// Process does what the processor would do with every envelope sent since
// the last call: it leases its record and completes it (SUCCEEDED), so a
// later duplicate of the event finds it on its way, not still being handed
// off.
func (r *Receiver) Process(t testing.TB) {
	t.Helper()
	r.mu.Lock()
	todo := slices.Clone(r.sent[r.done:])
	r.done = len(r.sent)
	r.mu.Unlock()
	now := r.Clock.Now()
	ctx := context.Background()
	for _, env := range todo {
		acq, err := r.store.Acquire(ctx, env.Key, "intaketest", now.Add(time.Minute))
		if err != nil || acq.Outcome != webhook.Acquired {
			t.Fatalf("process %s: %+v %v", env.Key, acq, err)
		}
		if ok, err := r.store.Complete(ctx, acq.Lease, now.Add(dedupWindow)); !ok || err != nil {
			t.Fatalf("complete %s: %v %v", env.Key, ok, err)
		}
	}
}

// Reply is the receiver's answer to one request.
type Reply struct {
	Status      int
	ContentType string
	Body        []byte
	// Sent are the envelopes this request sent.
	Sent []webhook.Envelope
}

// Is reports whether the reply is want: the same status and body, and the
// same content type where want sets one.
func (r Reply) Is(want webhook.Reply) bool {
	return r.Status == want.Status && bytes.Equal(r.Body, want.Body) && (want.ContentType == "" || r.ContentType == want.ContentType)
}

// Do sends req to the receiver and returns its answer and what it sent.
func (r *Receiver) Do(t testing.TB, req *http.Request) Reply {
	t.Helper()
	before := len(r.Sent())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	return Reply{Status: resp.StatusCode, ContentType: resp.Header.Get("Content-Type"), Body: body, Sent: r.Sent()[before:]}
}

// Request builds the HTTP request of a signed provider request for tenant
// at the receiver.
func (r *Receiver) Request(t testing.TB, name, tenant string, pr *provider.Request) *http.Request {
	t.Helper()
	target := fmt.Sprintf("%s/webhooks/%s/%s", r.URL, name, tenant)
	if len(pr.Query) > 0 {
		target += "?" + pr.Query.Encode()
	}
	req, err := http.NewRequest(pr.Method, target, bytes.NewReader(pr.Body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range pr.Header {
		req.Header[k] = slices.Clone(v)
	}
	return req
}

// tenantsDoc is a tenants document with one tenant holding section for
// the provider name.
func tenantsDoc(t testing.TB, tenant, name string, section any) []byte {
	t.Helper()
	doc, err := json.Marshal(map[string]any{"tenants": map[string]any{tenant: map[string]any{name: section}}})
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

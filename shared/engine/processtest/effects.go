package processtest

import (
	"bytes"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	"github.com/hookwall/hookwall/shared/engine/process"
)

// EffectServer is the outside world of a test: an httptest server that
// records every request by its Idempotency-Key header, as an API that
// honours idempotency keys sees them. It is safe for concurrent use.
type EffectServer struct {
	// Server is the running server; its URL is what the handler calls.
	*httptest.Server

	mu      sync.Mutex
	byKey   map[string][]request
	unkeyed []request
}

type request struct {
	method, uri string
	body        []byte
}

// NewEffectServer starts an EffectServer that answers every request with
// respond (nil: 200 with the JSON body {}), after recording it; respond
// sees the request with its body. The server is closed when the test ends.
func NewEffectServer(t testing.TB, respond http.Handler) *EffectServer {
	t.Helper()
	if respond == nil {
		respond = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, "{}")
		})
	}
	s := &EffectServer{byKey: map[string][]request{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, "read body", http.StatusBadRequest)
			return
		}
		req := request{method: r.Method, uri: r.URL.RequestURI(), body: body}
		s.mu.Lock()
		if k := r.Header.Get(process.HeaderIdempotencyKey); k != "" {
			s.byKey[k] = append(s.byKey[k], req)
		} else {
			s.unkeyed = append(s.unkeyed, req)
		}
		s.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
		respond.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

// Count returns how many requests carried the idempotency key.
func (s *EffectServer) Count(key string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.byKey[key])
}

// Keys returns the distinct idempotency keys received, sorted: one per
// effect, for an API that applies each key once.
func (s *EffectServer) Keys() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Sorted(maps.Keys(s.byKey))
}

// Total returns how many requests were received, with or without a key.
func (s *EffectServer) Total() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.unkeyed)
	for _, reqs := range s.byKey {
		n += len(reqs)
	}
	return n
}

// AssertOnce fails t unless each effect happened once per idempotency key:
// at least one request was received, every request carried an
// Idempotency-Key, and every request under one key was the same request
// (method, path and query, body) as the first, so that a repeat is a replay
// the API answers without a second effect, never another effect under the
// same key. A key sent again is expected only for a step whose journal entry
// was not written (see [CrashAfterEachStep]); compare [EffectServer.Keys]
// with [Report.StepKeys] to see that no attempt made up a key of its own.
func (s *EffectServer) AssertOnce(t testing.TB) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.unkeyed) == 0 && len(s.byKey) == 0 {
		t.Errorf("processtest: no request reached the effect server")
	}
	if n := len(s.unkeyed); n > 0 {
		r := s.unkeyed[0]
		t.Errorf("processtest: %d requests without an %s header (first: %s %s); make each call inside ev.Step "+
			"with ev.HTTPClient(), or send the step's idemKey", n, process.HeaderIdempotencyKey, r.method, r.uri)
	}
	for _, k := range slices.Sorted(maps.Keys(s.byKey)) {
		reqs := s.byKey[k]
		first := reqs[0]
		for i, r := range reqs[1:] {
			if r.method != first.method || r.uri != first.uri || !bytes.Equal(r.body, first.body) {
				t.Errorf("processtest: key %s: request %d (%s %s, %d bytes) differs from the first (%s %s, %d bytes); "+
					"one key must stand for one effect", k, i+2, r.method, r.uri, len(r.body), first.method, first.uri, len(first.body))
			}
		}
	}
}

// Bodies returns the bodies of the requests received, one per idempotency
// key (the first request under each, in key order), then the unkeyed ones.
func (s *EffectServer) Bodies() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out [][]byte
	for _, k := range slices.Sorted(maps.Keys(s.byKey)) {
		out = append(out, s.byKey[k][0].body)
	}
	for _, r := range s.unkeyed {
		out = append(out, r.body)
	}
	return out
}

package chaos

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// eventually retries call until it returns nil or timeout passes (generous
// timeouts: the machine may be loaded); it returns the last error.
func eventually(timeout time.Duration, call func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := call()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// newHarness starts a harness and closes it in t.Cleanup.
func newHarness(t *testing.T, dynamoUp, sqsUp string) *Harness {
	t.Helper()
	h, err := Start(context.Background(), dynamoUp, sqsUp)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		if err := h.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return h
}

// TestHarnessHTTP drives the harness against a plain HTTP upstream (no
// DynamoDB needed): each fault must break a call and its removal heal it.
func TestHarnessHTTP(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "ok")
	}))
	t.Cleanup(up.Close)
	addr := strings.TrimPrefix(up.URL, "http://")
	h := newHarness(t, addr, addr)
	client := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	t.Cleanup(client.CloseIdleConnections)
	get := func(url string, timeout time.Duration) error {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			return err
		}
		if string(body) != "ok" {
			return fmt.Errorf("body %q", body)
		}
		return nil
	}
	const long = 30 * time.Second
	for _, url := range []string{h.DynamoURL, h.SQSURL} {
		if err := get(url, long); err != nil {
			t.Fatalf("healthy GET %s: %v", url, err)
		}
	}

	t.Run("Latency", func(t *testing.T) {
		const lat = 300 * time.Millisecond
		remove, err := h.Latency(Dynamo, lat, 0, 1)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		err = get(h.DynamoURL, long)
		if d := time.Since(start); err != nil || d < lat {
			t.Errorf("GET with latency: %v after %v, want success after >= %v", err, d, lat)
		}
		remove()
		remove() // idempotent
		if err := get(h.DynamoURL, long); err != nil {
			t.Errorf("GET after remove: %v", err)
		}
	})
	t.Run("Outage", func(t *testing.T) {
		restore, err := h.Outage(SQS)
		if err != nil {
			t.Fatal(err)
		}
		restore2, err := h.Outage(SQS) // nested
		if err != nil {
			t.Fatal(err)
		}
		if err := get(h.SQSURL, long); err == nil {
			t.Fatal("GET during outage succeeded")
		}
		if err := get(h.DynamoURL, long); err != nil {
			t.Errorf("other target during outage: %v", err)
		}
		restore()
		restore() // idempotent: must not end the nested outage
		if err := get(h.SQSURL, long); err == nil {
			t.Fatal("GET with one outage still active succeeded")
		}
		restore2()
		if err := eventually(long, func() error { return get(h.SQSURL, long) }); err != nil {
			t.Errorf("GET after restore: %v", err)
		}
		if err := h.Err(); err != nil {
			t.Errorf("Err: %v", err)
		}
	})
	t.Run("ResetPeer", func(t *testing.T) {
		remove, err := h.ResetPeer(Dynamo, 1)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 2; i++ { // the old pooled connection, then a new one
			if err := get(h.DynamoURL, long); err == nil {
				t.Errorf("GET %d with reset_peer succeeded", i)
			} else {
				t.Logf("GET %d with reset_peer: %v", i, err)
			}
		}
		remove()
		if err := eventually(long, func() error { return get(h.DynamoURL, long) }); err != nil {
			t.Errorf("GET after remove: %v", err)
		}
	})
	t.Run("Timeout", func(t *testing.T) {
		remove, err := h.Timeout(Dynamo, 0, 1)
		if err != nil {
			t.Fatal(err)
		}
		if err := get(h.DynamoURL, time.Second); err == nil {
			t.Error("GET with timeout toxic (hold forever) succeeded")
		}
		remove()
		// after > 0: the proxy closes the connection itself, well before the
		// client's own 30 s deadline.
		remove, err = h.Timeout(Dynamo, 200*time.Millisecond, 1)
		if err != nil {
			t.Fatal(err)
		}
		if err := get(h.DynamoURL, long); err == nil || strings.Contains(err.Error(), "deadline") {
			t.Errorf("GET with timeout toxic (200ms): %v, want a closed connection", err)
		}
		remove()
		if err := eventually(long, func() error { return get(h.DynamoURL, long) }); err != nil {
			t.Errorf("GET after remove: %v", err)
		}
	})
	t.Run("BadInput", func(t *testing.T) {
		if _, err := h.Latency("redis", time.Second, 0, 1); err == nil {
			t.Error("unknown target: want error")
		}
		if _, err := h.Latency(Dynamo, -time.Second, 0, 1); err == nil {
			t.Error("negative latency: want error")
		}
		if _, err := h.ResetPeer(Dynamo, 2); err == nil {
			t.Error("toxicity 2: want error")
		}
		if _, err := h.Outage("redis"); err == nil {
			t.Error("Outage(unknown): want error")
		}
		if _, err := h.AddToxic(Dynamo, Toxic{Type: "no_such_toxic", Stream: Upstream, Toxicity: 1}); err == nil {
			t.Error("unknown toxic type: want error")
		}
	})
	if _, err := Start(context.Background(), "nonsense", addr); err == nil {
		t.Error("Start with bad upstream: want error")
	}
}

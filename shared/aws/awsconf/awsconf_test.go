package awsconf

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"
)

// The SDK's default retry quota (500 tokens, 5-10 per retry) runs out after
// about 50 failed attempts; Hookwall's retryer must keep retrying.
func TestRetryerHasNoRetryQuota(t *testing.T) {
	r := Retryer()
	timeout := errors.New("connection reset")
	for i := range 1000 {
		if _, err := r.GetRetryToken(context.Background(), timeout); err != nil {
			t.Fatalf("retry %d refused: %v", i+1, err)
		}
	}
	if r.MaxAttempts() != MaxAttempts {
		t.Errorf("MaxAttempts = %d, want %d", r.MaxAttempts(), MaxAttempts)
	}
	for attempt := 1; attempt <= 10; attempt++ {
		d, err := r.RetryDelay(attempt, timeout)
		if err != nil || d > MaxBackoff {
			t.Fatalf("attempt %d: delay %s (%v), over MaxBackoff %s", attempt, d, err, MaxBackoff)
		}
	}
}

func TestHTTPClientKeepsConnectionsForTheConcurrency(t *testing.T) {
	tr, ok := HTTPClient().GetTransport(), true
	if !ok || tr.MaxIdleConnsPerHost != MaxIdleConnsPerHost || tr.IdleConnTimeout != IdleConnTimeout {
		t.Fatalf("transport: %d idle per host, idle timeout %s", tr.MaxIdleConnsPerHost, tr.IdleConnTimeout)
	}
	var _ *http.Transport = tr
}

func TestLoadUsesTheTunedParts(t *testing.T) {
	t.Setenv("AWS_REGION", "us-east-1")
	cfg, err := Load(context.Background(), nil, Recorder{})
	if err != nil {
		t.Fatal(err)
	}
	r := cfg.Retryer()
	if r.MaxAttempts() != MaxAttempts {
		t.Errorf("retryer from Load: %d attempts", r.MaxAttempts())
	}
	if d, _ := r.RetryDelay(8, errors.New("x")); d > MaxBackoff+time.Millisecond {
		t.Errorf("retry delay %s over MaxBackoff", d)
	}
	if _, ok := cfg.HTTPClient.(interface{ GetTransport() *http.Transport }); !ok {
		t.Errorf("HTTP client %T is not the tuned BuildableClient", cfg.HTTPClient)
	}
}

package webhook

import (
	"errors"
	"net/http"
	"strings"
	"testing"
)

func TestCheckPost(t *testing.T) {
	if err := CheckPost("fake", nil); !errors.Is(err, ErrMalformed) || !strings.HasPrefix(err.Error(), "fake: ") {
		t.Errorf("nil request: %v, want fake: … ErrMalformed", err)
	}
	if err := CheckPost("fake", &Request{Method: http.MethodGet}); !errors.Is(err, ErrMethodNotAllowed) {
		t.Errorf("GET: %v, want ErrMethodNotAllowed", err)
	}
	if err := CheckPost("fake", &Request{Method: strings.Repeat("X", 100)}); err == nil || len(err.Error()) > 80 {
		t.Errorf("a long method: %v, want an error quoting at most 10 bytes of it", err)
	}
	if err := CheckPost("fake", &Request{Method: http.MethodPost}); err != nil {
		t.Errorf("POST: %v", err)
	}
}

func TestEchoReply(t *testing.T) {
	r := EchoReply("3eZbrw1a")
	if r.Status != http.StatusOK || string(r.Body) != "3eZbrw1a" || !strings.HasPrefix(r.ContentType, "text/plain") {
		t.Errorf("EchoReply: %+v, want 200 text/plain and the challenge", r)
	}
}

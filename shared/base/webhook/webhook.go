package webhook

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Request is one HTTP delivery exactly as it arrived: the method, the route's
// path parameters, the decoded query, the headers and the exact body bytes.
// Providers verify signatures over these bytes and never re-serialise them.
type Request struct {
	// Method is the HTTP method, upper case ("GET", "POST").
	Method string
	// Provider and Tenant are the path parameters of /webhooks/{provider}/{tenant}.
	Provider string
	Tenant   string
	// Query is the URL-decoded query string.
	Query url.Values
	// Header holds the request headers; look them up with Header.Get.
	Header http.Header
	// Body is the exact request body.
	Body []byte
	// Now is the verifier's clock for timestamp windows.
	Now time.Time
}

// Event is one event a provider extracted from a verified delivery.
type Event struct {
	// DedupKey identifies the event within its provider and tenant: the
	// provider's own id where it has one, else a documented fingerprint.
	DedupKey string
	// Type is the provider's event type ("message", "follow", "text",
	// "sys_approval_change", "subscribe", ...).
	Type string
	// OccurredAt is when the provider says the event happened (zero if unknown).
	OccurredAt time.Time
	// Raw is the event's payload as received: a LINE event object, the
	// decrypted WeCom/WeChat XML, a Standard Webhooks body.
	Raw []byte
	// JSON is the event normalised to a JSON object, which processor handlers
	// decode into typed events.
	JSON []byte
	// PayloadHash is the hex SHA-256 of the event's identity-bearing content:
	// the same event redelivered has the same hash, so a different hash under
	// the same key is a conflict.
	PayloadHash string
}

// Reply is the HTTP answer a provider expects.
type Reply struct {
	Status      int
	ContentType string
	Body        []byte
}

// EchoReply is the answer to a URL-verification handshake of a platform
// that wants the challenge itself back: 200, text/plain, challenge.
func EchoReply(challenge string) Reply {
	return Reply{Status: http.StatusOK, ContentType: "text/plain; charset=utf-8", Body: []byte(challenge)}
}

// CheckPost returns the error a POST-only parser answers a request with
// before reading it: a nil request wraps [ErrMalformed], another method
// than POST [ErrMethodNotAllowed] (405); provider, the parser's, prefixes
// it.
func CheckPost(provider string, req *Request) error {
	if req == nil {
		return fmt.Errorf("%s: nil request: %w", provider, ErrMalformed)
	}
	if req.Method != http.MethodPost {
		return fmt.Errorf("%s: method %.10q: %w", provider, req.Method, ErrMethodNotAllowed)
	}
	return nil
}

// Delivery is the outcome of verifying and parsing one Request.
type Delivery struct {
	// Events are the events to claim; empty for URL verification.
	Events []Event
	// Reply is what to answer once every event is claimed and enqueued
	// (for URL verification, the handshake reply itself).
	Reply Reply
	// Verification is true for a URL-verification handshake (WeCom/WeChat
	// GET, LINE's empty-events POST): nothing is stored.
	Verification bool
}

// Parser verifies and parses one provider's requests for one tenant. It holds
// that tenant's secrets. Implementations must never panic on any input and
// must return errors wrapping the sentinels of this package.
type Parser interface {
	Parse(ctx context.Context, req *Request) (*Delivery, error)
}

// Key returns the canonical event key `provider#tenant#dedupKey`, the record's pk.
func Key(provider, tenant, dedupKey string) string {
	return provider + "#" + tenant + "#" + dedupKey
}

// SplitKey splits a key made by Key into its parts. ok is false if key has
// fewer than three parts. The dedup key may itself contain '#'.
func SplitKey(key string) (provider, tenant, dedupKey string, ok bool) {
	provider, rest, ok1 := strings.Cut(key, "#")
	tenant, dedupKey, ok2 := strings.Cut(rest, "#")
	return provider, tenant, dedupKey, ok1 && ok2
}

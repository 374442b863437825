package process

import (
	"net/http"

	"github.com/hookwall/hookwall/shared/internal/registry"
)

// HeaderIdempotencyKey is the header [Event.HTTPClient] and
// [Undo.HTTPClient] set: "Idempotency-Key".
const HeaderIdempotencyKey = "Idempotency-Key"

// idempotentClient returns a client over base (http.DefaultTransport when
// nil) that sets [HeaderIdempotencyKey] on every request without one: to
// key, or, when key is "", to the key of the step the request's context is
// in (none outside a step).
func idempotentClient(base http.RoundTripper, key string) *http.Client {
	if base == nil {
		base = http.DefaultTransport
	}
	return &http.Client{Transport: &idemTransport{base: base, key: key}}
}

// idemTransport is the transport of [idempotentClient].
type idemTransport struct {
	base http.RoundTripper
	key  string // "": the context's step key
}

func (t *idemTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	k, ok := t.key, t.key != ""
	if !ok {
		k, ok = registry.IdempotencyKey(req.Context())
	}
	if ok && req.Header.Get(HeaderIdempotencyKey) == "" {
		req = req.Clone(req.Context())
		req.Header.Set(HeaderIdempotencyKey, k)
	}
	return t.base.RoundTrip(req)
}

package webhook

import "errors"

// Sentinel errors. Providers and stores wrap them with context; callers test
// them with errors.Is. Messages never contain bodies, secrets or plaintext.
var (
	// ErrBadSignature: the signature is missing, malformed or does not match.
	ErrBadSignature = errors.New("bad signature")
	// ErrStaleTimestamp: the request's timestamp is outside the accepted window.
	ErrStaleTimestamp = errors.New("timestamp outside the accepted window")
	// ErrMalformed: the request is authentic but cannot be parsed, or a
	// required parameter is missing.
	ErrMalformed = errors.New("malformed request")
	// ErrTooLarge: the body exceeds the configured limit.
	ErrTooLarge = errors.New("body too large")
	// ErrUnknownProvider: the route names a provider Hookwall does not serve.
	ErrUnknownProvider = errors.New("unknown provider")
	// ErrUnknownTenant: the tenant does not exist or has no secrets for the provider.
	ErrUnknownTenant = errors.New("unknown tenant")
	// ErrMethodNotAllowed: the provider does not accept this HTTP method.
	ErrMethodNotAllowed = errors.New("method not allowed")
)

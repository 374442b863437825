package process

import (
	"fmt"
	"net/http"
)

// StatusError is the error [HTTPStatus] returns for an HTTP answer that is
// not a success: its status code. Callers that branch on the code use
// errors.As.
type StatusError struct {
	// Code is the HTTP status code of the answer.
	Code int
}

// Error returns "status <code>".
func (e *StatusError) Error() string { return fmt.Sprintf("status %d", e.Code) }

// HTTPStatus maps the status code of an answer from an external HTTP API to
// a handler outcome: nil for 2xx; a retryable *[StatusError] for 408 Request
// Timeout, 429 Too Many Requests and 5xx; and [Permanent] of a *StatusError
// for any other status (other 4xx, and 1xx and 3xx a client did not follow),
// which retrying the same request cannot fix. Wrap the result with the
// operation: fmt.Errorf("crm: POST %s: %w", path, process.HTTPStatus(code)).
func HTTPStatus(code int) error {
	switch {
	case code >= 200 && code < 300:
		return nil
	case code == http.StatusRequestTimeout, code == http.StatusTooManyRequests, code >= 500:
		return &StatusError{Code: code}
	default:
		return Permanent(&StatusError{Code: code})
	}
}

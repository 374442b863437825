package intake

// The answer's status: errors mapped to HTTP statuses and to the
// rejection reasons of logs and metrics.

import (
	"errors"
	"net/http"

	"github.com/hookwall/hookwall/shared/base/webhook"
)

// errUnavailable marks failures of DynamoDB or SQS, and events another
// delivery is still handing off: the platform should retry.
var errUnavailable = errors.New("dependency unavailable")

// StatusFor maps an error of Receive to its HTTP status code.
func StatusFor(err error) int {
	switch {
	case err == nil:
		return http.StatusOK
	case errors.Is(err, webhook.ErrBadSignature), errors.Is(err, webhook.ErrStaleTimestamp):
		return http.StatusUnauthorized
	case errors.Is(err, webhook.ErrMalformed):
		return http.StatusBadRequest
	case errors.Is(err, webhook.ErrUnknownProvider), errors.Is(err, webhook.ErrUnknownTenant):
		return http.StatusNotFound
	case errors.Is(err, webhook.ErrMethodNotAllowed):
		return http.StatusMethodNotAllowed
	case errors.Is(err, webhook.ErrTooLarge):
		return http.StatusRequestEntityTooLarge
	case errors.Is(err, errUnavailable):
		return http.StatusServiceUnavailable
	default:
		return http.StatusInternalServerError
	}
}

// rejectReason names a rejection in logs and metrics.
func rejectReason(err error) string {
	switch StatusFor(err) {
	case http.StatusUnauthorized:
		if errors.Is(err, webhook.ErrStaleTimestamp) {
			return reasonStaleTimestamp
		}
		return reasonBadSignature
	case http.StatusBadRequest:
		return reasonMalformed
	case http.StatusNotFound:
		return reasonUnknownRoute
	case http.StatusMethodNotAllowed:
		return reasonMethodNotAllowed
	case http.StatusRequestEntityTooLarge:
		return reasonTooLarge
	default:
		return reasonUnavailable
	}
}

// isClientError reports whether every error in err's tree that decides the
// status is the client's (DynamoDB refused the event itself), and none is
// an unavailable dependency.
func isClientError(err error) bool {
	var joined interface{ Unwrap() []error }
	if errors.As(err, &joined) {
		for _, e := range joined.Unwrap() {
			if !isClientError(e) {
				return false
			}
		}
		return true
	}
	return errors.Is(err, webhook.ErrMalformed) || errors.Is(err, webhook.ErrTooLarge)
}

package process

import (
	"errors"
	"fmt"
)

// PermanentError marks an error that retrying cannot fix: the event goes to
// the dead-letter queue at once. Create it with [Permanent].
type PermanentError struct {
	Err error
}

// Permanent wraps err so that the dispatcher fails the event at once instead
// of retrying it. Permanent(nil) is nil.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &PermanentError{Err: err}
}

// Error returns the wrapped error's message.
func (e *PermanentError) Error() string { return "permanent: " + e.Err.Error() }

// Unwrap returns the wrapped error.
func (e *PermanentError) Unwrap() error { return e.Err }

// IsPermanent reports whether err's chain contains a [*PermanentError].
func IsPermanent(err error) bool {
	var pe *PermanentError
	return errors.As(err, &pe)
}

// ErrLeaseLost is returned by Step (and is the cause of the handler context's
// cancellation) when the attempt lost its lease: another worker owns the
// event now and this attempt's outcome is discarded.
var ErrLeaseLost = errors.New("process: lease lost")

// PanicError is the error a recovered handler panic becomes; it is retried.
type PanicError struct {
	// Value is what the handler panicked with.
	Value any
	// Stack is the goroutine's stack at the panic.
	Stack []byte
}

// Error describes the panic (not the stack, which is logged).
func (e *PanicError) Error() string { return fmt.Sprintf("panic: %v", e.Value) }

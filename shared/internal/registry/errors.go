package registry

import (
	"errors"
	"fmt"
	"strings"
)

// PermanentError marks an error that retrying cannot fix: the event goes to
// the dead-letter queue at once (a compensation ends DEAD). Create it with
// [Permanent].
type PermanentError struct {
	Err error
}

// Permanent wraps err so that the engine fails the event at once instead of
// retrying it. Permanent(nil) is nil.
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

// ErrLeaseLost is returned by a step (and is the cause of the handler
// context's cancellation) when the attempt lost its lease: another worker
// owns the event now and this attempt's outcome is discarded.
var ErrLeaseLost = errors.New("process: lease lost")

// PanicError is the error a recovered handler (or undo) panic becomes; it is
// retried.
type PanicError struct {
	// Value is what the handler panicked with.
	Value any
	// Stack is the goroutine's stack at the panic.
	Stack []byte
}

// Error describes the panic (not the stack, which is logged).
func (e *PanicError) Error() string { return fmt.Sprintf("panic: %v", e.Value) }

// UndoStepPrefix starts the journal step name of a compensation step: the
// undo of a handler's forward step s is journaled under the same handler as
// UndoStepPrefix + s ([UndoStep]). Like webhook.DoneStep, it starts with
// '$', which forward step names cannot.
const UndoStepPrefix = "$undo:"

// UndoStep returns the journal step name of the undo of forward step step.
func UndoStep(step string) string { return UndoStepPrefix + step }

// IsUndoStep reports whether step is the journal name of a compensation
// step, and returns the forward step it undoes.
func IsUndoStep(step string) (forward string, ok bool) {
	forward, ok = strings.CutPrefix(step, UndoStepPrefix)
	if !ok || forward == "" {
		return "", false
	}
	return forward, true
}

// ValidStepName reports a forward step name a handler may not use: empty,
// containing '#' or starting with '$' (the journal's markers).
func ValidStepName(name string) error {
	if name == "" || strings.Contains(name, "#") || strings.HasPrefix(name, "$") {
		return Permanent(fmt.Errorf("step name %q: must be non-empty, without '#', not starting with '$'", name))
	}
	return nil
}

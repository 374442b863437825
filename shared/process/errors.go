package process

import (
	"github.com/hookwall/hookwall/shared/internal/registry"
)

// Permanent wraps err so that the event fails at once (the dead-letter
// queue) instead of being retried; in an [UndoFunc], so that the event ends
// DEAD. Permanent(nil) is nil.
//
//	if errors.Is(err, ErrBlockedUser) {
//		return process.Permanent(err)
//	}
func Permanent(err error) error { return registry.Permanent(err) }

// IsPermanent reports whether err's chain contains an error made with
// [Permanent].
func IsPermanent(err error) bool { return registry.IsPermanent(err) }

// ErrLeaseLost is returned by [Step] (and is the cause of the handler
// context's cancellation) when the attempt lost its lease: another worker
// owns the event now and this attempt's outcome is discarded.
var ErrLeaseLost = registry.ErrLeaseLost

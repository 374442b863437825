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
// [Permanent], as a team's test of its error mapping asks:
//
//	if err := c.post(ctx, "/gone"); !process.IsPermanent(err) { t.Error(...) }
func IsPermanent(err error) bool { return registry.IsPermanent(err) }

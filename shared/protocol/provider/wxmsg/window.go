package wxmsg

import (
	"fmt"
	"strconv"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
)

// DefaultTolerance is the timestamp window both providers use when their
// Config.Tolerance is 0: [CheckWindow] applies it.
const DefaultTolerance = 300 * time.Second

// CheckWindow reports whether the (already signed) query timestamp ts, in
// unix seconds, is within tolerance of now; a zero now means [time.Now], a
// zero tolerance [DefaultTolerance], and a negative tolerance disables the
// check. A ts that is not an integer or lies outside the window is an error
// wrapping [webhook.ErrStaleTimestamp], with no package prefix: callers add
// theirs.
func CheckWindow(ts string, now time.Time, tolerance time.Duration) error {
	switch {
	case tolerance < 0:
		return nil
	case tolerance == 0:
		tolerance = DefaultTolerance
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return fmt.Errorf("timestamp is not an integer: %w", webhook.ErrStaleTimestamp)
	}
	if now.IsZero() {
		now = time.Now()
	}
	tol := int64(tolerance / time.Second)
	if n := now.Unix(); sec < n-tol || sec > n+tol {
		return fmt.Errorf("timestamp: %w", webhook.ErrStaleTimestamp)
	}
	return nil
}

package kernel

import "time"

// Backoff returns the visibility timeout after failed attempt n (1 = first):
// uniform in [0, min(cap, base·2^(n-1))] ("full jitter"), drawn with jitter
// (which returns a uniform number in [0, k)). The result is never above cap.
func Backoff(n int, base, cap time.Duration, jitter func(k int64) int64) time.Duration {
	ceil := cap
	if n >= 1 && n < 63 {
		if b := base << (n - 1); b > 0 && b>>(n-1) == base && b < cap {
			ceil = b
		}
	}
	if ceil <= 0 {
		return 0
	}
	return time.Duration(jitter(int64(ceil) + 1))
}

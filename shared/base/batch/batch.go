package batch

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Split groups the indexes 0..n-1, in order, into batches of at most
// maxCount entries whose sizes (size(i), in bytes) add up to at most
// maxBytes. An entry larger than maxBytes makes a batch of its own: the
// caller decides whether to send it. maxCount < 1 panics.
func Split(n int, size func(i int) int, maxCount, maxBytes int) [][]int {
	if maxCount < 1 {
		panic(fmt.Sprintf("batch: Split: maxCount %d, want at least 1", maxCount))
	}
	var out [][]int
	var cur []int
	total := 0
	for i := range n {
		s := size(i)
		if len(cur) == maxCount || (len(cur) > 0 && total+s > maxBytes) {
			out = append(out, cur)
			cur, total = nil, 0
		}
		cur = append(cur, i)
		total += s
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// SendFunc sends the entries pending (indexes into the caller's list) in one
// call. It returns the entries that were not accepted and must be sent again
// (a subset of pending; all of it when the call itself failed), and why.
type SendFunc func(ctx context.Context, pending []int) (rest []int, err error)

// ErrNotAccepted is the reason Send gives when a SendFunc returned entries to
// send again without saying why.
var ErrNotAccepted = errors.New("batch: entries not accepted")

// Retry is how [Send] resends the entries a call did not accept: up to
// Attempts calls per batch in all, the first resend after Backoff, each
// next one after twice the pause before.
type Retry struct {
	Attempts int
	Backoff  time.Duration
}

// Or returns r with each field that is not set (zero or negative) taken
// from def: how a caller applies its defaults.
func (r Retry) Or(def Retry) Retry {
	if r.Attempts <= 0 {
		r.Attempts = def.Attempts
	}
	if r.Backoff <= 0 {
		r.Backoff = def.Backoff
	}
	return r
}

// Send sends each batch with send, resending only the entries send returns,
// up to r.Attempts calls per batch (less than 1 counts as 1). Before the
// n-th resend of a batch it waits r.Backoff<<(n-1), or until ctx is done.
// Once ctx is done no further call is made and the entries not yet accepted
// fail.
//
// failed lists, in increasing order, the entries never accepted (nil when
// all were); lastErr is the last reason given for an entry that failed (nil
// when none did).
func Send(ctx context.Context, batches [][]int, r Retry, send SendFunc) (failed []int, lastErr error) {
	attempts, backoff := max(r.Attempts, 1), r.Backoff
	for _, b := range batches {
		pending := b
		var why error // why the entries still pending were not accepted
		for attempt := 0; len(pending) > 0 && attempt < attempts; attempt++ {
			if err := wait(ctx, attempt, backoff); err != nil {
				why = err
				break
			}
			rest, err := send(ctx, pending)
			if len(rest) > 0 && err == nil {
				err = ErrNotAccepted
			}
			pending, why = rest, err
		}
		if len(pending) > 0 {
			failed = append(failed, pending...)
			lastErr = why
		}
	}
	slices.Sort(failed)
	return failed, lastErr
}

// wait returns once the pause before the given attempt is over (none before
// the first), or ctx's error once ctx is done.
func wait(ctx context.Context, attempt int, backoff time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if attempt == 0 || backoff <= 0 {
		return nil
	}
	return Sleep(ctx, backoff<<(attempt-1))
}

// Sleep returns after d, or with ctx's error once ctx is done: the pause
// of a send loop (a resend's backoff, the wait for a rate limit's next
// token in shared/engine/drain and shared/ops/recovery), and the default Sleep of
// shared/ops/control and shared/ops/pretraffic.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

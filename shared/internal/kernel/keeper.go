package kernel

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// Until is now + d, never past ctx's deadline.
func Until(ctx context.Context, now time.Time, d time.Duration) time.Time {
	until := now.Add(d)
	if dl, ok := ctx.Deadline(); ok && dl.Before(until) {
		until = dl
	}
	return until
}

// FinishContext returns a context for the closing writes: not cancelled with
// ctx, bounded by reserve (at least one second).
func FinishContext(ctx context.Context, reserve time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), max(reserve, time.Second))
}

// Keeper keeps the lease of one attempt: it heartbeats and, once the lease
// is lost, cancels the attempt's context. The zero Keeper is ready to use.
type Keeper struct {
	lost   atomic.Bool
	cancel context.CancelCauseFunc
	cause  error
}

// Lost reports whether the lease is known to be lost.
func (k *Keeper) Lost() bool { return k.lost.Load() }

// MarkLost records that the lease is gone and cancels the attempt's context
// (with the cause given to [Keeper.Start]).
func (k *Keeper) MarkLost() {
	if k.lost.CompareAndSwap(false, true) && k.cancel != nil {
		k.cancel(k.cause)
	}
}

// Start returns the attempt's context (cancelled with cause when the lease
// is lost, its deadline reserve before ctx's) and starts the heartbeat:
// every third of duration (at least 1 ms) it calls beat with ctx, logs an
// error, and marks the lease lost when beat reports it not held. stop ends
// the heartbeat and the context; call it once.
func (k *Keeper) Start(ctx context.Context, duration, reserve time.Duration, cause error, log *slog.Logger,
	beat func(context.Context) (held bool, err error)) (hctx context.Context, stop func()) {
	hctx, cancel := context.WithCancelCause(ctx)
	k.cancel, k.cause = cancel, cause
	cancelDeadline := context.CancelFunc(func() {})
	if dl, ok := ctx.Deadline(); ok {
		hctx, cancelDeadline = context.WithDeadline(hctx, dl.Add(-reserve))
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { k.heartbeat(ctx, done, duration, log, beat) })
	return hctx, func() {
		close(done)
		wg.Wait()
		cancelDeadline()
		cancel(nil)
	}
}

func (k *Keeper) heartbeat(ctx context.Context, done <-chan struct{}, duration time.Duration, log *slog.Logger,
	beat func(context.Context) (bool, error)) {
	t := time.NewTicker(max(duration/3, time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-ctx.Done():
			return
		case <-t.C:
		}
		held, err := beat(ctx)
		switch {
		case err != nil:
			log.WarnContext(ctx, "heartbeat", slog.Any("error", err))
		case !held:
			k.MarkLost()
			return
		}
	}
}

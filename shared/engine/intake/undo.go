package intake

// Undo: the claims a failed delivery leaves released, so that the
// platform's retry claims them again.

import (
	"context"
	"log/slog"
	"sync"
)

// undo releases, concurrently, the claims (or take-overs) of items[idx]:
// those whose envelopes were not sent, and those whose claim failed with an
// unknown outcome. It runs on a context that survives the request's budget
// running out, for at most UndoTimeout. A claim it cannot undo stays
// RECEIVED, and the platform's retry takes the enqueue over once the grace
// has passed (or the sweeper re-enqueues it).
func (h *Handler) undo(ctx context.Context, items []admitted, idx []int) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), h.cfg.UndoTimeout)
	defer cancel()
	h.forEach(len(idx), func(j int) {
		it := &items[idx[j]]
		if it.resend {
			if err := h.cfg.Store.RevertEnqueue(ctx, it.res.Record, it.prevEnq); err != nil {
				h.logEvent(ctx, slog.LevelError, it, "could not revert re-enqueue take-over", slog.Any("error", err))
			}
			return
		}
		deleted, err := h.cfg.Store.Unclaim(ctx, it.res.Record)
		switch {
		case err != nil:
			h.logEvent(ctx, slog.LevelError, it, "could not undo claim; a retry after the grace period or the sweeper will enqueue it", slog.Any("error", err))
		case !deleted:
			h.logEvent(ctx, slog.LevelInfo, it, "claim absent or moved on before undo; left in place")
		default:
			h.logEvent(ctx, slog.LevelInfo, it, "claim undone")
		}
	})
}

// forEach runs fn(0..n-1) on up to ClaimWorkers goroutines.
func (h *Handler) forEach(n int, fn func(int)) {
	if n == 1 {
		fn(0)
		return
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, h.cfg.ClaimWorkers)
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			fn(i)
		})
	}
	wg.Wait()
}

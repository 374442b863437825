package intake

// Enqueue: a wave's new events sent to the queue in batches; those the
// queue did not take are marked for undo.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hookwall/hookwall/shared/aws/queue"
)

// sendWave sends w's envelopes in batches; the events whose message the
// queue did not take are no longer on their way and join w.undo, and the
// failure is out.sendErr. The sent ones are remembered in the hand-off cache.
func (h *Handler) sendWave(ctx context.Context, items []admitted, w *waveSends, start time.Time, out *waveOutcome) {
	if err := h.cfg.Queue.Send(ctx, w.envs); err != nil {
		failed := allOf(len(w.envs))
		var se *queue.SendError
		if errors.As(err, &se) {
			failed = se.Failed
		}
		h.cfg.Metrics.Count(MetricEnqueued, len(w.envs)-len(failed))
		for _, f := range failed {
			w.undo = append(w.undo, w.sendIdx[f])
			items[w.sendIdx[f]].onItsWay = false
		}
		out.sendErr = fmt.Errorf("intake: enqueue: %w: %w", errUnavailable, err)
	} else {
		h.cfg.Metrics.Count(MetricEnqueued, len(w.envs))
	}
	h.rememberHandedOff(items, w.sendIdx, start)
}

// allOf returns the indexes 0..n-1.
func allOf(n int) []int {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	return idx
}

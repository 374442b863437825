package intake

// Answers from memory: the hand-off cache looked up, concurrent hand-offs
// in this instance awaited, and sent events remembered.

import (
	"context"
	"log/slog"
	"time"
)

// lookupHandedOff marks the items this instance handed off already (the
// hand-off cache, at start) and joins the others to the flights in this
// instance; it does nothing without the cache.
func (h *Handler) lookupHandedOff(items []admitted, start time.Time) {
	if h.cfg.HandedOff == nil {
		return
	}
	hits := 0
	for i := range items {
		it := &items[i]
		it.cached = h.cfg.HandedOff.HandedOff(it.new.Key, it.new.PayloadHash, start)
		if it.cached {
			hits++
		}
	}
	h.cfg.Metrics.Count(MetricHandedOffHit, hits)
	h.cfg.Metrics.Count(MetricHandedOffMiss, len(items)-hits)
	h.flights.join(items)
}

// awaitFlights waits for the hand-offs in this instance that items await
// and returns how many did not end on their way (or did not end within
// ctx): those get the 503 a duplicate inside the grace gets.
func (h *Handler) awaitFlights(ctx context.Context, items []admitted) int {
	failed := 0
	for i := range items {
		it := &items[i]
		if it.awaits == nil {
			continue
		}
		select {
		case <-it.awaits.done:
			it.onItsWay = it.awaits.onItsWay
		case <-ctx.Done():
		}
		h.flights.waiters.Add(-1)
		if it.onItsWay {
			h.cfg.Metrics.Count(MetricDuplicate, 1)
			h.cfg.Metrics.Count(MetricCoalesced, 1)
			h.logEvent(ctx, slog.LevelInfo, it, "duplicate delivery acknowledged",
				slog.String("answered_from", "a concurrent hand-off in this instance"))
			continue
		}
		failed++
		h.cfg.Metrics.Count(MetricInFlight, 1)
		h.logEvent(ctx, slog.LevelInfo, it, "a concurrent delivery to this instance could not hand the event off: answering 503 so the platform retries")
	}
	return failed
}

// rememberHandedOff adds the sent events whose message the queue accepted
// (items[i] for i in sendIdx, still onItsWay) to the hand-off cache, until
// HandedOffTTL after start, a time before their claim or take-over set the
// record's enqueuedAt: the entries expire before the re-enqueue grace does.
func (h *Handler) rememberHandedOff(items []admitted, sendIdx []int, start time.Time) {
	if h.cfg.HandedOff == nil {
		return
	}
	now, expires := h.cfg.Now(), start.Add(h.cfg.HandedOffTTL)
	for _, i := range sendIdx {
		if items[i].onItsWay {
			h.cfg.HandedOff.Add(items[i].new.Key, items[i].new.PayloadHash, now, expires)
		}
	}
}

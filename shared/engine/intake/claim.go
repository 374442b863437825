package intake

// Claims: the conditional write of each event of a wave, the take-over of
// a record left RECEIVED past the grace, and the count of a duplicate.

import (
	"context"
	"log/slog"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/state/store"
)

// claimWave claims the items that need a claim, concurrently, none after
// claimBy (those are skipped, left for a retry): a new event is claimed; a
// duplicate is counted; a record left RECEIVED past the grace is taken
// over, one still inside it is marked in flight.
func (h *Handler) claimWave(ctx context.Context, items []admitted, claimBy time.Time) {
	h.forEach(len(items), func(i int) {
		it := &items[i]
		if !it.needsClaim() {
			return
		}
		if ctx.Err() != nil || time.Now().After(claimBy) {
			it.skipped = true // left for the platform's retry: nothing was written.
			return
		}
		it.res, it.err = h.cfg.Store.Claim(ctx, it.new, h.cfg.DedupWindow)
		if it.err != nil || it.res.Outcome == store.Claimed {
			return
		}
		rec := it.res.Record
		if it.res.Outcome == store.Duplicate && !it.res.Counted {
			h.countDelivery(ctx, it, claimBy) // the claim could not count it
		}
		if rec.Status != webhook.StatusReceived {
			return // past RECEIVED: on its way.
		}
		if h.cfg.Now().Sub(time.UnixMilli(rec.EnqueuedAt)) < h.cfg.ReenqueueGrace {
			it.inFlight = true
			return
		}
		it.prevEnq = rec.EnqueuedAt
		it.resend, it.err = h.cfg.Store.TakeOverEnqueue(ctx, rec, h.cfg.ReenqueueGrace)
		if it.err == nil && !it.resend && (rec.Status == webhook.StatusReceived || rec.Status == "") {
			it.inFlight = true // another duplicate took it over, or its claim was undone.
		}
	})
}

// countDelivery records on the record a duplicate delivery that reached
// the table and that its claim did not count (see [store.Table.Claim] and
// [store.Table.CountDelivery]): one more write, made only while the
// claims' part of the budget lasts. It is what operators see,
// not what the answer depends on: a failure is logged and counted
// (MetricDeliveryNotCounted), never answered with an error.
func (h *Handler) countDelivery(ctx context.Context, it *admitted, claimBy time.Time) {
	if time.Now().After(claimBy) {
		h.cfg.Metrics.Count(MetricDeliveryNotCounted, 1)
		return
	}
	if _, err := h.cfg.Store.CountDelivery(ctx, it.res.Record); err != nil {
		h.cfg.Metrics.Count(MetricDeliveryNotCounted, 1)
		h.logEvent(ctx, slog.LevelWarn, it, "duplicate delivery not counted on the record", slog.Any("error", err))
	}
}

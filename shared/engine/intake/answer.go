package intake

// Outcomes: each claimed event of a wave sorted into what to send, what to
// undo and what to answer, logged and counted.

import (
	"context"
	"log/slog"

	"github.com/hookwall/hookwall/shared/base/obs"
	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/state/store"
)

// waveSends is what a wave sends and undoes: the envelopes to send, the
// index in items of each one's event, and the items whose claim to undo.
type waveSends struct {
	envs    []webhook.Envelope
	sendIdx []int
	undo    []int
}

// sortWave sorts the claimed items of a wave by outcome, logs and counts
// each, marks those on their way, and returns what to send and undo; it adds
// failed claims and events in flight elsewhere to out.
func (h *Handler) sortWave(ctx context.Context, items []admitted, out *waveOutcome) waveSends {
	w := waveSends{envs: make([]webhook.Envelope, 0, len(items)), sendIdx: make([]int, 0, len(items))}
	fromProgress := 0
	for i := range items {
		it := &items[i]
		switch {
		case it.awaits != nil:
			// Its outcome is the other delivery's: see admit.
		case it.skipped:
			// Not claimed: the retry claims it.
		case it.fromProgress:
			it.onItsWay = true
			fromProgress++
		case it.cached:
			it.onItsWay = true
			h.cfg.Metrics.Count(MetricDuplicate, 1)
			h.logEvent(ctx, slog.LevelInfo, it, "duplicate delivery acknowledged",
				slog.String("answered_from", "hand-off cache"))
		case it.err != nil:
			h.logEvent(ctx, slog.LevelError, it, "claim failed", slog.Any("error", it.err))
			out.errs = append(out.errs, it.err)
			if it.res.Record != nil && it.res.Outcome == 0 { // the write may have been applied.
				w.undo = append(w.undo, i)
			}
		case it.res.Outcome == store.Claimed:
			it.onItsWay = true // unless its send fails
			h.logEvent(ctx, slog.LevelInfo, it, "event claimed")
			w.envs = append(w.envs, it.res.Record.Envelope())
			w.sendIdx = append(w.sendIdx, i)
		case it.resend:
			it.onItsWay = true // unless its send fails
			h.cfg.Metrics.Count(outcomeMetric(it.res.Outcome), 1)
			h.cfg.Metrics.Count(MetricReenqueued, 1)
			h.logEvent(ctx, slog.LevelWarn, it, "record still RECEIVED past the grace period: this delivery re-enqueues it",
				slog.String("claim", it.res.Outcome.String()))
			w.envs = append(w.envs, it.res.Record.Envelope())
			w.sendIdx = append(w.sendIdx, i)
		case it.inFlight:
			out.inFlight++
			h.cfg.Metrics.Count(MetricInFlight, 1)
			h.logEvent(ctx, slog.LevelInfo, it, "record RECEIVED and maybe still being sent by another delivery: answering 503 so the platform retries",
				slog.String("claim", it.res.Outcome.String()))
		case it.res.Outcome == store.Conflict:
			it.onItsWay = true
			h.cfg.Metrics.Count(MetricConflict, 1)
			h.logEvent(ctx, slog.LevelWarn, it, "same key, different payload: not processed again",
				slog.String("stored_payload_hash", it.res.Record.PayloadHash), slog.String("payload_hash", it.ev.PayloadHash))
		default:
			it.onItsWay = true
			h.cfg.Metrics.Count(MetricDuplicate, 1)
			h.logEvent(ctx, slog.LevelInfo, it, "duplicate delivery acknowledged",
				slog.String(obs.KeyStatus, string(it.res.Record.Status)))
		}
	}
	if fromProgress > 0 {
		h.cfg.Metrics.Count(MetricDuplicate, fromProgress)
		h.cfg.Logger.InfoContext(ctx, "events an earlier attempt of this delivery handed off acknowledged",
			slog.Int("events", fromProgress), slog.String("answered_from", "delivery progress"))
	}
	return w
}

// outcomeMetric names the metric of a claim outcome that was not new.
func outcomeMetric(o store.ClaimOutcome) string {
	if o == store.Conflict {
		return MetricConflict
	}
	return MetricDuplicate
}

// logEvent logs one line about one event, with its key and type. It costs
// nothing when the level is disabled.
func (h *Handler) logEvent(ctx context.Context, level slog.Level, it *admitted, msg string, attrs ...slog.Attr) {
	if !h.cfg.Logger.Enabled(ctx, level) {
		return
	}
	attrs = append(attrs, slog.String(obs.KeyEventKey, it.new.Key), slog.String(obs.KeyEventType, it.ev.Type))
	h.cfg.Logger.LogAttrs(ctx, level, msg, attrs...)
}

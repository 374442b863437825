package intake

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"slices"
	"strings"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/state/store"
)

// waveEvents is how many events of a large delivery one wave claims (on
// [Config.ClaimWorkers] goroutines) before sending them. A delivery of at most
// this many events is one wave, and never reads or saves progress: the
// wave ends well inside the budget on a loaded machine (see
// docs/PERFORMANCE.md, "Large deliveries"). Larger waves fill SQS batches
// and the workers better; smaller ones waste less of the budget's end.
const waveEvents = 256

// minWave is the smallest wave started after the first: fewer claims
// than that are left for the retry.
const minWave = 32

// nextWave returns the end of the wave that starts at items[from] with at
// most n events that need a claim (those answered from memory or from
// progress ride along), and how many need one.
func nextWave(items []admitted, from, n int) (to, claims int) {
	for to = from; to < len(items); to++ {
		if !items[to].needsClaim() {
			continue
		}
		if claims == n {
			break
		}
		claims++
	}
	return to, claims
}

// splitWaves returns the waves of items, as [from, to) index pairs: each
// holds at most waveEvents events that need a claim (those answered from
// memory or from progress cost nothing and ride along).
func splitWaves(items []admitted) [][2]int {
	var waves [][2]int
	from, n := 0, 0
	for i := range items {
		if !items[i].needsClaim() {
			continue
		}
		if n == waveEvents {
			waves = append(waves, [2]int{from, i})
			from, n = i, 0
		}
		n++
	}
	if from < len(items) || len(waves) == 0 {
		waves = append(waves, [2]int{from, len(items)})
	}
	return waves
}

// progress is the saved progress of one large delivery, as loaded.
type progress struct {
	id     string
	loaded store.Progress
}

// deliveryID names a delivery for its progress: its provider and tenant
// and a hash of its events' keys and payload hashes, in key order, so that
// a redelivery of the same events (LINE's isRedelivery changes the body
// but not the payload hashes), in any order, finds it; another set of
// events, or the same keys with other payloads, does not.
func deliveryID(req *webhook.Request, items []admitted, order []int) string {
	sum := sha256.New()
	for _, i := range order {
		sum.Write([]byte(items[i].new.Key))
		sum.Write([]byte{0})
		sum.Write([]byte(items[i].new.PayloadHash))
		sum.Write([]byte{'\n'})
	}
	return req.Provider + "#" + req.Tenant + "#" + hex.EncodeToString(sum.Sum(nil))
}

// loadProgress ranks items by key (their bits in the progress), reads what
// earlier attempts of the delivery handed off and marks those items. A
// failed read is logged and costs only the claims it would have saved.
func (h *Handler) loadProgress(ctx context.Context, req *webhook.Request, items []admitted) *progress {
	order := make([]int, len(items))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return strings.Compare(items[a].new.Key, items[b].new.Key) })
	for r, i := range order {
		items[i].rank = r
	}
	p := &progress{id: deliveryID(req, items, order)}
	loaded, err := h.cfg.Store.LoadProgress(ctx, p.id)
	if err != nil {
		h.cfg.Logger.WarnContext(ctx, "could not read the delivery's progress; claiming every event", slog.Any("error", err))
		return p
	}
	p.loaded = loaded
	for i := range items {
		if loaded.Has(items[i].rank) && !items[i].cached && items[i].awaits == nil {
			items[i].fromProgress = true
		}
	}
	return p
}

// saveProgress saves which events of the delivery are on their way, for the
// platform's retry. It marks only events whose record it holds (claimed,
// taken over, duplicates, conflicts) or that the progress marked already,
// and expires with the earliest of their records, so that it never
// outlives a record it vouches for. It runs on a context that survives the
// budget, for at most UndoTimeout; a failure only costs the retry claims.
func (h *Handler) saveProgress(ctx context.Context, p *progress, items []admitted) {
	next := store.Progress{ExpiresAt: p.loaded.ExpiresAt}
	marked, added := 0, 0 // added: marked by this attempt
	for i := range items {
		it := &items[i]
		if !it.onItsWay {
			continue
		}
		switch {
		case it.fromProgress:
		case it.res.Record != nil && it.res.Record.ExpiresAt > 0:
			if next.ExpiresAt == 0 || it.res.Record.ExpiresAt < next.ExpiresAt {
				next.ExpiresAt = it.res.Record.ExpiresAt
			}
			added++
		default:
			continue
		}
		next.Set(it.rank)
		marked++
	}
	if added == 0 { // nothing the saved progress does not say already
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), h.cfg.UndoTimeout)
	defer cancel()
	if err := h.cfg.Store.SaveProgress(ctx, p.id, next); err != nil {
		h.cfg.Logger.WarnContext(ctx, "could not save the delivery's progress; its retry claims again what this attempt handed off",
			slog.Any("error", err))
		return
	}
	h.cfg.Logger.InfoContext(ctx, "delivery progress saved for the platform's retry",
		slog.Int("events_on_their_way", marked), slog.Int("events", len(items)))
}

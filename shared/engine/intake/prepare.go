package intake

// Preparation: every event of a delivery checked and given its canonical
// key before anything is written.

import (
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/state/store"
)

// admitted is one event of the request and what its claim found.
type admitted struct {
	ev       *webhook.Event
	new      store.NewEvent
	cached   bool    // this instance handed it off already: a duplicate, answered from memory
	flight   *flight // this delivery's hand-off of the event, awaited by concurrent duplicates
	awaits   *flight // another delivery's hand-off of the same event in this instance
	onItsWay bool    // the event has a message sent or a record past RECEIVED
	res      store.ClaimResult
	err      error // the claim or take-over failed
	resend   bool  // a RECEIVED record past the grace that this request took over
	prevEnq  int64 // its enqueuedAt before the take-over
	inFlight bool  // a RECEIVED record another delivery may still be sending
	// fromProgress: an earlier attempt of this delivery handed it off (see
	// [store.Progress]); rank is its place in the delivery's progress.
	fromProgress bool
	rank         int
	skipped      bool // no claim started: too late in the budget
}

// needsClaim reports whether it must go to DynamoDB: not answered from the
// hand-off cache, a concurrent hand-off or the delivery's progress.
func (it *admitted) needsClaim() bool {
	return !it.cached && it.awaits == nil && !it.fromProgress
}

// prepare checks every event of the delivery before anything is claimed: a
// client's input that could never be stored or sent is refused here, with
// a 4xx and nothing written, instead of failing at DynamoDB or SQS on every
// retry. It returns the events to claim, one per key.
func (h *Handler) prepare(req *webhook.Request, meta Meta, events []webhook.Event) ([]admitted, error) {
	items := make([]admitted, 0, len(events))
	var seen map[string]bool
	if len(events) > 1 {
		seen = make(map[string]bool, len(events))
	}
	oldest := req.Now.Add(-h.cfg.MaxEventAge)
	for i := range events {
		ev := &events[i]
		if err := webhook.CheckID("event id", ev.DedupKey, webhook.MaxDedupKeyBytes); err != nil {
			return nil, fmt.Errorf("intake: event %d: %w", i, err)
		}
		if ev.Type != "" {
			if err := webhook.CheckID("event type", ev.Type, webhook.MaxTypeBytes); err != nil {
				return nil, fmt.Errorf("intake: event %d: %w", i, err)
			}
		}
		if !utf8.Valid(ev.JSON) {
			return nil, fmt.Errorf("intake: event %d: payload is not valid UTF-8: %w", i, webhook.ErrMalformed)
		}
		if !ev.OccurredAt.IsZero() && ev.OccurredAt.Before(oldest) {
			return nil, fmt.Errorf("intake: event %d happened %s ago, over the %s accepted: %w",
				i, req.Now.Sub(ev.OccurredAt).Round(time.Second), h.cfg.MaxEventAge, webhook.ErrStaleTimestamp)
		}
		key := webhook.Key(req.Provider, req.Tenant, ev.DedupKey)
		if seen != nil {
			if seen[key] { // the same event twice in one body: one claim.
				continue
			}
			seen[key] = true
		}
		it := admitted{ev: ev, new: store.NewEvent{
			Key: key, Provider: req.Provider, Tenant: req.Tenant, EventType: ev.Type,
			OccurredAt: ev.OccurredAt, PayloadHash: ev.PayloadHash, Payload: ev.JSON,
			TraceID: meta.TraceID,
		}}
		if err := it.new.Prepare(); err != nil {
			return nil, fmt.Errorf("intake: event %d: %w", i, err)
		}
		items = append(items, it)
	}
	return items, nil
}

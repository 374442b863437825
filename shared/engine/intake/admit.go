package intake

// Admission: the delivery's events claimed and sent in waves within the
// budget, and the delivery's verdict.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
)

// admit claims every event concurrently, enqueues the new ones (and those
// it took over) in batches, and undoes the claims it could not enqueue or
// whose outcome it does not know.
//
// The promise it keeps: it returns nil (a 2xx) only when every event of the
// delivery has a message sent for it, by this delivery or an earlier one, or
// a record already past RECEIVED. A duplicate that finds the record RECEIVED
// inside the re-enqueue grace cannot know that yet, so it fails the delivery
// with 503; past the grace it takes the enqueue over. Any failure leaves the
// events so that a later retry of the same delivery enqueues them: a claim
// whose write may have been applied is undone by its claim id, and if the
// undo fails too, the retry takes the enqueue over once the grace has passed.
//
// A delivery of more than [waveEvents] events is admitted in waves, each
// claimed and sent before the next starts, and no wave starts that would
// not end within the budget: what one attempt hands off is on its way even
// when the budget cannot cover the whole delivery. Its progress is saved
// (see [store.Progress]) before a 503 answers it, so the platform's retry
// claims only what no attempt handed off yet: every retry does less than
// the one before, and a delivery of any size under the body limit is
// answered 200 in the end.
//
// The budget runs from budgetStart (the events parsed), but the first wave
// has a budget of its own from its start (see [Handler.firstWave]): an
// attempt whose preparation (the events checked, the delivery's progress
// read) took the claims' share of the budget on a starved CPU still claims
// and sends one wave, so every attempt makes progress.
func (h *Handler) admit(ctx context.Context, budgetStart time.Time, req *webhook.Request, meta Meta, events []webhook.Event) error {
	outer := ctx
	ctx, cancel := context.WithDeadline(ctx, budgetStart.Add(h.cfg.Budget))
	defer cancel()
	items, err := h.prepare(req, meta, events)
	if err != nil {
		return err
	}
	h.cfg.Metrics.Count(MetricReceived, len(items))

	start := h.cfg.Now()
	h.lookupHandedOff(items, start)
	var prog *progress
	if len(items) > waveEvents {
		// The progress read is bounded by the budget or, when less of it is
		// left, by a budget of its own: on a starved CPU, a read given up
		// would have the first wave claim again what earlier attempts
		// handed off, and make no progress.
		pctx, pcancel := context.WithDeadline(outer, later(budgetStart.Add(h.cfg.Budget), time.Now().Add(h.cfg.Budget)))
		prog = h.loadProgress(pctx, req, items)
		pcancel()
	}
	var out waveOutcome
	ran := h.runWaves(outer, ctx, items, start, &out)
	// This delivery's own hand-offs are settled (those of the waves it did
	// not run are not on their way): tell the duplicates that wait for
	// them, before waiting for others (so two deliveries that wait for each
	// other's events cannot wait forever).
	h.flights.land(items)
	out.inFlight += h.awaitFlights(ctx, items)
	left := 0
	for i := range items {
		if !items[i].onItsWay {
			left++
		}
	}
	if prog != nil && left > 0 {
		h.saveProgress(ctx, prog, items)
	}
	return h.verdict(&out, left, len(items), ran)
}

// runWaves admits items wave after wave under ctx (the delivery's budget,
// within outer, the invocation's context) and returns how many waves ran.
func (h *Handler) runWaves(outer, ctx context.Context, items []admitted, start time.Time, out *waveOutcome) int {
	// No claim starts in the budget's last quarter, kept for sending what
	// was claimed; no wave starts that would not end by then. (The budget
	// is wall-clock time, as ctx's deadline, whatever Config.Now says.)
	claimBy := h.claimBy(ctx)
	wctx := ctx // the context of the waves after the first
	// Waves after the first start only while the budget lasts, each sized
	// to end by claimBy at 1.5 × the slowest claim rate seen so far (a wave
	// of fewer than minWave events is not worth starting).
	var perEvent time.Duration
	ran := 0
	for from := 0; from < len(items); ran++ {
		n := waveEvents
		if ran > 0 {
			if out.failed() || perEvent <= 0 {
				break
			}
			n = min(n, int(time.Until(claimBy)/(perEvent*3/2)))
			if n < minWave {
				break
			}
		}
		to, claims := nextWave(items, from, n)
		t0 := time.Now()
		if ran == 0 {
			// The preparation does not count against the waves: those
			// after the first may start until three quarters of Budget
			// from the first wave's start (the invocation's deadline, less
			// an UndoTimeout, still bounds them).
			claimBy = later(claimBy, t0.Add(h.cfg.Budget-h.cfg.Budget/4))
			if d, ok := outer.Deadline(); ok && d.Add(-h.cfg.UndoTimeout).Before(claimBy) {
				claimBy = later(h.claimBy(ctx), d.Add(-h.cfg.UndoTimeout))
			}
			if d, _ := ctx.Deadline(); claimBy.Add(h.cfg.Budget / 4).After(d) {
				var cancel context.CancelFunc
				wctx, cancel = context.WithDeadline(outer, claimBy.Add(h.cfg.Budget/4))
				defer cancel()
			}
			h.firstWave(outer, ctx, items[from:to], start, out)
		} else {
			h.admitWave(wctx, items[from:to], start, claimBy, out)
		}
		if claims > 0 {
			perEvent = max(perEvent, time.Since(t0)/time.Duration(claims))
		}
		from = to
	}
	return ran
}

// verdict is the delivery's error, from what went wrong in its waves and
// the left events (not on their way) of the total; nil when every event
// is on its way.
func (h *Handler) verdict(out *waveOutcome, left, total, ran int) error {
	switch {
	case out.sendErr != nil:
		return out.sendErr
	case len(out.errs) > 0:
		err := errors.Join(out.errs...)
		if isClientError(err) {
			return fmt.Errorf("intake: claim: %w", err)
		}
		return fmt.Errorf("intake: claim: %w: %w", errUnavailable, err)
	case out.inFlight > 0:
		return fmt.Errorf("intake: %d event(s) still being handed off by another delivery: %w", out.inFlight, errUnavailable)
	case left > 0:
		h.cfg.Metrics.Count(MetricLeftForRetry, left)
		return fmt.Errorf("intake: %d of %d events left for a retry: the budget ran out after %d wave(s): %w",
			left, total, ran, errUnavailable)
	}
	return nil
}

// later returns the later of a and b.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// claimBy is when claims stop under ctx's deadline: no claim starts in
// the budget's last quarter, kept for sending what was claimed. (The
// budget is wall-clock time, as ctx's deadline, whatever Config.Now says.)
func (h *Handler) claimBy(ctx context.Context) time.Time {
	claimBy := time.Now().Add(h.cfg.Budget - h.cfg.Budget/4)
	if d, ok := ctx.Deadline(); ok && d.Before(claimBy.Add(h.cfg.Budget/4)) {
		claimBy = d.Add(-h.cfg.Budget / 4)
	}
	return claimBy
}

// firstWave admits the delivery's first wave on a budget of its own: twice
// Budget from the wave's start (its claims until a quarter of Budget before
// its end), capped by the invocation's deadline (the function's Timeout, 4 s
// on AWS) less an UndoTimeout kept for saving the progress after it, and
// never less than what is left of the delivery's budget. So an attempt
// claims and sends a wave whatever its preparation cost and however slow
// its claims: a 256 MB Lambda has a fraction of a core, and on a loaded CPU
// checking thousands of events and reading the delivery's progress could
// use up the claims' three quarters of the budget, leaving every claim
// skipped and the platform's retries, each as slow, with no progress.
//
// The price is the answer's time, not its correctness: the wave may end
// after the platform's timeout (LINE's 2 s), which then retries, and what
// the wave handed off is on its way and in the saved progress, so the
// retry does less. Claims cut by the wave's deadline are undone, as any
// claim whose context ended.
func (h *Handler) firstWave(outer, budgeted context.Context, items []admitted, start time.Time, out *waveOutcome) {
	own := time.Now().Add(2 * h.cfg.Budget)
	if d, ok := outer.Deadline(); ok && d.Add(-h.cfg.UndoTimeout).Before(own) {
		own = d.Add(-h.cfg.UndoTimeout)
	}
	if d, ok := budgeted.Deadline(); ok && !own.After(d) {
		h.admitWave(budgeted, items, start, h.claimBy(budgeted), out)
		return
	}
	ctx, cancel := context.WithDeadline(outer, own)
	defer cancel()
	h.admitWave(ctx, items, start, later(own.Add(-h.cfg.Budget/4), h.claimBy(budgeted)), out)
}

// waveOutcome gathers what went wrong in the waves of one delivery.
type waveOutcome struct {
	sendErr  error   // an SQS send failed
	errs     []error // claims or take-overs that failed
	inFlight int     // events another delivery may still be sending
}

// failed reports whether a dependency failed: no further wave starts.
func (o *waveOutcome) failed() bool { return o.sendErr != nil || len(o.errs) > 0 }

// admitWave claims items concurrently (none after claimBy: those are left
// for a retry), sends the new ones (and those it took over), and undoes the
// claims it could not send or whose outcome it does not know; it adds what
// went wrong to out.
func (h *Handler) admitWave(ctx context.Context, items []admitted, start, claimBy time.Time, out *waveOutcome) {
	h.claimWave(ctx, items, claimBy)
	w := h.sortWave(ctx, items, out)
	if len(w.envs) > 0 {
		h.sendWave(ctx, items, &w, start, out)
	}
	if len(w.undo) > 0 {
		h.undo(ctx, items, w.undo)
	}
	h.flights.land(items)
}

package compensate

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/hookwall/hookwall/shared/dispatch"
	"github.com/hookwall/hookwall/shared/internal/registry"
	"github.com/hookwall/hookwall/shared/obs"
	"github.com/hookwall/hookwall/shared/webhook"
)

// finish writes the attempt's outcome, fenced on the lease.
func (c *Compensator) finish(ctx context.Context, r *run, m dispatch.Message, acq webhook.Acquisition, nothing bool, herr error, res Result) Result {
	log, lease, env := r.log, r.lease, r.env
	if r.keep.Lost() {
		return c.leaseLost(ctx, r, res)
	}
	fctx, cancel := c.finishContext(ctx)
	defer cancel()
	now := c.cfg.Now()
	ev := &webhook.Outcome{Key: env.Key, Provider: env.Provider, Tenant: env.Tenant, Type: env.Type,
		ReceivedAt: env.ReceivedAt, TraceID: env.TraceID, Attempts: acq.Attempts, Compensations: lease.Attempt, At: now}
	res.Err = herr
	if herr == nil && !nothing {
		held, err := c.cfg.Store.Compensated(fctx, lease, now.Add(c.cfg.Retention))
		if err != nil {
			log.ErrorContext(ctx, "set compensated", slog.Any("error", err))
			res.Verdict, res.Err = Errored, err
			return res
		}
		if !held {
			return c.leaseLost(ctx, r, res)
		}
		c.cfg.Metrics.Count(MetricCompensated, 1)
		log.InfoContext(ctx, "event compensated", slog.String(obs.KeyStatus, webhook.StatusCompensated.String()),
			slog.Int("undone", len(r.undone)), slog.Int("skipped", len(r.skipped)))
		ev.Status = webhook.StatusCompensated
		res.Verdict, res.Ack, res.Event = Compensated, true, ev
		return res
	}
	if herr == nil && c.requeueable(acq.Status, lease.Attempt, env.ReceivedAt) {
		return c.requeue(ctx, fctx, r, acq, res)
	}
	var reason string
	switch {
	case herr == nil: // nothing to compensate
		reason = "nothing to compensate: " + orStatus(acq.LastError, acq.Status)
	case registry.IsPermanent(herr):
		reason = "compensation failed permanently: " + herr.Error()
	case lease.Attempt >= c.cfg.MaxAttempts:
		reason = fmt.Sprintf("compensation attempts exhausted (%d): %s", lease.Attempt, herr.Error())
	default:
		return c.retry(ctx, fctx, r, m, herr, res)
	}
	reason = webhook.CleanText(reason, maxLastError)
	held, err := c.cfg.Store.Dead(fctx, lease, reason, now.Add(c.cfg.Retention))
	if err != nil {
		log.ErrorContext(ctx, "set dead", slog.Any("error", err))
		res.Verdict, res.Err = Errored, err
		return res
	}
	if !held {
		return c.leaseLost(ctx, r, res)
	}
	c.cfg.Metrics.Count(MetricDead, 1)
	log.ErrorContext(ctx, "event dead", slog.String(obs.KeyStatus, webhook.StatusDead.String()),
		slog.String("reason", reason), slog.String("step", r.failed), slog.Int("undone", len(r.undone)))
	ev.Status, ev.LastError = webhook.StatusDead, reason
	res.Verdict, res.Ack, res.Event = Dead, true, ev
	return res
}

// requeueable reports whether a dead letter with nothing to compensate,
// whose record was from, whose compensation attempt this is and whose event
// was received at receivedAt, goes back to the main queue: the processor
// never finished it (it was not FAILED, nor being compensated already), it
// has not been requeued MaxRequeues times, and it is recent enough
// (RequeueWithin) that the outside still remembers its idempotency keys.
func (c *Compensator) requeueable(from webhook.Status, attempt int, receivedAt time.Time) bool {
	if c.cfg.Requeue == nil || attempt > c.cfg.MaxRequeues || c.cfg.Now().Sub(receivedAt) > c.cfg.RequeueWithin {
		return false
	}
	switch from {
	case webhook.StatusReceived, webhook.StatusRetry, webhook.StatusProcessing:
		return true
	}
	return false
}

// requeue makes the record RETRY and sends the event to the main queue
// again. If the send fails the dead letter is not acknowledged: it comes
// back, and so does the record's turn (the sweeper also re-enqueues a RETRY
// record left too long).
func (c *Compensator) requeue(ctx, fctx context.Context, r *run, acq webhook.Acquisition, res Result) Result {
	reason := webhook.CleanText(fmt.Sprintf("requeued by the compensator (%d of %d): the queue dead-lettered the message while the record was %s; %s",
		r.lease.Attempt, c.cfg.MaxRequeues, acq.Status, orStatus(acq.LastError, acq.Status)), maxLastError)
	held, err := c.cfg.Store.RequeueCompensation(fctx, r.lease, reason)
	if err != nil {
		r.log.ErrorContext(ctx, "requeue", slog.Any("error", err))
		res.Verdict, res.Err = Errored, err
		return res
	}
	if !held {
		return c.leaseLost(ctx, r, res)
	}
	if err := c.cfg.Requeue.Send(fctx, []webhook.Envelope{r.orig}); err != nil {
		r.log.ErrorContext(ctx, "requeue: send to the main queue; the dead letter comes back", slog.Any("error", err))
		res.Verdict, res.Err = Errored, fmt.Errorf("requeue %s: %w", r.lease.Key, err)
		return res
	}
	c.cfg.Metrics.Count(MetricRequeued, 1)
	r.log.WarnContext(ctx, "event requeued: the processor never finished it and there is nothing to compensate",
		slog.String(obs.KeyStatus, webhook.StatusRetry.String()), slog.String("reason", reason))
	res.Verdict, res.Ack = Requeued, true
	return res
}

// retry leaves the record COMPENSATING without a lease and hides the
// message for the backoff.
func (c *Compensator) retry(ctx, fctx context.Context, r *run, m dispatch.Message, herr error, res Result) Result {
	held, err := c.cfg.Store.RetryCompensation(fctx, r.lease, webhook.CleanText(herr.Error(), maxLastError))
	if err != nil {
		r.log.ErrorContext(ctx, "retry compensation", slog.Any("error", err))
		res.Verdict, res.Err = Errored, err
		return res
	}
	if !held {
		return c.leaseLost(ctx, r, res)
	}
	c.cfg.Metrics.Count(MetricCompensationRetried, 1)
	res.Verdict = Retried
	res.RetryAfter = dispatch.Backoff(r.lease.Attempt, c.cfg.RetryBase, c.cfg.RetryCap, c.cfg.Jitter)
	if err := c.cfg.Queue.ChangeVisibility(fctx, m.ReceiptHandle, res.RetryAfter); err != nil {
		r.log.WarnContext(ctx, "change visibility", slog.Any("error", err))
	}
	r.log.WarnContext(ctx, "compensation will be retried", slog.String(obs.KeyStatus, webhook.StatusCompensating.String()),
		slog.String("step", r.failed), slog.Duration("retry_after", res.RetryAfter), slog.Any("error", herr))
	return res
}

func (c *Compensator) leaseLost(ctx context.Context, r *run, res Result) Result {
	c.cfg.Metrics.Count(MetricLeaseLost, 1)
	r.log.WarnContext(ctx, "compensation lease lost; outcome discarded")
	res.Verdict, res.Event = LeaseLost, nil
	if res.Err == nil {
		res.Err = registry.ErrLeaseLost
	}
	return res
}

// orStatus is lastError, or what the record was when it has none (an event
// SQS redrove before any attempt failed).
func orStatus(lastError string, from webhook.Status) string {
	if lastError != "" {
		return lastError
	}
	return "record was " + from.String() + " with no error recorded"
}

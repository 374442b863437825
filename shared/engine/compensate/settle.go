package compensate

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/hookwall/hookwall/shared/base/obs"
	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/internal/kernel"
	"github.com/hookwall/hookwall/shared/internal/registry"
)

// Settle decides how the attempt ends, from the undos' error herr:
// COMPENSATED when every undo ran; with nothing to compensate, a requeue to
// the main queue for an event the processor never finished, else DEAD; DEAD
// on a permanent undo error or with the attempts exhausted; otherwise a
// retry with backoff.
func (r *run) Settle(_ context.Context, herr error) kernel.Settlement {
	a, cfg := r.a, &r.c.cfg
	if herr == nil && !r.nothing {
		return r.compensated()
	}
	if herr == nil && r.c.requeueable(a.Acq.Status, a.Lease.Attempt, a.Env.ReceivedAt, a.Now) {
		return r.requeue()
	}
	var reason string
	switch {
	case herr == nil: // nothing to compensate
		reason = "nothing to compensate: " + orStatus(a.Acq.LastError, a.Acq.Status)
	case registry.IsPermanent(herr):
		reason = "compensation failed permanently: " + herr.Error()
	case a.Lease.Attempt >= cfg.MaxAttempts:
		reason = fmt.Sprintf("compensation attempts exhausted (%d): %s", a.Lease.Attempt, herr.Error())
	default:
		return r.retry(herr)
	}
	return r.dead(webhook.CleanText(reason, maxLastError))
}

// outcome is the attempt's outcome event: Attempts counts the processor's
// attempts, Compensations the compensator's.
func (r *run) outcome(status webhook.Status, lastError string) *webhook.Outcome {
	ev := r.a.Outcome(status, lastError)
	ev.Attempts, ev.Compensations = r.a.Acq.Attempts, r.a.Lease.Attempt
	return ev
}

// compensated moves the record to COMPENSATED.
func (r *run) compensated() kernel.Settlement {
	a, cfg := r.a, &r.c.cfg
	return kernel.Settlement{Op: "set compensated",
		Write: func(ctx context.Context) (bool, error) {
			return cfg.Store.Compensated(ctx, a.Lease, a.Now.Add(cfg.Retention))
		},
		Verdict: Compensated, Ack: true, Event: r.outcome(webhook.StatusCompensated, ""),
		Then: func(ctx, _ context.Context, res kernel.Result) kernel.Result {
			cfg.Metrics.Count(MetricCompensated, 1)
			a.Log.InfoContext(ctx, "event compensated", slog.String(obs.KeyStatus, webhook.StatusCompensated.String()),
				slog.Int("undone", len(r.undone)), slog.Int("skipped", len(r.skipped)))
			return res
		}}
}

// dead moves the record to DEAD with reason.
func (r *run) dead(reason string) kernel.Settlement {
	a, cfg := r.a, &r.c.cfg
	return kernel.Settlement{Op: "set dead",
		Write: func(ctx context.Context) (bool, error) {
			return cfg.Store.Dead(ctx, a.Lease, reason, a.Now.Add(cfg.Retention))
		},
		Verdict: Dead, Ack: true, Event: r.outcome(webhook.StatusDead, reason),
		Then: func(ctx, _ context.Context, res kernel.Result) kernel.Result {
			cfg.Metrics.Count(MetricDead, 1)
			a.Log.ErrorContext(ctx, "event dead", slog.String(obs.KeyStatus, webhook.StatusDead.String()),
				slog.String("reason", reason), slog.String("step", r.failed), slog.Int("undone", len(r.undone)))
			return res
		}}
}

// requeueable reports whether a dead letter with nothing to compensate,
// whose record was from, whose compensation attempt this is and whose event
// was received at receivedAt, goes back to the main queue at now: the
// processor never finished it (it was not FAILED, nor being compensated
// already), it has not been requeued MaxRequeues times, and it is recent
// enough (RequeueWithin) that the outside still remembers its idempotency
// keys.
func (c *Compensator) requeueable(from webhook.Status, attempt int, receivedAt, now time.Time) bool {
	if c.cfg.Requeue == nil || attempt > c.cfg.MaxRequeues || now.Sub(receivedAt) > c.cfg.RequeueWithin {
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
func (r *run) requeue() kernel.Settlement {
	a, cfg := r.a, &r.c.cfg
	reason := webhook.CleanText(fmt.Sprintf("requeued by the compensator (%d of %d): the queue dead-lettered the message while the record was %s; %s",
		a.Lease.Attempt, cfg.MaxRequeues, a.Acq.Status, orStatus(a.Acq.LastError, a.Acq.Status)), maxLastError)
	return kernel.Settlement{Op: "requeue",
		Write: func(ctx context.Context) (bool, error) {
			return cfg.Store.RequeueCompensation(ctx, a.Lease, reason)
		},
		Verdict: Requeued, Ack: true,
		Then: func(ctx, fctx context.Context, res kernel.Result) kernel.Result {
			if err := cfg.Requeue.Send(fctx, []webhook.Envelope{r.orig}); err != nil {
				a.Log.ErrorContext(ctx, "requeue: send to the main queue; the dead letter comes back", slog.Any("error", err))
				res.Verdict, res.Ack, res.Err = kernel.Errored, false, fmt.Errorf("requeue %s: %w", a.Lease.Key, err)
				return res
			}
			cfg.Metrics.Count(MetricRequeued, 1)
			a.Log.WarnContext(ctx, "event requeued: the processor never finished it and there is nothing to compensate",
				slog.String(obs.KeyStatus, webhook.StatusRetry.String()), slog.String("reason", reason))
			return res
		}}
}

// retry leaves the record COMPENSATING without a lease; the kernel hides
// the message for the backoff.
func (r *run) retry(herr error) kernel.Settlement {
	a, cfg := r.a, &r.c.cfg
	return kernel.Settlement{Op: "retry compensation",
		Write: func(ctx context.Context) (bool, error) {
			return cfg.Store.RetryCompensation(ctx, a.Lease, webhook.CleanText(herr.Error(), maxLastError))
		},
		Verdict: kernel.Retried,
		Then: func(ctx, _ context.Context, res kernel.Result) kernel.Result {
			cfg.Metrics.Count(MetricCompensationRetried, 1)
			a.Log.WarnContext(ctx, "compensation will be retried", slog.String(obs.KeyStatus, webhook.StatusCompensating.String()),
				slog.String("step", r.failed), slog.Duration("retry_after", res.RetryAfter), slog.Any("error", herr))
			return res
		}}
}

// orStatus is lastError, or what the record was when it has none (an event
// SQS redrove before any attempt failed).
func orStatus(lastError string, from webhook.Status) string {
	if lastError != "" {
		return lastError
	}
	return "record was " + from.String() + " with no error recorded"
}

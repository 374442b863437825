package dispatch

import (
	"context"
	"log/slog"
	"time"

	"github.com/hookwall/hookwall/shared/internal/registry"
	"github.com/hookwall/hookwall/shared/obs"
	"github.com/hookwall/hookwall/shared/webhook"
)

// finish writes the attempt's outcome, fenced on the lease.
func (d *Dispatcher) finish(ctx context.Context, att *attempt, dv Message, regs []*registry.Entry, herr error, res Result) Result {
	log, lease, env := att.log, att.lease, att.env
	if att.keep.Lost() {
		return d.leaseLost(ctx, att, res)
	}
	fctx, cancel := d.finishContext(ctx)
	defer cancel()
	now := d.cfg.Now()
	ev := &webhook.Outcome{Key: env.Key, Provider: env.Provider, Tenant: env.Tenant, Type: env.Type,
		ReceivedAt: env.ReceivedAt, TraceID: env.TraceID, Attempts: lease.Attempt, At: now}
	res.Err = herr
	if herr == nil {
		held, err := d.cfg.Store.Complete(fctx, lease, now.Add(d.cfg.Retention))
		if err != nil {
			log.ErrorContext(ctx, "complete", slog.Any("error", err))
			res.Verdict, res.Err = Errored, err
			return res
		}
		if !held {
			return d.leaseLost(ctx, att, res)
		}
		if len(regs) > 0 {
			d.cfg.Metrics.Count(MetricSucceeded, 1)
		}
		d.endToEnd(env, now)
		log.InfoContext(ctx, "event succeeded", slog.String(obs.KeyStatus, webhook.StatusSucceeded.String()))
		ev.Status = webhook.StatusSucceeded
		res.Verdict, res.Ack, res.Event = Succeeded, true, ev
		return res
	}
	reason := lastError(herr)
	if registry.IsPermanent(herr) || lease.Attempt >= d.maxAttempts(att.failed, regs) {
		held, err := d.cfg.Store.Fail(fctx, lease, reason)
		if err != nil {
			log.ErrorContext(ctx, "fail", slog.Any("error", err))
			res.Verdict, res.Err = Errored, err
			return res
		}
		if !held {
			return d.leaseLost(ctx, att, res)
		}
		d.cfg.Metrics.Count(MetricFailed, 1)
		d.endToEnd(env, now)
		log.ErrorContext(ctx, "event failed", slog.String(obs.KeyStatus, webhook.StatusFailed.String()),
			slog.String("handler", att.failedName()), slog.Bool("permanent", registry.IsPermanent(herr)), slog.Any("error", herr))
		ev.Status, ev.LastError = webhook.StatusFailed, reason
		res.Verdict, res.Event = Failed, ev
		if err := d.cfg.DLQ.SendDeadLetter(fctx, env.Key, dv.Body, reason); err != nil {
			// The record is FAILED: the next delivery finds it so and dead-letters it.
			log.ErrorContext(ctx, "send to dead-letter queue", slog.Any("error", err))
			return res
		}
		res.Ack = true
		return res
	}
	held, err := d.cfg.Store.Retry(fctx, lease, reason)
	if err != nil {
		log.ErrorContext(ctx, "retry", slog.Any("error", err))
		res.Verdict, res.Err = Errored, err
		return res
	}
	if !held {
		return d.leaseLost(ctx, att, res)
	}
	d.cfg.Metrics.Count(MetricRetried, 1)
	res.Verdict = Retried
	res.RetryAfter = Backoff(lease.Attempt, d.cfg.RetryBase, d.cfg.RetryCap, d.cfg.Jitter)
	if err := d.cfg.Queue.ChangeVisibility(fctx, dv.ReceiptHandle, res.RetryAfter); err != nil {
		log.WarnContext(ctx, "change visibility", slog.Any("error", err))
	}
	log.WarnContext(ctx, "event will be retried", slog.String(obs.KeyStatus, webhook.StatusRetry.String()),
		slog.String("handler", att.failedName()), slog.Duration("retry_after", res.RetryAfter), slog.Any("error", herr))
	return res
}

func (d *Dispatcher) leaseLost(ctx context.Context, att *attempt, res Result) Result {
	d.cfg.Metrics.Count(MetricLeaseLost, 1)
	att.log.WarnContext(ctx, "lease lost; outcome discarded")
	res.Verdict, res.Event = LeaseLost, nil
	return res
}

func (d *Dispatcher) endToEnd(env webhook.Envelope, now time.Time) {
	if !env.ReceivedAt.IsZero() {
		d.cfg.Metrics.Duration(MetricEndToEndLatency, now.Sub(env.ReceivedAt))
	}
}

func (d *Dispatcher) maxAttempts(failed *registry.Entry, regs []*registry.Entry) int {
	if failed != nil && failed.MaxAttempts > 0 {
		return failed.MaxAttempts
	}
	if failed == nil && len(regs) == 0 {
		return 1
	}
	return d.cfg.MaxAttempts
}

func lastError(err error) string {
	return webhook.CleanText(err.Error(), maxLastError)
}

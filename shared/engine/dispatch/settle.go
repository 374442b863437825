package dispatch

import (
	"context"
	"errors"
	"log/slog"

	"github.com/hookwall/hookwall/shared/base/obs"
	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/internal/kernel"
	"github.com/hookwall/hookwall/shared/internal/registry"
	"github.com/hookwall/hookwall/shared/state/targets"
)

// Settle decides how the attempt ends, from the handlers' error herr:
// SUCCEEDED (Unhandled when no handler served the event), FAILED on a
// permanent error or with the attempts exhausted, otherwise RETRY with
// backoff.
func (t *attempt) Settle(_ context.Context, herr error) kernel.Settlement {
	if herr == nil {
		return t.complete()
	}
	if t.hold != nil && errors.Is(herr, errHeld) {
		return t.held()
	}
	reason := lastError(herr)
	if registry.IsPermanent(herr) || t.a.Lease.Attempt >= t.maxAttempts() {
		return t.fail(herr, reason)
	}
	return t.retry(herr, reason)
}

// complete moves the record to SUCCEEDED.
func (t *attempt) complete() kernel.Settlement {
	a, cfg := t.a, &t.d.cfg
	s := kernel.Settlement{Op: "complete",
		Write: func(ctx context.Context) (bool, error) {
			return t.j.Complete(ctx, t.lease(), a.Now.Add(cfg.Retention), cfg.Store.Complete)
		},
		Verdict: Unhandled, Ack: true,
		Then: func(ctx, _ context.Context, res Result) Result {
			if len(t.regs) > 0 {
				cfg.Metrics.Count(MetricSucceeded, 1)
			}
			t.endToEnd()
			a.Log.InfoContext(ctx, "event succeeded", slog.String(obs.KeyStatus, webhook.StatusSucceeded.String()))
			return res
		}}
	if len(t.regs) > 0 {
		s.Verdict, s.Event = Succeeded, a.Outcome(webhook.StatusSucceeded, "")
	}
	return s
}

// fail moves the record to FAILED with reason and sends the message to the
// dead-letter queue.
func (t *attempt) fail(herr error, reason string) kernel.Settlement {
	a, cfg := t.a, &t.d.cfg
	s := t.unsuccessful("fail", cfg.Store.Fail, reason, Failed, MetricFailed, func(ctx, fctx context.Context, res Result) Result {
		t.endToEnd()
		a.Log.ErrorContext(ctx, "event failed", slog.String(obs.KeyStatus, webhook.StatusFailed.String()),
			slog.String("handler", t.failedName()), slog.Bool("permanent", registry.IsPermanent(herr)), slog.Any("error", herr))
		if !registry.IsPermanent(herr) {
			target := ""
			if t.failed != nil {
				target = t.failed.TargetOf(a.Env.Tenant)
			}
			t.d.publishOps(fctx, a.Log, Op{Kind: OpAttemptExhausted, Target: target, Key: a.Env.Key, Provider: a.Env.Provider,
				Tenant: a.Env.Tenant, Reason: reason, Count: a.Lease.Attempt, At: a.Now})
		}
		if err := cfg.DLQ.SendDeadLetter(fctx, a.Env.Key, a.Message.Body, reason); err != nil {
			// The record is FAILED: the next delivery finds it so and dead-letters it.
			a.Log.ErrorContext(ctx, "send to dead-letter queue", slog.Any("error", err))
			return res
		}
		res.Ack = true
		return res
	})
	s.Event = a.Outcome(webhook.StatusFailed, reason)
	return s
}

// held moves the record to HELD: the gate held the next handler run, so
// no call was made and the attempt is given back (or the attempt made the
// call that opened the breaker, given back once per event); the message is
// acknowledged (the drain or the sweeper sends the event again).
func (t *attempt) held() kernel.Settlement {
	a, cfg, h := t.a, &t.d.cfg, t.hold
	recheck := h.adm.RecheckAt
	if !recheck.After(a.Now) {
		recheck = a.Now.Add(DefaultRecheck)
	}
	hold := webhook.Hold{Reason: h.adm.Reason, On: heldOn(h.adm.On), Target: h.target, RecheckAt: recheck,
		RetainUntil: a.Now.Add(cfg.Retention), GiveBack: h.givesBack}
	return kernel.Settlement{Op: "hold",
		Write: func(ctx context.Context) (bool, error) {
			return cfg.Store.Hold(ctx, t.lease(), hold)
		},
		Verdict: Held, Ack: true,
		Then: func(ctx, _ context.Context, res Result) Result {
			cfg.Metrics.Count(MetricHeld, 1)
			a.Log.InfoContext(ctx, "event held", slog.String(obs.KeyStatus, webhook.StatusHeld.String()),
				slog.String("handler", h.sub.Handler), slog.String("target", h.sub.Target), slog.String("held_on", hold.On),
				slog.String("reason", hold.Reason), slog.Time("recheck_at", recheck))
			return res
		}}
}

// retry moves the record to RETRY with reason; the kernel hides the message
// for the backoff.
func (t *attempt) retry(herr error, reason string) kernel.Settlement {
	a, cfg := t.a, &t.d.cfg
	return t.unsuccessful("retry", cfg.Store.Retry, reason, Retried, MetricRetried, func(ctx, _ context.Context, res Result) Result {
		a.Log.WarnContext(ctx, "event will be retried", slog.String(obs.KeyStatus, webhook.StatusRetry.String()),
			slog.String("handler", t.failedName()), slog.Duration("retry_after", res.RetryAfter), slog.Any("error", herr))
		return res
	})
}

// unsuccessful is the settlement named op of an attempt whose handlers
// failed: write (the store's Fail or Retry, fenced by the lease) records
// reason, then the verdict v is counted as metric and then finishes.
func (t *attempt) unsuccessful(op string, write func(context.Context, webhook.Lease, string) (bool, error), reason string,
	v Verdict, metric string, then func(ctx, fctx context.Context, res Result) Result) kernel.Settlement {
	cfg := &t.d.cfg
	return kernel.Settlement{Op: op,
		Write: func(ctx context.Context) (bool, error) {
			return write(ctx, t.lease(), reason)
		},
		Verdict: v,
		Then: func(ctx, fctx context.Context, res Result) Result {
			cfg.Metrics.Count(metric, 1)
			return then(ctx, fctx, res)
		}}
}

// endToEnd records the time from the receiver's acceptance to the outcome.
func (t *attempt) endToEnd() {
	if env := t.a.Env; !env.ReceivedAt.IsZero() {
		t.d.cfg.Metrics.Duration(MetricEndToEndLatency, t.a.Now.Sub(env.ReceivedAt))
	}
}

// maxAttempts is the attempt limit of the handler that failed: its own, the
// configured one, or 1 for an event no handler serves.
func (t *attempt) maxAttempts() int {
	if t.failed != nil && t.failed.MaxAttempts > 0 {
		return t.failed.MaxAttempts
	}
	if t.failed == nil && len(t.regs) == 0 {
		return 1
	}
	return t.d.cfg.MaxAttempts
}

func lastError(err error) string {
	return webhook.CleanText(err.Error(), maxLastError)
}

// heldOn is the record's heldOn for the scope an event is held on ("" for
// none).
func heldOn(sc targets.Scope) string {
	if sc.IsZero() {
		return ""
	}
	return sc.String()
}

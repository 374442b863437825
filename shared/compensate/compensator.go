package compensate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/hookwall/hookwall/shared/dispatch"
	"github.com/hookwall/hookwall/shared/internal/fanout"
	"github.com/hookwall/hookwall/shared/lease"
	"github.com/hookwall/hookwall/shared/obs"
	"github.com/hookwall/hookwall/shared/webhook"
)

// Compensator handles dead-letter messages. It is safe for concurrent use;
// one message may be delivered to it many times concurrently.
type Compensator struct {
	cfg Config
}

// New returns the Compensator described by cfg.
func New(cfg Config) (*Compensator, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.setDefaults()
	return &Compensator{cfg: cfg}, nil
}

// Compensate handles one dead-letter message and publishes its outcome event.
func (c *Compensator) Compensate(ctx context.Context, m dispatch.Message) Result {
	res := c.compensate(ctx, m)
	if res.Event != nil {
		c.publish(ctx, []webhook.Outcome{*res.Event})
	}
	return res
}

// CompensateBatch handles messages with at most concurrency at a time
// (concurrency < 1 means 1), publishes their outcome events in one call, and
// returns the results in the order of ms.
func (c *Compensator) CompensateBatch(ctx context.Context, ms []dispatch.Message, concurrency int) []Result {
	results := fanout.Map(ms, concurrency, func(m dispatch.Message) Result { return c.compensate(ctx, m) })
	var evs []webhook.Outcome
	for _, r := range results {
		if r.Event != nil {
			evs = append(evs, *r.Event)
		}
	}
	c.publish(ctx, evs)
	return results
}

func (c *Compensator) publish(ctx context.Context, evs []webhook.Outcome) {
	if c.cfg.Publisher == nil || len(evs) == 0 {
		return
	}
	ctx, cancel := c.finishContext(ctx)
	defer cancel()
	if err := c.cfg.Publisher.Publish(ctx, evs); err != nil {
		c.cfg.Metrics.Count(MetricPublishFailed, 1)
		c.cfg.Logger.ErrorContext(ctx, "publish outcome events", slog.Int("events", len(evs)), slog.Any("error", err))
	}
}

// finishContext returns a context for the closing writes: not cancelled with
// ctx, bounded by FinishReserve (at least one second).
func (c *Compensator) finishContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return lease.FinishContext(ctx, c.cfg.FinishReserve)
}

// leaseUntil is now + LeaseDuration, never past ctx's deadline.
func (c *Compensator) leaseUntil(ctx context.Context) time.Time {
	return lease.Until(ctx, c.cfg.Now(), c.cfg.LeaseDuration)
}

func (c *Compensator) compensate(ctx context.Context, m dispatch.Message) Result {
	start := c.cfg.Now()
	defer func() { c.cfg.Metrics.Duration(MetricCompensationLatency, c.cfg.Now().Sub(start)) }()
	res := Result{MessageID: m.MessageID}
	var env webhook.Envelope
	if err := json.Unmarshal(m.Body, &env); err != nil || env.Key == "" {
		if err == nil {
			err = errors.New("missing key")
		}
		return c.malformed(ctx, m, res, err)
	}
	res.Key = env.Key
	log := c.cfg.Logger.With(slog.String(obs.KeyEventKey, env.Key), slog.String(obs.KeyProvider, env.Provider),
		slog.String(obs.KeyTenant, env.Tenant), slog.String(obs.KeyEventType, env.Type))
	if env.TraceID != "" {
		log = log.With(slog.String(obs.KeyTraceID, env.TraceID))
	}
	acq, err := c.cfg.Store.AcquireCompensation(ctx, env.Key, c.cfg.NewOwner(), c.leaseUntil(ctx))
	if err != nil {
		log.ErrorContext(ctx, "acquire compensation lease", slog.Any("error", err))
		res.Verdict, res.Err = Errored, err
		return res
	}
	res.From = acq.Status
	switch acq.Outcome {
	case webhook.Acquired:
	case webhook.AcquireDone:
		c.cfg.Metrics.Count(MetricDuplicateDelivery, 1)
		log.InfoContext(ctx, "record already terminal; dead letter acknowledged", slog.String(obs.KeyStatus, acq.Status.String()))
		res.Verdict, res.Ack = AlreadyDone, true
		return res
	case webhook.AcquireBusy:
		c.cfg.Metrics.Count(MetricLeaseBusy, 1)
		res.Verdict = Busy
		res.RetryAfter = acq.RetryAfter + time.Second
		if err := c.cfg.Queue.ChangeVisibility(ctx, m.ReceiptHandle, res.RetryAfter); err != nil {
			log.WarnContext(ctx, "change visibility", slog.Any("error", err))
		}
		log.InfoContext(ctx, "lease held by another worker; dead letter comes back", slog.String(obs.KeyStatus, acq.Status.String()),
			slog.Duration("retry_after", res.RetryAfter))
		return res
	case webhook.AcquireMissing:
		c.cfg.Metrics.Count(MetricMissing, 1)
		log.WarnContext(ctx, "no live record for the dead letter; acknowledged")
		res.Verdict, res.Ack = Absent, true
		return res
	default:
		res.Verdict, res.Err = Errored, fmt.Errorf("compensate: acquire %s: unexpected outcome %s", env.Key, acq.Outcome)
		log.ErrorContext(ctx, "acquire compensation lease", slog.Any("error", res.Err))
		return res
	}

	orig := env // as the receiver sent it, for a requeue
	if env.PayloadInRecord || len(env.Payload) == 0 {
		env.Payload, env.PayloadInRecord = acq.Payload, false
	}
	lease := acq.Lease
	res.Attempt = lease.Attempt
	log = log.With(slog.Int("compensation", lease.Attempt), slog.String("from", acq.Status.String()))
	r := &run{c: c, lease: lease, env: env, orig: orig, log: log}
	nothing, herr := r.run(ctx)
	res.Undone, res.Skipped = r.undone, r.skipped
	return c.finish(ctx, r, m, acq, nothing, herr, res)
}

// malformed keeps a message that is not an envelope on the queue, hidden
// for the longest visibility timeout, so that an operator finds it (it has
// no key, so there is no record to act on), and counts it.
func (c *Compensator) malformed(ctx context.Context, m dispatch.Message, res Result, err error) Result {
	c.cfg.Metrics.Count(MetricMalformed, 1)
	res.Verdict, res.Err = Malformed, fmt.Errorf("malformed dead letter: %w", err)
	res.RetryAfter = webhook.MaxQueueDelay
	c.cfg.Logger.ErrorContext(ctx, "malformed dead letter; kept on the queue for an operator",
		slog.String("message_id", m.MessageID), slog.Int("bytes", len(m.Body)), slog.Any("error", err))
	if err := c.cfg.Queue.ChangeVisibility(ctx, m.ReceiptHandle, res.RetryAfter); err != nil {
		c.cfg.Logger.WarnContext(ctx, "change visibility", slog.Any("error", err))
	}
	return res
}

package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/hookwall/hookwall/shared/internal/fanout"
	"github.com/hookwall/hookwall/shared/internal/registry"
	"github.com/hookwall/hookwall/shared/lease"
	"github.com/hookwall/hookwall/shared/obs"
	"github.com/hookwall/hookwall/shared/webhook"
)

// Dispatcher processes queue deliveries. It is safe for concurrent use; one
// envelope may be delivered to it many times concurrently.
type Dispatcher struct {
	cfg       Config
	transport http.RoundTripper
}

// New returns the Dispatcher described by cfg.
func New(cfg Config) (*Dispatcher, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.setDefaults()
	return &Dispatcher{cfg: cfg, transport: cfg.Transport}, nil
}

// Process processes one delivery and publishes its outcome event.
func (d *Dispatcher) Process(ctx context.Context, dv Message) Result {
	res := d.process(ctx, dv)
	if res.Event != nil {
		d.publish(ctx, []webhook.Outcome{*res.Event})
	}
	return res
}

// ProcessBatch processes deliveries with at most concurrency at a time
// (concurrency < 1 means 1), publishes their outcome events in one call, and
// returns the results in the order of ds.
func (d *Dispatcher) ProcessBatch(ctx context.Context, ds []Message, concurrency int) []Result {
	results := fanout.Map(ds, concurrency, func(dv Message) Result { return d.process(ctx, dv) })
	var evs []webhook.Outcome
	for _, r := range results {
		if r.Event != nil {
			evs = append(evs, *r.Event)
		}
	}
	d.publish(ctx, evs)
	return results
}

func (d *Dispatcher) publish(ctx context.Context, evs []webhook.Outcome) {
	if d.cfg.Publisher == nil || len(evs) == 0 {
		return
	}
	ctx, cancel := d.finishContext(ctx)
	defer cancel()
	if err := d.cfg.Publisher.Publish(ctx, evs); err != nil {
		d.cfg.Metrics.Count(MetricPublishFailed, 1)
		d.cfg.Logger.ErrorContext(ctx, "publish outcome events", slog.Int("events", len(evs)), slog.Any("error", err))
	}
}

// finishContext returns a context for the closing writes: not cancelled with
// ctx, bounded by FinishReserve (at least one second).
func (d *Dispatcher) finishContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return lease.FinishContext(ctx, d.cfg.FinishReserve)
}

// leaseUntil is now + LeaseDuration, never past ctx's deadline.
func (d *Dispatcher) leaseUntil(ctx context.Context) time.Time {
	return lease.Until(ctx, d.cfg.Now(), d.cfg.LeaseDuration)
}

func (d *Dispatcher) process(ctx context.Context, dv Message) Result {
	start := d.cfg.Now()
	res := Result{MessageID: dv.MessageID}
	var env webhook.Envelope
	if err := json.Unmarshal(dv.Body, &env); err != nil || env.Key == "" || env.Provider == "" || env.Type == "" {
		if err == nil {
			err = errors.New("missing key, provider or type")
		}
		return d.malformed(ctx, dv, res, err)
	}
	res.Key = env.Key
	log := d.cfg.Logger.With(slog.String(obs.KeyEventKey, env.Key), slog.String(obs.KeyProvider, env.Provider),
		slog.String(obs.KeyTenant, env.Tenant), slog.String(obs.KeyEventType, env.Type))
	if env.TraceID != "" {
		log = log.With(slog.String(obs.KeyTraceID, env.TraceID))
	}
	acq, err := d.cfg.Store.Acquire(ctx, env.Key, d.cfg.NewOwner(), d.leaseUntil(ctx))
	if err != nil {
		log.ErrorContext(ctx, "acquire lease", slog.Any("error", err))
		res.Verdict, res.Err = Errored, err
		return res
	}
	switch acq.Outcome {
	case webhook.Acquired:
	case webhook.AcquireDone:
		d.cfg.Metrics.Count(MetricDuplicateDelivery, 1)
		log.InfoContext(ctx, "duplicate delivery", slog.String(obs.KeyStatus, acq.Status.String()))
		res.Verdict, res.Ack = Duplicate, true
		return res
	case webhook.AcquireBusy:
		d.cfg.Metrics.Count(MetricLeaseBusy, 1)
		res.Verdict = BusyElsewhere
		res.RetryAfter = acq.RetryAfter + time.Second
		if err := d.cfg.Queue.ChangeVisibility(ctx, dv.ReceiptHandle, res.RetryAfter); err != nil {
			log.WarnContext(ctx, "change visibility", slog.Any("error", err))
		}
		log.InfoContext(ctx, "lease held by another worker", slog.Duration("retry_after", res.RetryAfter))
		return res
	case webhook.AcquireMissing:
		d.cfg.Metrics.Count(MetricMissing, 1)
		log.WarnContext(ctx, "no live record for the event; acknowledged")
		res.Verdict, res.Ack = Absent, true
		return res
	case webhook.AcquireFailedState:
		res.Err = fmt.Errorf("record %s: %s", acq.Status, acq.LastError)
		if err := d.cfg.DLQ.SendDeadLetter(ctx, env.Key, dv.Body, res.Err.Error()); err != nil {
			log.ErrorContext(ctx, "send to dead-letter queue", slog.Any("error", err))
			res.Verdict = Errored
			return res
		}
		res.Verdict, res.Ack = DeadLettered, true
		return res
	default:
		res.Verdict, res.Err = Errored, fmt.Errorf("unknown acquire outcome %d", acq.Outcome)
		return res
	}

	var loadErr error
	if env.PayloadInRecord {
		payload := acq.Payload
		if len(payload) == 0 {
			if pl, ok := d.cfg.Store.(PayloadLoader); ok {
				if payload, err = pl.LoadPayload(ctx, env.Key); err != nil {
					// The lease is ours: the attempt fails, to be retried.
					loadErr = fmt.Errorf("load the payload from the table: %w", err)
					log.ErrorContext(ctx, "load payload", slog.Any("error", err))
				}
			}
		}
		env.Payload, env.PayloadInRecord = payload, false
	}
	lease := acq.Lease
	res.Attempt = lease.Attempt
	d.cfg.Metrics.Count(MetricClaimed, 1)
	log = log.With(slog.Int(obs.KeyAttempt, lease.Attempt))
	att := &attempt{d: d, lease: lease, env: env, log: log}
	regs := (*registry.Table)(d.cfg.Registry).Match(env.Provider, env.Tenant, env.Type)
	var herr error
	if loadErr != nil {
		herr = loadErr
	} else if len(regs) == 0 {
		d.cfg.Metrics.Count(MetricUnhandled, 1)
		log.WarnContext(ctx, "no handler for the event type")
		if d.cfg.UnhandledToDLQ {
			herr = registry.Permanent(fmt.Errorf("no handler for %s/%s", env.Provider, env.Type))
		}
	} else {
		herr = att.run(ctx, regs)
	}
	res = d.finish(ctx, att, dv, regs, herr, res)
	if len(regs) == 0 && res.Verdict == Succeeded {
		res.Verdict, res.Event = Unhandled, nil
	}
	d.cfg.Metrics.Duration(MetricProcessingLatency, d.cfg.Now().Sub(start))
	return res
}

func (d *Dispatcher) malformed(ctx context.Context, dv Message, res Result, err error) Result {
	d.cfg.Metrics.Count(MetricMalformed, 1)
	reason := "malformed envelope: " + err.Error()
	d.cfg.Logger.ErrorContext(ctx, "malformed message", slog.String("message_id", dv.MessageID), slog.Any("error", err))
	res.Err = errors.New(reason)
	if err := d.cfg.DLQ.SendDeadLetter(ctx, "", dv.Body, reason); err != nil {
		d.cfg.Logger.ErrorContext(ctx, "send to dead-letter queue", slog.Any("error", err))
		res.Verdict = Errored
		return res
	}
	res.Verdict, res.Ack = Malformed, true
	return res
}

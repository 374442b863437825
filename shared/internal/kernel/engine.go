package kernel

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/hookwall/hookwall/shared/base/obs"
	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/internal/fanout"
)

// Metric names (EMF, PascalCase) the kernel records for every engine.
const (
	// MetricDuplicateDelivery counts messages whose record was terminal.
	MetricDuplicateDelivery = "DuplicateDelivery"
	// MetricLeaseBusy counts messages whose record had a live lease.
	MetricLeaseBusy = "LeaseBusy"
	// MetricMissing counts messages whose record is gone.
	MetricMissing = "Missing"
	// MetricMalformed counts messages that are not an envelope.
	MetricMalformed = "Malformed"
	// MetricLeaseLost counts attempts whose lease was taken over.
	MetricLeaseLost = "LeaseLost"
	// MetricPublishFailed counts failed outcome publications.
	MetricPublishFailed = "PublishFailed"
)

// Engine runs a [Phase] under its [Leases]. It is safe for concurrent use;
// one message may be delivered to it many times concurrently. An engine
// (dispatch.Dispatcher, compensate.Compensator) embeds it: its Handle and
// Batch are the engine's.
type Engine struct {
	cfg    Config
	leases Leases
	phase  Phase
	names  Names
}

// New returns the Engine running phase under leases with cfg (validated by
// the caller: [Config.Validate]), logging and counting under names. It sets
// cfg's zero fields to their defaults ([Config.SetDefaults]), in place, so
// that the engine that owns cfg reads the values the kernel uses.
func New(cfg *Config, leases Leases, phase Phase, names Names) *Engine {
	cfg.SetDefaults()
	return &Engine{cfg: *cfg, leases: leases, phase: phase, names: names}
}

// Handle handles one message and publishes its outcome event.
func (e *Engine) Handle(ctx context.Context, m Message) Result {
	res := e.handle(ctx, m)
	if res.Event != nil {
		e.publish(ctx, []webhook.Outcome{*res.Event})
	}
	return res
}

// Batch handles messages with at most concurrency at a time (concurrency <
// 1 means 1), starting their groups (tenants) in turn (fanout.Fair: one
// tenant's messages do not wait behind another's in a batch), publishes
// their outcome events in one call, and returns the results in the order
// of ms.
func (e *Engine) Batch(ctx context.Context, ms []Message, concurrency int) []Result {
	groups := make([]string, len(ms))
	for i, m := range ms {
		groups[i] = m.Group
	}
	order := fanout.Fair(groups)
	started := fanout.Map(order, concurrency, func(i int) Result { return e.handle(ctx, ms[i]) })
	results := make([]Result, len(ms))
	for j, i := range order {
		results[i] = started[j]
	}
	var evs []webhook.Outcome
	for _, r := range results {
		if r.Event != nil {
			evs = append(evs, *r.Event)
		}
	}
	e.publish(ctx, evs)
	return results
}

// publish publishes the events of evs that the configured class of outcome
// events includes.
func (e *Engine) publish(ctx context.Context, evs []webhook.Outcome) {
	if e.cfg.Publisher == nil {
		return
	}
	evs = slices.DeleteFunc(evs, func(ev webhook.Outcome) bool { return !e.cfg.Outcomes.Publishes(ev.Status) })
	if len(evs) == 0 {
		return
	}
	ctx, cancel := FinishContext(ctx, e.cfg.FinishReserve)
	defer cancel()
	if err := e.cfg.Publisher.Publish(ctx, evs); err != nil {
		e.cfg.Metrics.Count(MetricPublishFailed, 1)
		e.cfg.Logger.ErrorContext(ctx, "publish outcome events", slog.Int("events", len(evs)), slog.Any("error", err))
	}
}

// leaseUntil is now + LeaseDuration, never past ctx's deadline.
func (e *Engine) leaseUntil(ctx context.Context) time.Time {
	return Until(ctx, e.cfg.Now(), e.cfg.LeaseDuration)
}

func (e *Engine) handle(ctx context.Context, m Message) Result {
	start := e.cfg.Now()
	if e.names.MessageLatency != "" {
		defer func() { e.cfg.Metrics.Duration(e.names.MessageLatency, e.cfg.Now().Sub(start)) }()
	}
	res := Result{MessageID: m.MessageID}
	var env webhook.Envelope
	err := json.Unmarshal(m.Body, &env)
	if err == nil {
		err = e.phase.Check(env)
	}
	if err != nil {
		e.cfg.Metrics.Count(MetricMalformed, 1)
		return e.phase.Malformed(ctx, m, err, res)
	}
	res.Key = env.Key
	log := e.cfg.Logger.With(slog.String(obs.KeyEventKey, env.Key), slog.String(obs.KeyProvider, env.Provider),
		slog.String(obs.KeyTenant, env.Tenant), slog.String(obs.KeyEventType, env.Type))
	if env.TraceID != "" {
		log = log.With(slog.String(obs.KeyTraceID, env.TraceID))
	}
	acq, err := e.leases.Acquire(ctx, env.Key, env.Generation, e.cfg.NewOwner(), e.leaseUntil(ctx))
	if err != nil {
		log.ErrorContext(ctx, e.names.Acquire, slog.Any("error", err))
		res.Verdict, res.Err = Errored, err
		return res
	}
	res.From = acq.Status
	a := &Attempt{Message: m, Env: env, Acq: acq, Lease: acq.Lease, Log: log, e: e}
	if acq.Outcome != webhook.Acquired {
		return e.unacquired(ctx, a, res)
	}
	res.Attempt = acq.Lease.Attempt
	task := e.phase.Begin(ctx, a)
	herr := a.run(ctx, task, &res)
	res = e.settle(ctx, a, task, herr, res)
	if e.names.AttemptLatency != "" {
		e.cfg.Metrics.Duration(e.names.AttemptLatency, e.cfg.Now().Sub(start))
	}
	return res
}

// unacquired is the acquire switch for the outcomes but Acquired.
func (e *Engine) unacquired(ctx context.Context, a *Attempt, res Result) Result {
	acq, log := a.Acq, a.Log
	switch acq.Outcome {
	case webhook.AcquireDone:
		e.cfg.Metrics.Count(MetricDuplicateDelivery, 1)
		log.InfoContext(ctx, e.names.Duplicate, slog.String(obs.KeyStatus, acq.Status.String()))
		res.Verdict, res.Ack = Duplicate, true
		return res
	case webhook.AcquireBusy:
		e.cfg.Metrics.Count(MetricLeaseBusy, 1)
		res.Verdict = Busy
		res.RetryAfter = acq.RetryAfter + time.Second
		if err := e.cfg.Queue.ChangeVisibility(ctx, a.Message.ReceiptHandle, res.RetryAfter); err != nil {
			log.WarnContext(ctx, "change visibility", slog.Any("error", err))
		}
		log.InfoContext(ctx, e.names.Busy, slog.String(obs.KeyStatus, acq.Status.String()), slog.Duration("retry_after", res.RetryAfter))
		return res
	case webhook.AcquireHeld:
		// The drain (or the sweeper) sends the event again once released.
		log.InfoContext(ctx, "record held; acknowledged", slog.String(obs.KeyStatus, acq.Status.String()))
		res.Verdict, res.Ack = Held, true
		return res
	case webhook.AcquireStale:
		// The record lives a newer life (a replay or recovery) whose own
		// message runs it: this one is left, whatever the record's status.
		if e.names.StaleMetric != "" {
			e.cfg.Metrics.Count(e.names.StaleMetric, 1)
		}
		msg := e.names.Stale
		if msg == "" {
			msg = "stale message (an older generation than the record's); acknowledged"
		}
		log.WarnContext(ctx, msg, slog.String(obs.KeyStatus, acq.Status.String()),
			slog.Int64("message_generation", a.Env.Generation), slog.Int64("record_generation", acq.Generation))
		res.Verdict, res.Ack = Stale, true
		return res
	case webhook.AcquireMissing:
		e.cfg.Metrics.Count(MetricMissing, 1)
		log.WarnContext(ctx, e.names.Missing)
		res.Verdict, res.Ack = Absent, true
		return res
	}
	if r, ok := e.phase.Refused(ctx, a, res); ok {
		return r
	}
	res.Verdict, res.Err = Errored, fmt.Errorf("%s: acquire %s: unexpected outcome %s", e.names.Package, a.Env.Key, acq.Outcome)
	log.ErrorContext(ctx, e.names.Acquire, slog.Any("error", res.Err))
	return res
}

// settle ends the attempt, its outcome written fenced on the lease.
func (e *Engine) settle(ctx context.Context, a *Attempt, task Task, herr error, res Result) Result {
	if a.Lost() {
		return e.leaseLost(ctx, a, res)
	}
	fctx, cancel := FinishContext(ctx, e.cfg.FinishReserve)
	defer cancel()
	a.Now = e.cfg.Now()
	res.Err = herr
	s := task.Settle(ctx, herr)
	held, err := s.Write(fctx)
	if err != nil {
		a.Log.ErrorContext(ctx, s.Op, slog.Any("error", err))
		res.Verdict, res.Err = Errored, err
		return res
	}
	if !held {
		return e.leaseLost(ctx, a, res)
	}
	res.Verdict, res.Ack, res.Event = s.Verdict, s.Ack, s.Event
	if s.Verdict == Retried {
		res.RetryAfter = Backoff(a.Lease.Attempt, e.cfg.RetryBase, e.cfg.RetryCap, e.cfg.Jitter)
		if err := e.cfg.Queue.ChangeVisibility(fctx, a.Message.ReceiptHandle, res.RetryAfter); err != nil {
			a.Log.WarnContext(ctx, "change visibility", slog.Any("error", err))
		}
	}
	if s.Then != nil {
		res = s.Then(ctx, fctx, res)
	}
	return res
}

// leaseLost discards the attempt's outcome: another worker owns the event.
func (e *Engine) leaseLost(ctx context.Context, a *Attempt, res Result) Result {
	e.cfg.Metrics.Count(MetricLeaseLost, 1)
	a.Log.WarnContext(ctx, e.names.LeaseLost)
	res.Verdict, res.Event = LeaseLost, nil
	if res.Err == nil {
		res.Err = errLeaseLost
	}
	return res
}

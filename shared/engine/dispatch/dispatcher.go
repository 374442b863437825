package dispatch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/hookwall/hookwall/shared/base/obs"
	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/internal/kernel"
	"github.com/hookwall/hookwall/shared/internal/registry"
)

// Dispatcher processes queue deliveries: the processing phase on the
// leased-attempt kernel, whose Handle processes one delivery and publishes
// its outcome event, and whose Batch processes deliveries with at most
// concurrency at a time (concurrency < 1 means 1), publishes their outcome
// events in one call, and returns the results in their order. It is safe
// for concurrent use; one envelope may be delivered to it many times
// concurrently.
type Dispatcher struct {
	*kernel.Engine
	cfg Config
}

// phaseNames are the processor's log messages and metrics where the kernel
// acts for it.
var phaseNames = kernel.Names{Package: "dispatch", Acquire: "acquire lease", Duplicate: "duplicate delivery",
	Busy: "lease held by another worker", Missing: "no live record for the event; acknowledged",
	LeaseLost: "lease lost; outcome discarded", Panicked: "handler panicked", AttemptLatency: MetricProcessingLatency,
	Stale:       "stale message (an older generation than the record's: the event was replayed or recovered since); acknowledged, not run",
	StaleMetric: MetricStaleMessages}

// New returns the Dispatcher described by cfg.
func New(cfg Config) (*Dispatcher, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	d := &Dispatcher{cfg: cfg}
	d.Engine = kernel.New(&d.cfg.Kernel, leases{cfg.Store}, phase{d}, phaseNames)
	return d, nil
}

// leases are the processing lease's calls on the Store.
type leases struct{ Store }

// Acquire takes the processing lease for a message of generation gen.
func (s leases) Acquire(ctx context.Context, key string, gen int64, owner string, until time.Time) (webhook.Acquisition, error) {
	return s.AcquireGeneration(ctx, key, gen, owner, until)
}

// phase is the processor's side of the kernel: its checks and its attempts
// ([attempt]); its leases are the Store's ([leases]).
type phase struct{ *Dispatcher }

// Check requires the key, the provider and the type: what the handlers are
// matched by.
func (phase) Check(env webhook.Envelope) error {
	if env.Key == "" || env.Provider == "" || env.Type == "" {
		return errors.New("missing key, provider or type")
	}
	return nil
}

// Malformed sends a message that is not an envelope to the dead-letter
// queue.
func (p phase) Malformed(ctx context.Context, m Message, err error, res Result) Result {
	reason := "malformed envelope: " + err.Error()
	p.cfg.Logger.ErrorContext(ctx, "malformed message", slog.String("message_id", m.MessageID), slog.Any("error", err))
	res.Err = errors.New(reason)
	if err := p.cfg.DLQ.SendDeadLetter(ctx, "", m.Body, reason); err != nil {
		p.cfg.Logger.ErrorContext(ctx, "send to dead-letter queue", slog.Any("error", err))
		res.Verdict = Errored
		return res
	}
	res.Verdict, res.Ack = Malformed, true
	return res
}

// Refused sends the message of a record found FAILED (the processor gave up
// on it, but its message came back) to the dead-letter queue.
func (p phase) Refused(ctx context.Context, a *kernel.Attempt, res Result) (Result, bool) {
	if a.Acq.Outcome != webhook.AcquireFailedState {
		return res, false
	}
	res.Err = fmt.Errorf("record %s: %s", a.Acq.Status, a.Acq.LastError)
	if err := p.cfg.DLQ.SendDeadLetter(ctx, a.Env.Key, a.Message.Body, res.Err.Error()); err != nil {
		a.Log.ErrorContext(ctx, "send to dead-letter queue", slog.Any("error", err))
		res.Verdict = Errored
		return res, true
	}
	res.Verdict, res.Ack = DeadLettered, true
	return res, true
}

// Begin completes the envelope with its payload when the message was sent
// without it, matches the handlers and starts the attempt.
func (p phase) Begin(ctx context.Context, a *kernel.Attempt) kernel.Task {
	t := &attempt{d: p.Dispatcher, a: a, j: a.Journal(p.cfg.Store), calls: callLog{now: p.cfg.Now}}
	if env := &a.Env; env.PayloadInRecord {
		payload := a.Acq.Payload
		if len(payload) == 0 {
			if pl, ok := p.cfg.Store.(PayloadLoader); ok {
				var err error
				if payload, err = pl.LoadPayload(ctx, env.Key); err != nil {
					// The lease is ours: the attempt fails, to be retried.
					t.loadErr = fmt.Errorf("load the payload from the table: %w", err)
					a.Log.ErrorContext(ctx, "load payload", slog.Any("error", err))
				}
			}
		}
		env.Payload, env.PayloadInRecord = payload, false
	}
	p.cfg.Metrics.Count(MetricClaimed, 1)
	a.Log = a.Log.With(slog.Int(obs.KeyAttempt, a.Lease.Attempt))
	t.regs = (*registry.Table)(p.cfg.Registry).Match(a.Env.Provider, a.Env.Tenant, a.Env.Type)
	return t
}

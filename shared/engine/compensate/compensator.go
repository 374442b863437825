package compensate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/internal/kernel"
)

// Compensator handles dead-letter messages: the compensation phase on the
// leased-attempt kernel, whose Handle handles one message and publishes its
// outcome event, and whose Batch handles messages with at most concurrency
// at a time (concurrency < 1 means 1), publishes their outcome events in one
// call, and returns the results in their order. A result's Verdict is one
// of the compensator's outcomes ([Compensated], [Dead], [Requeued]) or one
// the kernel gives every engine (retried, duplicate, busy, absent,
// lease-lost, malformed, errored: see dispatch.Verdict). It is safe for
// concurrent use; one message may be delivered to it many times
// concurrently.
type Compensator struct {
	*kernel.Engine
	cfg Config
}

// New returns the Compensator described by cfg.
func New(cfg Config) (*Compensator, error) {
	c := &Compensator{cfg: cfg}
	if err := c.cfg.Validate(); err != nil {
		return nil, err
	}
	c.cfg.setDefaults()
	c.Engine = kernel.New(&c.cfg.Kernel, leases{cfg.Store}, phase{c}, phaseNames)
	return c, nil
}

// leases are the compensation lease's calls on the Store.
type leases struct{ Store }

// Acquire takes the record to COMPENSATING under the compensation lease,
// for a dead letter of generation gen (a record of a newer generation is
// AcquireStale: the dead letter is acknowledged, nothing compensated).
func (s leases) Acquire(ctx context.Context, key string, gen int64, owner string, until time.Time) (webhook.Acquisition, error) {
	return s.AcquireCompensationGeneration(ctx, key, gen, owner, until)
}

// Heartbeat extends the compensation lease.
func (s leases) Heartbeat(ctx context.Context, l webhook.Lease, until time.Time) (bool, error) {
	return s.HeartbeatCompensation(ctx, l, until)
}

// phaseNames are the compensator's log messages and metrics where the
// kernel acts for it.
var phaseNames = kernel.Names{Package: "compensate", Acquire: "acquire compensation lease", Panicked: "undo panicked",
	Duplicate: "record already terminal; dead letter acknowledged", Busy: "lease held by another worker; dead letter comes back",
	Missing: "no live record for the dead letter; acknowledged", LeaseLost: "compensation lease lost; outcome discarded",
	MessageLatency: MetricCompensationLatency,
	Stale:          "stale dead letter (an older generation than the record's: the event was replayed or recovered since); acknowledged, not compensated",
	StaleMetric:    MetricStaleDeadLetters}

// phase is the compensator's side of the kernel: its checks and its
// attempts ([run]).
type phase struct{ *Compensator }

// Check requires the event key: a dead letter names the record to act on.
func (phase) Check(env webhook.Envelope) error {
	if env.Key == "" {
		return errors.New("missing key")
	}
	return nil
}

// Malformed keeps a message that is not an envelope on the queue, hidden
// for the longest visibility timeout, so that an operator finds it (it has
// no key, so there is no record to act on).
func (p phase) Malformed(ctx context.Context, m kernel.Message, err error, res kernel.Result) kernel.Result {
	res.Verdict, res.Err = kernel.Malformed, fmt.Errorf("malformed dead letter: %w", err)
	res.RetryAfter = webhook.MaxQueueDelay
	p.cfg.Logger.ErrorContext(ctx, "malformed dead letter; kept on the queue for an operator",
		slog.String("message_id", m.MessageID), slog.Int("bytes", len(m.Body)), slog.Any("error", err))
	if err := p.cfg.Queue.ChangeVisibility(ctx, m.ReceiptHandle, res.RetryAfter); err != nil {
		p.cfg.Logger.WarnContext(ctx, "change visibility", slog.Any("error", err))
	}
	return res
}

// Refused leaves every other acquisition to the kernel (an error: the
// compensator's acquisition has no other outcome).
func (phase) Refused(_ context.Context, _ *kernel.Attempt, res kernel.Result) (kernel.Result, bool) {
	return res, false
}

// Begin completes the envelope with the record's payload and starts the
// attempt's [run].
func (p phase) Begin(_ context.Context, a *kernel.Attempt) kernel.Task {
	orig := a.Env // as the receiver sent it, for a requeue
	if a.Env.PayloadInRecord || len(a.Env.Payload) == 0 {
		a.Env.Payload, a.Env.PayloadInRecord = a.Acq.Payload, false
	}
	a.Log = a.Log.With(slog.Int("compensation", a.Lease.Attempt), slog.String("from", a.Acq.Status.String()))
	return &run{c: p.Compensator, a: a, orig: orig}
}

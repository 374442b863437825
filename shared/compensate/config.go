package compensate

import (
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/hookwall/hookwall/shared/dispatch"
	"github.com/hookwall/hookwall/shared/lease"
	"github.com/hookwall/hookwall/shared/obs"
	"github.com/hookwall/hookwall/shared/process"
)

// Metric names (EMF, PascalCase) the compensator records, under the
// dimension Function=compensator.
const (
	// MetricCompensated and MetricDead count the outcomes.
	MetricCompensated = "Compensated"
	MetricDead        = "Dead"
	// MetricRequeued counts dead letters of events the processor never
	// finished that were sent back to the main queue.
	MetricRequeued = "Requeued"
	// MetricCompensationRetried counts attempts that end with a retry.
	MetricCompensationRetried = "CompensationRetried"
	// MetricUndone counts undo functions that ran and were journaled;
	// MetricUndoSkipped those already journaled by an earlier attempt.
	MetricUndone      = "Undone"
	MetricUndoSkipped = "UndoSkipped"
	// MetricNotCompensable counts journaled forward steps of handlers that
	// registered no compensation (left as they are).
	MetricNotCompensable = "NotCompensable"
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
	// MetricCompensationLatency is the time one message took.
	MetricCompensationLatency = "CompensationLatency"
)

// Defaults of [Config].
const (
	DefaultLeaseDuration = dispatch.DefaultLeaseDuration
	DefaultMaxAttempts   = lease.DefaultMaxAttempts
	DefaultRetryBase     = dispatch.DefaultRetryBase
	DefaultRetryCap      = dispatch.DefaultRetryCap
	DefaultRetention     = dispatch.DefaultRetention
	DefaultFinishReserve = dispatch.DefaultFinishReserve
	DefaultMaxRequeues   = 2
	// DefaultRequeueWithin is the default RequeueWithin: the shortest
	// idempotency-key retention of common APIs (Stripe keeps keys 24 h).
	DefaultRequeueWithin = 24 * time.Hour
	maxLastError         = 1024
)

// Config configures a [Compensator].
type Config struct {
	// Registry holds the handlers and their compensations (required): the
	// processor's registry, built by the same code.
	Registry *process.Registry
	// Store is the events table (required).
	Store Store
	// Queue is the dead-letter queue, whose message visibility is set for
	// retries and busy leases (required).
	Queue dispatch.Visibility
	// Requeue is the main queue (optional; nil: never requeue). A dead
	// letter whose record the processor never finished (RECEIVED, RETRY, or
	// PROCESSING with its lease run out: SQS redrove the message after
	// maxReceiveCount receives, say while the processor was down or kept
	// crashing) and that has nothing to compensate is sent back to it, its
	// record made RETRY, instead of ending DEAD: at most MaxRequeues times
	// per event, so a message that crashes the processor still ends DEAD.
	Requeue Requeuer
	// MaxRequeues bounds the requeues of one event (optional; default 2;
	// negative: never requeue).
	MaxRequeues int
	// RequeueWithin is the oldest event, by when it was received, that is
	// requeued (optional; default 24h). A requeued event's steps may call
	// the outside again with the same idempotency keys (a stale attempt's
	// call whose journal write was fenced off): the outside must still
	// remember them (model/README.md, finding 5), so an older event ends
	// DEAD for an operator instead.
	RequeueWithin time.Duration
	// Publisher publishes the COMPENSATED and DEAD outcomes (optional; nil: publishing off).
	Publisher dispatch.Publisher
	// Logger (optional; default: discard).
	Logger *slog.Logger
	// Metrics records EMF metrics (optional; nil: none).
	Metrics *obs.Metrics
	// LeaseDuration is how long a lease lasts unless extended; the heartbeat
	// extends it every third of it (optional; default 60s).
	LeaseDuration time.Duration
	// MaxAttempts is the compensation attempt limit: an undo error on attempt
	// n ≥ MaxAttempts ends the event DEAD (optional; default 5).
	MaxAttempts int
	// Timeout is the time limit of one undo of a handler without its own
	// [process.Timeout] (optional; default none: the invocation's deadline
	// less FinishReserve).
	Timeout time.Duration
	// RetryBase and RetryCap bound the retry backoff, as the processor's
	// (optional; defaults 2s and 15m; at most 12h).
	RetryBase time.Duration
	RetryCap  time.Duration
	// Retention is how long a COMPENSATED or DEAD record is kept (optional; default 7 days).
	Retention time.Duration
	// FinishReserve is the time kept back from the invocation's deadline for
	// the closing writes (optional; default 3s).
	FinishReserve time.Duration
	// Transport is the base transport of [process.Undo.HTTPClient] (optional; default http.DefaultTransport).
	Transport http.RoundTripper
	// Now is the clock (optional; default time.Now).
	Now func() time.Time
	// Jitter returns a uniform random number in [0, n) (optional; default math/rand/v2).
	Jitter func(n int64) int64
	// NewOwner returns a unique lease owner token (optional; default [lease.NewOwner]: 130 random bits, base32).
	NewOwner func() string
}

// Validate reports a missing required field or an invalid value.
func (c *Config) Validate() error {
	switch {
	case c.Registry == nil:
		return errors.New("compensate: config: nil Registry")
	case c.Store == nil:
		return errors.New("compensate: config: nil Store")
	case c.Queue == nil:
		return errors.New("compensate: config: nil Queue")
	}
	return c.settings().Validate("compensate")
}

// settings points at c's lease, retry and clock fields.
func (c *Config) settings() lease.Settings {
	return lease.Settings{Duration: &c.LeaseDuration, Timeout: &c.Timeout, RetryBase: &c.RetryBase, RetryCap: &c.RetryCap,
		Retention: &c.Retention, FinishReserve: &c.FinishReserve, MaxAttempts: &c.MaxAttempts, Logger: &c.Logger,
		Transport: &c.Transport, Now: &c.Now, Jitter: &c.Jitter, NewOwner: &c.NewOwner}
}

func (c *Config) setDefaults() {
	c.settings().SetDefaults()
	if c.MaxRequeues == 0 {
		c.MaxRequeues = DefaultMaxRequeues
	}
	if c.RequeueWithin <= 0 {
		c.RequeueWithin = DefaultRequeueWithin
	}
}

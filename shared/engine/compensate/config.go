package compensate

import (
	"time"

	"github.com/hookwall/hookwall/shared/engine/process"
	"github.com/hookwall/hookwall/shared/internal/kernel"
)

// Metric names (EMF, PascalCase) the compensator records, under the
// dimension Function=compensator, besides those the kernel records for
// every engine (DuplicateDelivery, LeaseBusy, Missing, Malformed,
// LeaseLost, PublishFailed).
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
	// MetricCompensationLatency is the time one message took.
	MetricCompensationLatency = "CompensationLatency"
	// MetricStaleDeadLetters counts dead letters of an older generation
	// than their record's (an earlier life of an event that a replay or
	// recovery sent back to be processed), acknowledged without
	// compensating anything.
	MetricStaleDeadLetters = "StaleDeadLetters"
)

// Defaults of [Config]: the compensation attempt limit unless [Kernel]
// says otherwise (the kernel's default), and the compensator's own.
const (
	DefaultMaxAttempts = kernel.DefaultMaxAttempts
	DefaultMaxRequeues = 2
	// DefaultRequeueWithin is the default RequeueWithin: the shortest
	// idempotency-key retention of common APIs (Stripe keeps keys 24 h).
	DefaultRequeueWithin = 24 * time.Hour
	maxLastError         = 1024
)

// Kernel is the configuration every engine on the leased-attempt kernel
// shares, with its defaults: the queue it consumes (for the compensator, the
// dead-letter queue, whose message visibility is set for retries and busy
// leases; required), the publisher of the COMPENSATED and DEAD outcomes,
// the logger and metrics, and the lease, retry and clock settings.
// MaxAttempts is the compensation attempt limit: an undo error on attempt
// n ≥ MaxAttempts ends the event DEAD. Timeout limits one undo of a handler
// without its own [process.Timeout].
type Kernel = kernel.Config

// Config configures a [Compensator].
type Config struct {
	Kernel
	// Registry holds the handlers and their compensations (required): the
	// processor's registry, built by the same code.
	Registry *process.Registry
	// Store is the events table (required).
	Store Store
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
}

// Validate reports a missing required field or an invalid value.
func (c *Config) Validate() error {
	return c.Kernel.Validate("compensate", kernel.Field{Name: "Registry", Set: c.Registry != nil},
		kernel.Field{Name: "Store", Set: c.Store != nil})
}

// setDefaults fills the compensator's own zero fields (the kernel fills
// the Kernel).
func (c *Config) setDefaults() {
	if c.MaxRequeues == 0 {
		c.MaxRequeues = DefaultMaxRequeues
	}
	if c.RequeueWithin <= 0 {
		c.RequeueWithin = DefaultRequeueWithin
	}
}

package dispatch

import (
	"github.com/hookwall/hookwall/shared/engine/process"
	"github.com/hookwall/hookwall/shared/internal/kernel"
)

// Metric names (EMF, PascalCase) the dispatcher records, besides those the
// kernel records for every engine (DuplicateDelivery, LeaseBusy, Missing,
// Malformed, LeaseLost, PublishFailed).
const (
	MetricClaimed           = "Claimed"
	MetricSucceeded         = "Succeeded"
	MetricRetried           = "Retried"
	MetricFailed            = "Failed"
	MetricUnhandled         = "Unhandled"
	MetricStepSkipped       = "StepSkipped"
	MetricProcessingLatency = "ProcessingLatency"
	MetricEndToEndLatency   = "EndToEndLatency"
	// MetricHeld counts attempts that held their event instead of running
	// a handler (a paused scope or an open breaker).
	MetricHeld = "Held"
	// MetricGateFailed counts failed Report calls to the gate (an Admit
	// that fails fails the attempt, which is retried).
	MetricGateFailed = "GateFailed"
	// MetricOpsFailed counts failed publications of operational events.
	MetricOpsFailed = "OpsFailed"
	// MetricStaleMessages counts messages of an older generation than
	// their record's (the event was replayed or recovered since),
	// acknowledged without running anything.
	MetricStaleMessages = "StaleMessages"
)

// DefaultMaxAttempts is the attempt limit of handlers without their own,
// unless [Kernel] says otherwise (the kernel's default).
const DefaultMaxAttempts = kernel.DefaultMaxAttempts

const maxLastError = 1024

// Kernel is the configuration every engine on the leased-attempt kernel
// shares, with its defaults: the queue it consumes (for the processor, the main queue,
// whose message visibility is set for retries and busy leases; required),
// the outcome publisher, the logger and metrics, and the lease, retry and
// clock settings. MaxAttempts and Timeout apply to the handlers without
// their own ([process.MaxAttempts], [process.Timeout]); Transport is the
// base transport of their HTTP clients.
type Kernel = kernel.Config

// Config configures a [Dispatcher].
type Config struct {
	Kernel
	// Registry holds the handlers (required).
	Registry *process.Registry
	// Store is the events table (required).
	Store Store
	// DLQ receives the events given up on (required).
	DLQ DeadLetters
	// UnhandledToDLQ sends events of a type without handlers to the DLQ
	// (FAILED) instead of acknowledging them (SUCCEEDED) (optional).
	UnhandledToDLQ bool
	// Gate admits each handler run to its target and is told its outcome:
	// a run it holds leaves the event HELD, its attempt given back
	// (optional; nil: every run admitted, nothing held).
	Gate Gate
	// Ops publishes the operational events: circuit opened and closed,
	// attempts exhausted (optional; nil: none).
	Ops Ops
}

// Validate reports a missing required field or an invalid value.
func (c *Config) Validate() error {
	return c.Kernel.Validate("dispatch", kernel.Field{Name: "Registry", Set: c.Registry != nil},
		kernel.Field{Name: "Store", Set: c.Store != nil}, kernel.Field{Name: "DLQ", Set: c.DLQ != nil})
}

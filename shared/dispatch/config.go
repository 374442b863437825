package dispatch

import (
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/hookwall/hookwall/shared/lease"
	"github.com/hookwall/hookwall/shared/obs"
	"github.com/hookwall/hookwall/shared/process"
)

// Metric names (EMF, PascalCase) the dispatcher records.
const (
	MetricClaimed           = "Claimed"
	MetricDuplicateDelivery = "DuplicateDelivery"
	MetricSucceeded         = "Succeeded"
	MetricRetried           = "Retried"
	MetricFailed            = "Failed"
	MetricUnhandled         = "Unhandled"
	MetricStepSkipped       = "StepSkipped"
	MetricLeaseLost         = "LeaseLost"
	MetricLeaseBusy         = "LeaseBusy"
	MetricMissing           = "Missing"
	MetricMalformed         = "Malformed"
	MetricPublishFailed     = "PublishFailed"
	MetricProcessingLatency = "ProcessingLatency"
	MetricEndToEndLatency   = "EndToEndLatency"
)

// Defaults of [Config].
const (
	DefaultLeaseDuration = lease.DefaultDuration
	DefaultMaxAttempts   = lease.DefaultMaxAttempts
	DefaultRetryBase     = lease.DefaultRetryBase
	DefaultRetryCap      = lease.DefaultRetryCap
	DefaultRetention     = lease.DefaultRetention
	DefaultFinishReserve = lease.DefaultFinishReserve
	maxLastError         = 1024
)

// Config configures a [Dispatcher].
type Config struct {
	// Registry holds the handlers (required).
	Registry *process.Registry
	// Store is the events table (required).
	Store Store
	// Queue is the main queue, whose message visibility is set for retries (required).
	Queue Visibility
	// DLQ receives the events given up on (required).
	DLQ DeadLetters
	// Publisher publishes outcome events (optional; nil: publishing off).
	Publisher Publisher
	// Logger (optional; default: discard).
	Logger *slog.Logger
	// Metrics records EMF metrics (optional; nil: none).
	Metrics *obs.Metrics
	// LeaseDuration is how long a lease lasts unless extended; the heartbeat
	// extends it every third of it (optional; default 60s).
	LeaseDuration time.Duration
	// MaxAttempts is the attempt limit of handlers without their own (optional; default 5).
	// The queue's maxReceiveCount must be higher, or SQS dead-letters first.
	MaxAttempts int
	// Timeout is the per-attempt time limit of handlers without their own
	// (optional; default none: the invocation's deadline less FinishReserve).
	Timeout time.Duration
	// RetryBase and RetryCap bound the retry backoff: the visibility timeout
	// of attempt n is uniform in [0, min(RetryCap, RetryBase·2^(n-1))]
	// ("full jitter") (optional; defaults 2s and 15m; at most 12h).
	RetryBase time.Duration
	RetryCap  time.Duration
	// Retention is how long a SUCCEEDED record is kept (optional; default 7 days).
	Retention time.Duration
	// FinishReserve is the time kept back from the invocation's deadline for
	// the closing writes (optional; default 3s).
	FinishReserve time.Duration
	// UnhandledToDLQ sends events of a type without handlers to the DLQ
	// (FAILED) instead of acknowledging them (SUCCEEDED) (optional).
	UnhandledToDLQ bool
	// Transport is the base transport of [process.Event.HTTPClient] (optional; default http.DefaultTransport).
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
		return errors.New("dispatch: config: nil Registry")
	case c.Store == nil:
		return errors.New("dispatch: config: nil Store")
	case c.Queue == nil:
		return errors.New("dispatch: config: nil Queue")
	case c.DLQ == nil:
		return errors.New("dispatch: config: nil DLQ")
	}
	return c.settings().Validate("dispatch")
}

// settings points at c's lease, retry and clock fields.
func (c *Config) settings() lease.Settings {
	return lease.Settings{Duration: &c.LeaseDuration, Timeout: &c.Timeout, RetryBase: &c.RetryBase, RetryCap: &c.RetryCap,
		Retention: &c.Retention, FinishReserve: &c.FinishReserve, MaxAttempts: &c.MaxAttempts, Logger: &c.Logger,
		Transport: &c.Transport, Now: &c.Now, Jitter: &c.Jitter, NewOwner: &c.NewOwner}
}

func (c *Config) setDefaults() { c.settings().SetDefaults() }

package kernel

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	mrand "math/rand/v2"
	"net/http"
	"time"

	"github.com/hookwall/hookwall/shared/base/obs"
	"github.com/hookwall/hookwall/shared/base/webhook"
)

// Defaults of [Config], for every engine and every binary.
const (
	DefaultLeaseDuration = 60 * time.Second
	DefaultMaxAttempts   = 5
	DefaultRetryBase     = 2 * time.Second
	DefaultRetryCap      = 15 * time.Minute
	DefaultRetention     = 7 * 24 * time.Hour
	DefaultFinishReserve = 3 * time.Second
	// DefaultConcurrency is how many messages of one batch are handled at
	// once unless configured otherwise.
	DefaultConcurrency = 10
)

// The receiver's defaults the sweeper must agree with: a RECEIVED record
// whose last enqueue is older than the re-enqueue grace is stuck, and the
// sweeper enqueues it again.
const (
	// DefaultReceiveBudget is the most one delivery may spend on its claims
	// and sends (the receiver's default budget).
	DefaultReceiveBudget = 1500 * time.Millisecond
	// DefaultGraceMargin is added to the budget for the default re-enqueue
	// grace: room for clock skew between receiver instances and for a send
	// still in flight when its delivery's budget ran out.
	DefaultGraceMargin = 1500 * time.Millisecond
	// DefaultReenqueueGrace is the receiver's default re-enqueue grace,
	// which the sweeper takes too.
	DefaultReenqueueGrace = DefaultReceiveBudget + DefaultGraceMargin
)

// Bounds of the deployed settings (shared/config/settings holds the environment to
// them). [Config.Validate] accepts any value that is not negative, so that
// tests can run with a lease of milliseconds; the retry cap is bounded by
// SQS in any case.
const (
	MinLeaseDuration = 3 * time.Second
	MaxLeaseDuration = 15 * time.Minute
	MinRetry         = time.Second           // RetryBase and RetryCap
	MaxRetry         = webhook.MaxQueueDelay // RetryBase and RetryCap: SQS's longest visibility timeout
	MinMaxAttempts   = 1
	MaxMaxAttempts   = 100
	MinRetention     = 24 * time.Hour
	MaxRetention     = 365 * 24 * time.Hour
	MinConcurrency   = 1
	MaxConcurrency   = 100
)

// OutcomeEvents says which outcome events an engine publishes: every one
// ([OutcomesEach]), those of failures only ([OutcomesFailures]: FAILED,
// COMPENSATED and DEAD, not SUCCEEDED) or none ([OutcomesNone]).
type OutcomeEvents string

// The classes of [OutcomeEvents].
const (
	OutcomesEach     OutcomeEvents = "each"
	OutcomesFailures OutcomeEvents = "failures"
	OutcomesNone     OutcomeEvents = "none"
)

// DefaultOutcomeEvents is [OutcomesFailures]: an outcome event costs as
// much as a unique event's table writes ($1 per million on EventBridge),
// and what a consumer acts on is the event that did not succeed (an alert,
// a ticket, a manual replay); SUCCEEDED is the record's status, which the
// events API and the CLI read. Deployments that drive work from success
// events set [OutcomesEach].
const DefaultOutcomeEvents = OutcomesFailures

// ParseOutcomeEvents returns the class named s ("each", "failures" or
// "none"; "" is [DefaultOutcomeEvents]).
func ParseOutcomeEvents(s string) (OutcomeEvents, error) {
	switch o := OutcomeEvents(s); o {
	case "":
		return DefaultOutcomeEvents, nil
	case OutcomesEach, OutcomesFailures, OutcomesNone:
		return o, nil
	}
	return "", fmt.Errorf("outcome events %q: want each, failures or none", s)
}

// Publishes reports whether the class publishes an outcome of status.
func (o OutcomeEvents) Publishes(status webhook.Status) bool {
	switch o {
	case OutcomesEach:
		return true
	case OutcomesFailures:
		return status != webhook.StatusSucceeded
	}
	return false
}

// Config is what every engine shares: the queue it consumes, the outcome
// publisher, the logger and metrics, and the lease, retry and clock
// settings. An engine's own configuration embeds it.
type Config struct {
	// Queue is the queue the engine consumes, whose message visibility is
	// set for retries and busy leases (required).
	Queue Visibility
	// Publisher publishes the outcome events (optional; nil: publishing off).
	Publisher Publisher
	// Outcomes says which outcome events Publisher gets (optional; default
	// [DefaultOutcomeEvents]).
	Outcomes OutcomeEvents
	// Logger (optional; default: discard).
	Logger *slog.Logger
	// Metrics records EMF metrics (optional; nil: none).
	Metrics *obs.Metrics
	// LeaseDuration is how long a lease lasts unless extended; the heartbeat
	// extends it every third of it (optional; default 60s).
	LeaseDuration time.Duration
	// MaxAttempts is the attempt limit: of the processor's handlers without
	// their own, of the compensator's attempts at an event (optional;
	// default 5). The queue's maxReceiveCount must be higher, or SQS
	// dead-letters first.
	MaxAttempts int
	// Timeout is the time limit of one run of a handler (or undo) without
	// its own (optional; default none: the invocation's deadline less
	// FinishReserve).
	Timeout time.Duration
	// RetryBase and RetryCap bound the retry backoff: the visibility timeout
	// after failed attempt n is uniform in [0, min(RetryCap,
	// RetryBase·2^(n-1))] ("full jitter") (optional; defaults 2s and 15m,
	// the cap at least the base; at most 12h).
	RetryBase time.Duration
	RetryCap  time.Duration
	// Retention is how long a record that reached an outcome (SUCCEEDED,
	// COMPENSATED, DEAD) is kept (optional; default 7 days).
	Retention time.Duration
	// FinishReserve is the time kept back from the invocation's deadline for
	// the closing writes (optional; default 3s).
	FinishReserve time.Duration
	// Transport is the base transport of the handlers' (and undos') HTTP
	// clients (optional; default http.DefaultTransport).
	Transport http.RoundTripper
	// Now is the clock (optional; default time.Now).
	Now func() time.Time
	// Jitter returns a uniform random number in [0, n) (optional; default math/rand/v2).
	Jitter func(n int64) int64
	// NewOwner returns a unique lease owner token (optional; default
	// [NewOwner]: 130 random bits, base32).
	NewOwner func() string
}

// Field is a required field of an engine's configuration: its name, and
// whether it is set.
type Field struct {
	Name string
	Set  bool
}

// Validate reports the first of the engine's required fields that is not
// set, a missing Queue, a negative duration or count, or a RetryCap above
// SQS's longest delay; pkg (the engine's package) prefixes the message.
func (c *Config) Validate(pkg string, required ...Field) error {
	for _, f := range required {
		if !f.Set {
			return fmt.Errorf("%s: config: nil %s", pkg, f.Name)
		}
	}
	switch {
	case c.Queue == nil:
		return errors.New(pkg + ": config: nil Queue")
	case c.LeaseDuration < 0, c.MaxAttempts < 0, c.Timeout < 0, c.RetryBase < 0, c.RetryCap < 0,
		c.Retention < 0, c.FinishReserve < 0:
		return errors.New(pkg + ": config: negative duration or count")
	case c.Outcomes != "" && c.Outcomes != OutcomesEach && c.Outcomes != OutcomesFailures && c.Outcomes != OutcomesNone:
		return fmt.Errorf("%s: config: Outcomes %q: want each, failures or none", pkg, c.Outcomes)
	case c.RetryCap > MaxRetry:
		return fmt.Errorf("%s: config: RetryCap %v above SQS's maximum %v", pkg, c.RetryCap, MaxRetry)
	}
	return nil
}

// SetDefaults fills the zero fields: a discarding logger, the Default
// durations and count (RetryCap at least RetryBase), the default outcome
// events, http.DefaultTransport,
// time.Now, math/rand/v2 and [NewOwner].
func (c *Config) SetDefaults() {
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewJSONHandler(io.Discard, nil))
	}
	orDefault(&c.LeaseDuration, DefaultLeaseDuration)
	if c.MaxAttempts == 0 {
		c.MaxAttempts = DefaultMaxAttempts
	}
	orDefault(&c.RetryBase, DefaultRetryBase)
	orDefault(&c.RetryCap, DefaultRetryCap)
	c.RetryCap = max(c.RetryCap, c.RetryBase)
	orDefault(&c.Retention, DefaultRetention)
	orDefault(&c.FinishReserve, DefaultFinishReserve)
	if c.Outcomes == "" {
		c.Outcomes = DefaultOutcomeEvents
	}
	if c.Transport == nil {
		c.Transport = http.DefaultTransport
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Jitter == nil {
		c.Jitter = mrand.Int64N
	}
	if c.NewOwner == nil {
		c.NewOwner = NewOwner
	}
}

func orDefault(d *time.Duration, def time.Duration) {
	if *d == 0 {
		*d = def
	}
}

// OrDefault returns v, or def when v is not set (zero or negative): the
// rule of the Config constructors outside the kernel (the receiver's, the
// drain's, the sweeper's) for a count or a duration left to its default.
func OrDefault[T ~int | ~int64](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// OwnerLength is the length of a lease owner token: 16 random base32
// characters, 80 bits, ample for a token that only has to differ from the
// other attempts at one record (with its version, it fences every write of
// an attempt). It is written twice in every record's history (acquisition
// and completion), so every character counts against the one write unit a
// record fits in (store.RecordGrowth).
const OwnerLength = 16

// NewOwner returns a lease owner token: [OwnerLength] random base32
// characters.
func NewOwner() string { return rand.Text()[:OwnerLength] }

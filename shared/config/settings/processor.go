package settings

import (
	"strings"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/internal/kernel"
)

// Processor is the processor's configuration. Field comments name the
// variable, then its deprecated older name.
type Processor struct {
	Common
	// DLQURL is the dead-letter queue: DLQ_URL (required).
	DLQURL string
	// EventBusName is the EventBridge bus for outcome events, a name or ARN:
	// EVENT_BUS_NAME (optional; empty: publishing off).
	EventBusName string
	// OutcomeEvents says which outcome events are published:
	// HOOKWALL_OUTCOME_EVENTS, each, failures or none (default
	// kernel.DefaultOutcomeEvents).
	OutcomeEvents kernel.OutcomeEvents
	// Concurrency is how many messages of one batch are processed at once:
	// HOOKWALL_PROCESSOR_CONCURRENCY (PROCESSOR_CONCURRENCY), 1 to 100.
	Concurrency int
	// Lease is the lease length; the heartbeat extends it every third of it:
	// HOOKWALL_LEASE (LEASE_SECONDS), 3s to 15m.
	Lease time.Duration
	// RetryBase and RetryCap bound the retry backoff (full jitter):
	// HOOKWALL_RETRY_BASE (RETRY_BASE_SECONDS) and HOOKWALL_RETRY_CAP
	// (RETRY_CAP_SECONDS), 1s to 12h (SQS's longest visibility timeout),
	// the base not above the cap.
	RetryBase time.Duration
	RetryCap  time.Duration
	// MaxAttempts is the attempt limit of handlers without their own:
	// HOOKWALL_MAX_ATTEMPTS (MAX_ATTEMPTS), 1 to 100. The queue's
	// maxReceiveCount must be higher.
	MaxAttempts int
	// Retention is how long a SUCCEEDED record is kept: HOOKWALL_RETENTION
	// (RETENTION_DAYS, in days), 24h to 8760h.
	Retention time.Duration
	// UnhandledToDLQ sends events no handler serves to the dead-letter queue
	// instead of acknowledging them: HOOKWALL_UNHANDLED_TO_DLQ
	// (UNHANDLED_TO_DLQ), default false.
	UnhandledToDLQ bool
	// Targets are the breakers' settings (HOOKWALL_BREAKER_*) and the
	// targets' rate (HOOKWALL_TARGET_RATE); unset fields are zero.
	Targets Targets
	// Getenv is the environment the configuration was read from. The
	// settings the team packages declare (shared/config/setting) are not read
	// here: the wiring reads them through Getenv when it builds the handler
	// registry (platform.Build).
	Getenv func(string) string
}

// validEventBus reports whether v is an EventBridge bus name: 1 to 256 of
// A-Z a-z 0-9 / . _ - (an ARN is accepted by the callers too).
func validEventBus(v string) bool {
	return len(v) >= 1 && len(v) <= 256 && webhook.OnlyBytes(v, "/._-")
}

// LoadProcessor reads the processor's configuration through getenv
// (os.Getenv in main), with the engines' defaults (shared/internal/kernel)
// for what is unset, and validates it against the kernel's bounds. The
// error joins one error per variable at fault, each naming it; the warnings
// report deprecated names in use.
func LoadProcessor(getenv func(string) string) (Processor, Warnings, error) {
	r := newReader(getenv)
	s := loadProcessor(r)
	return s, r.warnings, r.err("processor")
}

func loadProcessor(r *reader) Processor {
	s := Processor{Common: r.common(), DLQURL: r.httpURL("DLQ_URL", true)}
	if s.EventBusName = r.get("EVENT_BUS_NAME"); s.EventBusName != "" &&
		!validEventBus(s.EventBusName) && !strings.HasPrefix(s.EventBusName, "arn:") {
		r.fail("EVENT_BUS_NAME=%q: want an EventBridge bus name or ARN", s.EventBusName)
	}
	s.OutcomeEvents = r.outcomeEvents()
	s.Concurrency = int(r.integer("HOOKWALL_PROCESSOR_CONCURRENCY", "PROCESSOR_CONCURRENCY", kernel.DefaultConcurrency,
		kernel.MinConcurrency, kernel.MaxConcurrency))
	s.Lease, _ = r.lease("LEASE_SECONDS", time.Second)
	s.RetryBase, s.RetryCap = r.retry("RETRY_BASE_SECONDS", "RETRY_CAP_SECONDS", time.Second)
	s.MaxAttempts = r.attempts("HOOKWALL_MAX_ATTEMPTS", "MAX_ATTEMPTS")
	s.Retention, _ = r.retention("RETENTION_DAYS", 24*time.Hour)
	s.UnhandledToDLQ = r.boolean("HOOKWALL_UNHANDLED_TO_DLQ", "UNHANDLED_TO_DLQ", false)
	s.Targets = r.targets()
	s.Getenv = r.getenv
	return s
}

package settings

import (
	"strings"
	"time"

	"github.com/hookwall/hookwall/shared/internal/kernel"
)

// Compensator is the compensator's configuration (dead-letter mode and
// sweep mode). Field comments name the variable.
type Compensator struct {
	Common
	// DLQURL is the dead-letter queue the compensator consumes (retry
	// visibility) and the sweeper sends stuck FAILED and COMPENSATING
	// records to: DLQ_URL (required). QueueURL (QUEUE_URL) is where the
	// sweeper re-enqueues stuck RECEIVED, RETRY and PROCESSING records.
	DLQURL string
	// EventBusName is the EventBridge bus for the outcome events, a name or
	// ARN: EVENT_BUS_NAME (optional; empty: publishing off).
	EventBusName string
	// OutcomeEvents says which outcome events are published (COMPENSATED
	// and DEAD are failures): HOOKWALL_OUTCOME_EVENTS, each, failures or
	// none (default kernel.DefaultOutcomeEvents).
	OutcomeEvents kernel.OutcomeEvents
	// Lease is the compensation lease length; the heartbeat extends it every
	// third of it: HOOKWALL_LEASE, 3s to 15m.
	Lease time.Duration
	// CompensationAttempts is the compensation attempt limit, after which
	// the event is DEAD: HOOKWALL_COMPENSATION_ATTEMPTS, 1 to 100.
	CompensationAttempts int
	// RetryBase and RetryCap bound the backoff of a compensation retry (full
	// jitter): HOOKWALL_RETRY_BASE and HOOKWALL_RETRY_CAP, 1s to 12h, the
	// base not above the cap. The sweeper takes RetryCap as the longest
	// retry backoff (set it as the processor's).
	RetryBase time.Duration
	RetryCap  time.Duration
	// Retention is how long a COMPENSATED or DEAD record is kept:
	// HOOKWALL_RETENTION, 24h to 8760h.
	Retention time.Duration
	// SweepLimit is the most records one sweep run reads:
	// HOOKWALL_SWEEP_LIMIT, 1 to 100000.
	SweepLimit int
	// SweepLag is how far behind now each shard's sweep cursor stays at
	// least (longer than the sweep index's propagation):
	// HOOKWALL_SWEEP_LAG, 10s to 1h.
	SweepLag time.Duration
	// SweepMaxPassed is the most terminal (or gone) index entries one
	// sweep run passes: HOOKWALL_SWEEP_MAX_PASSED, 1 to 10000000.
	SweepMaxPassed int
	// ReenqueueGrace is the receiver's re-enqueue grace: the sweeper takes a
	// RECEIVED record for stuck once its last enqueue is older:
	// HOOKWALL_REENQUEUE_GRACE, 1s to 1h (set it as the receiver's).
	ReenqueueGrace time.Duration
	// SweepStuckAfter is how long past its lease, retry time or failure a
	// record must be before the sweeper takes it for stuck:
	// HOOKWALL_SWEEP_STUCK_AFTER, 1m to 24h.
	SweepStuckAfter time.Duration
	// Targets are the breakers' settings and the targets' rate, as the
	// processor's: the sweeper releases held events at the rate and one
	// probe carrier per interval. Unset fields are zero.
	Targets Targets
	// Getenv is the environment the configuration was read from: the
	// wiring reads the team packages' settings (shared/config/setting) through it
	// when it builds the same handler registry as the processor's, to find
	// the compensations (platform.Build).
	Getenv func(string) string
}

// CompensatorDefaults are the sweeper's defaults, which [LoadCompensator]
// does not state itself: the compensator's wiring.Defaults returns them from
// shared/engine/sweep's constants. The lease, retry and retention defaults are the
// engines' (shared/internal/kernel).
type CompensatorDefaults struct {
	SweepLimit      int           // HOOKWALL_SWEEP_LIMIT
	SweepLag        time.Duration // HOOKWALL_SWEEP_LAG
	SweepMaxPassed  int           // HOOKWALL_SWEEP_MAX_PASSED
	ReenqueueGrace  time.Duration // HOOKWALL_REENQUEUE_GRACE
	SweepStuckAfter time.Duration // HOOKWALL_SWEEP_STUCK_AFTER
}

// LoadCompensator reads the compensator's configuration through getenv
// (os.Getenv in main), with the engines' defaults (shared/internal/kernel)
// and def for what is unset, and validates it. The
// error joins one error per variable at fault, each naming it.
func LoadCompensator(getenv func(string) string, def CompensatorDefaults) (Compensator, Warnings, error) {
	r := newReader(getenv)
	s := loadCompensator(r, def)
	return s, r.warnings, r.err("compensator")
}

func loadCompensator(r *reader, def CompensatorDefaults) Compensator {
	s := Compensator{Common: r.common(), DLQURL: r.httpURL("DLQ_URL", true)}
	if s.EventBusName = r.get("EVENT_BUS_NAME"); s.EventBusName != "" &&
		!validEventBus(s.EventBusName) && !strings.HasPrefix(s.EventBusName, "arn:") {
		r.fail("EVENT_BUS_NAME=%q: want an EventBridge bus name or ARN", s.EventBusName)
	}
	s.OutcomeEvents = r.outcomeEvents()
	s.Lease, _ = r.lease("", 0)
	s.CompensationAttempts = r.attempts("HOOKWALL_COMPENSATION_ATTEMPTS", "")
	s.RetryBase, s.RetryCap = r.retry("", "", 0)
	s.Retention, _ = r.retention("", 0)
	s.SweepLimit = int(r.integer("HOOKWALL_SWEEP_LIMIT", "", int64(def.SweepLimit), 1, 100000))
	s.SweepLag, _ = r.durationIn("HOOKWALL_SWEEP_LAG", "", 0, def.SweepLag, 10*time.Second, time.Hour)
	s.SweepMaxPassed = int(r.integer("HOOKWALL_SWEEP_MAX_PASSED", "", int64(def.SweepMaxPassed), 1, 10000000))
	s.ReenqueueGrace, _ = r.durationIn("HOOKWALL_REENQUEUE_GRACE", "", 0, def.ReenqueueGrace, time.Second, time.Hour)
	s.SweepStuckAfter, _ = r.durationIn("HOOKWALL_SWEEP_STUCK_AFTER", "", 0, def.SweepStuckAfter, time.Minute, 24*time.Hour)
	s.Targets = r.targets()
	s.Getenv = r.getenv
	return s
}

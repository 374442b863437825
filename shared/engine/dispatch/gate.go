package dispatch

import (
	"context"
	"time"

	"github.com/hookwall/hookwall/shared/state/targets"
)

// Gate is the shared state of the handlers' targets as the dispatcher uses
// it: asked before each handler run, told its outcome. targets.Gate
// (shared/state/targets: the circuit breakers, the pauses; its DynamoDB table in
// shared/state/targets/targetsdb) satisfies it.
type Gate interface {
	// Admit is asked before a handler run: Hold when a scope covering it
	// (its handler, the event's tenant, its target) is paused or the
	// target's breaker is open; Probe for the one run that probes an open
	// breaker; otherwise Allow. The subject's Target is the breaker key of
	// the handler's target (registry Entry.BreakerOf).
	Admit(ctx context.Context, s targets.Subject) (targets.Admission, error)
	// Report records the outcome of an admitted run: failed means the
	// target was unavailable. It may open or close the breaker.
	Report(ctx context.Context, a targets.Admission, s targets.Subject, failed bool) (targets.Transition, error)
}

var _ Gate = targets.Gate(nil)

// Ops publishes the processor's operational events (shared/aws/bus on AWS,
// adapted by the wiring). A failure is logged and counted
// ([MetricOpsFailed]); the event's processing does not depend on it.
type Ops interface {
	PublishOps(ctx context.Context, ops []Op) error
}

// OpKind is the kind of an operational event.
type OpKind int

// The processor's operational events.
const (
	// OpCircuitOpened: a target's breaker opened; its events are held.
	OpCircuitOpened OpKind = iota + 1
	// OpCircuitClosed: a target's breaker closed after a successful probe.
	OpCircuitClosed
	// OpAttemptExhausted: an event ended FAILED because its attempts ran
	// out (not because a handler said Permanent).
	OpAttemptExhausted
)

// Op is one operational event: Target for circuit events (and for an
// exhausted attempt, the failing handler's target); Key, Provider and
// Tenant for an exhausted event, Reason its last error and Count its
// attempts.
type Op struct {
	Kind                  OpKind
	Target                string
	Key, Provider, Tenant string
	Reason                string
	Count                 int
	At                    time.Time
}

// DefaultRecheck is when the sweeper looks at a held record again when the
// gate names no time.
const DefaultRecheck = time.Minute

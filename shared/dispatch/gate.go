package dispatch

import (
	"context"
	"time"
)

// Gate is the shared state of the handlers' targets as the dispatcher uses
// it: asked before each handler run, told its outcome. shared/targets is
// its implementation (the circuit breakers, the pauses), adapted by the
// wiring (shared/backend.Gate), so that this package imports no AWS SDK.
type Gate interface {
	// Admit is asked before a handler run: Hold when a scope covering it
	// (its handler, the event's tenant, its target) is paused or the
	// target's breaker is open; Probe for the one run that probes an open
	// breaker; otherwise Allow.
	Admit(ctx context.Context, s Subject) (Admission, error)
	// Report records the outcome of an admitted run: failed means the
	// target was unavailable. It may open or close the breaker.
	Report(ctx context.Context, a Admission, s Subject, failed bool) (Transition, error)
}

// Subject is what a handler run is about to call: the handler, the event's
// tenant and the breaker key of the handler's target (registry
// Entry.BreakerOf: the target, with "/@<tenant>" when it names no tenant).
type Subject struct{ Handler, Tenant, Target string }

// AdmitVerdict is [Gate.Admit]'s answer.
type AdmitVerdict int

// Admission verdicts.
const (
	// Allow: run the handler.
	Allow AdmitVerdict = iota
	// Probe: run the handler as the probe of an open breaker.
	Probe
	// Hold: do not run the handler; hold the event.
	Hold
)

// Admission is [Gate.Admit]'s answer. For Hold, Reason says why, On is the
// scope the event waits for ("target#forward/acme": the record's heldOn)
// and RecheckAt when the sweeper looks at it again.
type Admission struct {
	Verdict   AdmitVerdict
	Reason    string
	On        string
	RecheckAt time.Time
	// Ticket is the gate's own record of the admission, handed back to
	// [Gate.Report] as it is.
	Ticket any
}

// Transition is what [Gate.Report] changed: Target's breaker opened or
// closed at At (neither: nothing changed).
type Transition struct {
	Target         string
	Opened, Closed bool
	At             time.Time
}

// Ops publishes the processor's operational events (shared/bus on AWS,
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

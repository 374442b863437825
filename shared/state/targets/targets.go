package targets

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/internal/registry"
)

// Subject is what a handler run is about to call: the handler, the event's
// tenant and the target's breaker key: the target the handler names when it
// names the tenant, else [BreakerKey](target, tenant) ("<target>/@<tenant>":
// one breaker per tenant of a shared target; a pause of the target covers
// it, [Covers]).
type Subject struct{ Handler, Tenant, Target string }

// Verdict is the answer of [Gate.Admit].
type Verdict int

const (
	// Allow: run the handler.
	Allow Verdict = iota
	// Probe: run the handler as the one probe of an open breaker's
	// interval; [Gate.Report] of its outcome closes the breaker or keeps it
	// open.
	Probe
	// Hold: do not run the handler; hold the event until RecheckAt.
	Hold
)

// String returns "allow", "probe" or "hold".
func (v Verdict) String() string {
	switch v {
	case Allow:
		return "allow"
	case Probe:
		return "probe"
	case Hold:
		return "hold"
	}
	return fmt.Sprintf("Verdict(%d)", int(v))
}

// Admission is the answer of [Gate.Admit]. For [Hold], Reason says why
// ("paused tenant acme", "circuit open: forward/acme"), On is the scope the
// event waits for (the record's heldOn is On.String()) and RecheckAt is
// when to look again. Token identifies the admission to [Gate.Report]; pass
// the Admission back as it is.
type Admission struct {
	Verdict   Verdict
	Reason    string
	On        Scope
	RecheckAt time.Time
	Token     string
}

// Transition is what [Gate.Report] changed: the breaker of Target opened
// or closed at At (neither: nothing changed).
type Transition struct {
	Target         string
	Opened, Closed bool
	At             time.Time
}

// Gate is the shared state of targets: breakers, buckets and pauses. Its
// implementations are safe for concurrent use; several instances over the
// same table (processor instances, the sweeper, the CLI) share the state.
type Gate interface {
	// Admit is asked before a handler run: paused scopes (handler, tenant,
	// target) => Hold; breaker open => Probe for the one caller that wins
	// the probe slot of the interval, else Hold.
	Admit(ctx context.Context, s Subject) (Admission, error)
	// Report records the outcome of an admitted run (failed: the target was
	// unavailable: timeout, connection error, 429, 5xx). It may open or
	// close the breaker.
	Report(ctx context.Context, a Admission, s Subject, failed bool) (Transition, error)
	// Take takes n tokens of target's bucket (rate per second), returning
	// how many were granted and when the next token is due. Used by the
	// drain and recovery.
	Take(ctx context.Context, target string, n int) (granted int, next time.Time, err error)
	// Pause pauses sc: admissions it covers are held until Resume.
	Pause(ctx context.Context, sc Scope, by, reason string) error
	// Resume ends the pause of sc (none: no error).
	Resume(ctx context.Context, sc Scope) error
	// Pauses lists the pauses, by scope.
	Pauses(ctx context.Context) ([]Pause, error)
	// Breakers lists the breakers of every target admitted so far, by
	// target (for the CLI, the local page and metrics).
	Breakers(ctx context.Context) ([]Breaker, error)
	// Blocked reports whether sc is still paused or, for a target, its
	// breaker still open (for the drain).
	Blocked(ctx context.Context, sc Scope) (bool, error)
}

// Prober is implemented by the gates whose open breaker's probe an
// operator can bring forward: a resume makes it due now, so that the probe
// is made at once instead of at the next interval.
type Prober interface {
	// ProbeNow makes target's next probe due now if its breaker is open
	// and its probe later, and reports whether the breaker is open.
	ProbeNow(ctx context.Context, target string) (open bool, err error)
}

// Scope kinds.
const (
	KindHandler = "handler"
	KindTenant  = "tenant"
	KindTarget  = "target"
)

// Scope is what a pause covers, and what a held event waits for: a
// handler, a tenant or a target, by name.
type Scope struct{ Kind, Name string }

// ErrBadScope is wrapped by the errors of a scope that is not
// handler/<name>, tenant/<name> or target/<name>.
var ErrBadScope = errors.New("targets: bad scope")

// String returns "kind#name", the held record's heldOn.
func (sc Scope) String() string { return sc.Kind + "#" + sc.Name }

// IsZero reports whether sc is the zero Scope (an admission that holds
// nothing).
func (sc Scope) IsZero() bool { return sc == Scope{} }

// Validate returns an error wrapping [ErrBadScope] unless sc has a known
// kind and a name an event can be held on: a tenant name
// ([webhook.ValidTenant]) for a tenant, a handler or target name
// ([registry.ValidName], the rule process.Handle and process.Target
// enforce) for the others. A scope that fails it could never match.
func (sc Scope) Validate() error {
	var ok bool
	var rule string
	switch sc.Kind {
	case KindTenant:
		ok, rule = webhook.ValidTenant(sc.Name), webhook.TenantNameRule
	case KindHandler, KindTarget:
		ok, rule = registry.ValidName(sc.Name), registry.NameRule
	default:
		return fmt.Errorf("%w: kind %q: want handler, tenant or target", ErrBadScope, sc.Kind)
	}
	if !ok {
		return fmt.Errorf("%w: %s name %.80q can never match: want %s", ErrBadScope, sc.Kind, sc.Name, rule)
	}
	return nil
}

// ParseScope parses the CLI's "kind/name" (target/forward/acme) or a held
// record's "kind#name" (target#forward/acme): the kind ends at the first
// '/' or '#'.
func ParseScope(s string) (Scope, error) {
	i := strings.IndexAny(s, "/#")
	if i < 0 {
		return Scope{}, fmt.Errorf("%w: %q: want handler/<name>, tenant/<name> or target/<name>", ErrBadScope, s)
	}
	sc := Scope{Kind: s[:i], Name: s[i+1:]}
	if err := sc.Validate(); err != nil {
		return Scope{}, err
	}
	return sc, nil
}

// Pause is one pause.
type Pause struct {
	Scope  Scope
	By     string    // who paused (the CLI's user, "page")
	Reason string    // free text
	At     time.Time // when
}

// Breaker states.
const (
	StateClosed = "closed"
	StateOpen   = "open"
)

// Breaker is the state of one target's breaker.
type Breaker struct {
	Target string
	// State is StateClosed or StateOpen.
	State string
	// WindowStart is when the current window began (closed); Calls, Fails
	// and Oks are its reserved calls and reported outcomes (calls not yet
	// reported are pending).
	WindowStart       time.Time
	Calls, Fails, Oks int
	// OpenedAt is when it last opened; ProbeAt when the next probe may
	// start (open).
	OpenedAt, ProbeAt time.Time
}

// Open reports whether the breaker is open.
func (b Breaker) Open() bool { return b.State == StateOpen }

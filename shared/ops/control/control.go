package control

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/hookwall/hookwall/shared/aws/bus"
	"github.com/hookwall/hookwall/shared/base/batch"
	"github.com/hookwall/hookwall/shared/engine/drain"
	"github.com/hookwall/hookwall/shared/state/targets"
)

// Gate is the targets' shared state the controls use; targets.Gate
// satisfies it.
type Gate interface {
	Pause(ctx context.Context, sc targets.Scope, by, reason string) error
	Resume(ctx context.Context, sc targets.Scope) error
	Pauses(ctx context.Context) ([]targets.Pause, error)
	Breakers(ctx context.Context) ([]targets.Breaker, error)
}

// HeldCounter counts the records held on a scope (on is its "kind#name");
// *store.Table satisfies it.
type HeldCounter interface {
	HeldCount(ctx context.Context, on string) (int, error)
}

// Drainer releases the records held on a scope at its target's rate;
// *drain.Drainer satisfies it.
type Drainer interface {
	Release(ctx context.Context, sc targets.Scope, opts drain.Options) (drain.Progress, error)
}

// Publisher publishes operational events; *bus.Publisher satisfies it (a
// nil one publishes nothing).
type Publisher interface {
	PublishOps(ctx context.Context, ops []bus.Op) error
}

// Config configures a [Controller].
type Config struct {
	// Gate is the targets' shared state (required).
	Gate Gate
	// Held counts the held records for the panel (optional; nil: 0).
	Held HeldCounter
	// Drain releases a resumed scope's held records (optional; nil: the
	// sweeper releases them at its next runs).
	Drain Drainer
	// Ops publishes the paused and resumed events (optional).
	Ops Publisher
	// Now is the clock of the events (optional; default time.Now).
	Now func() time.Time
	// Sleep waits d or until ctx ends: a resume's [Settle] (optional;
	// default a timer).
	Sleep func(ctx context.Context, d time.Duration) error
}

// Settle is how long a resume waits, after its writes and before it
// drains, when it ended a pause or brought a probe forward. Every
// processor trusts its copy of the pauses for at most
// targets.PauseCacheFor and of a breaker for at most
// targets.BreakerCacheFor, from when it read them; so once Settle has
// passed, no processor still sees the pause (or the probe's old time), and
// what the drain releases runs instead of being held again until the
// sweeper's recheck (targets.PauseRecheck, 5 min). The margin covers clock
// skew between instances and a hold decided just before the copies
// expired and written just after. Every processor thus honours a resume
// within Settle, and the events the drain releases run from Settle on, at
// their target's rate.
const Settle = targets.PauseCacheFor + settleMargin

const settleMargin = 500 * time.Millisecond

// publishTimeout bounds the publication of an operational event, which
// goes out even when the action's context has ended (a drain cut off by
// its time limit).
const publishTimeout = 10 * time.Second

// Controller pauses, resumes and reads the targets' state. It is safe for
// concurrent use.
type Controller struct{ cfg Config }

// New returns the Controller described by cfg.
func New(cfg Config) (*Controller, error) {
	if cfg.Gate == nil {
		return nil, errors.New("control: Gate is required")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Sleep == nil {
		cfg.Sleep = batch.Sleep
	}
	return &Controller{cfg: cfg}, nil
}

// Name writes sc as the CLI and the page take it: kind/name.
func Name(sc targets.Scope) string { return sc.Kind + "/" + sc.Name }

// Result is what a pause or a resume did.
type Result struct {
	// WasPaused says the scope was paused before a resume.
	WasPaused bool
	// Drained says a resume ran the drain, and Released is how many held
	// records it released that run now (each counted once); Waiting is how
	// many it released whose target is blocked (its breaker open, or the
	// target paused): the processor holds them again on that target.
	Drained  bool
	Released int
	Waiting  int
	// Probing says the resumed target's breaker is open: its probe was
	// made due now and one held record released to carry it (Released
	// is 1, or 0 when nothing was held); the rest run once the probe
	// succeeds.
	Probing bool
	// Blocked says the drain stopped because the scope was blocked again
	// meanwhile (paused again, or its breaker opened): the rest stays
	// held, released by the next resume, probe or sweep. Not an error.
	Blocked bool
	// OpsErr is why the operational event was not published (the action
	// itself is done).
	OpsErr error
}

// Pause pauses sc for by (with reason) and publishes hookwall.control.paused.
func (c *Controller) Pause(ctx context.Context, sc targets.Scope, by, reason string) (Result, error) {
	if err := c.cfg.Gate.Pause(ctx, sc, by, reason); err != nil {
		return Result{}, fmt.Errorf("pause %s: %w", Name(sc), err)
	}
	return Result{OpsErr: c.publish(ctx, bus.Op{Type: bus.DetailTypeControlPaused, Scope: sc.String(), Reason: reason})}, nil
}

// ResumeOptions configures [Controller.Resume].
type ResumeOptions struct {
	// NoDrain only ends the pause: the sweeper releases the held records.
	NoDrain bool
	// Timeout bounds the drain (0: none); what it leaves held, the
	// sweeper releases.
	Timeout time.Duration
	// Progress is called with the count released so far (optional).
	Progress func(released int)
}

// Resume ends the pause of sc (if any), drains the records held on it at
// the target's rate, and publishes hookwall.control.resumed with the count
// released.
//
// What it releases runs (see [Settle]): when it ended a pause, or when sc
// is a target whose breaker is open, it waits Settle before draining, so
// that no processor holds the released records again on a pause or a probe
// time it read before the resume. A target whose breaker is open gets its
// probe made due now and one held record released as its carrier (a drain
// of everything would only be held again); the rest follow once the probe
// succeeds. A drain that stops early on an error, on records it could not
// release, or on its Timeout, returns an error with the Result: the pause
// is over and the sweeper releases the rest. A scope blocked again during
// the drain is not an error (Result.Blocked).
func (c *Controller) Resume(ctx context.Context, sc targets.Scope, opts ResumeOptions) (Result, error) {
	pauses, err := c.cfg.Gate.Pauses(ctx)
	if err != nil {
		return Result{}, fmt.Errorf("resume %s: %w", Name(sc), err)
	}
	res := Result{WasPaused: slices.ContainsFunc(pauses, func(p targets.Pause) bool { return p.Scope == sc })}
	if err := c.cfg.Gate.Resume(ctx, sc); err != nil {
		return res, fmt.Errorf("resume %s: %w", Name(sc), err)
	}
	var drainErr error
	if !opts.NoDrain && c.cfg.Drain != nil {
		drainErr = c.release(ctx, sc, opts, &res)
	}
	res.OpsErr = c.publish(ctx, bus.Op{Type: bus.DetailTypeControlResumed, Scope: sc.String(), Count: res.Released + res.Waiting})
	return res, drainErr
}

// release is a resume's drain: the probe brought forward for an open
// breaker, Settle waited when anything changed, then the drain.
func (c *Controller) release(ctx context.Context, sc targets.Scope, opts ResumeOptions, res *Result) error {
	settle := res.WasPaused
	if p, ok := c.cfg.Gate.(targets.Prober); ok && sc.Kind == targets.KindTarget {
		open, err := p.ProbeNow(ctx, sc.Name)
		if err != nil {
			return fmt.Errorf("resume %s: bring its probe forward: %w", Name(sc), err)
		}
		res.Probing = open
		settle = settle || open
	}
	if settle {
		if err := c.cfg.Sleep(ctx, Settle); err != nil {
			return fmt.Errorf("resume %s: before the drain: %w", Name(sc), err)
		}
	}
	res.Drained = true
	if opts.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opts.Timeout)
		defer cancel()
	}
	dopts := drain.Options{}
	if res.Probing {
		dopts.Force, dopts.Limit = true, 1
	}
	if opts.Progress != nil {
		dopts.Progress = func(p drain.Progress) { opts.Progress(p.Released + p.Waiting) }
	}
	p, err := c.cfg.Drain.Release(ctx, sc, dopts)
	res.Released, res.Waiting, res.Blocked = p.Released, p.Waiting, p.Blocked
	switch {
	case err != nil:
		return fmt.Errorf("drain %s: %w", Name(sc), err)
	case p.Errors > 0:
		return fmt.Errorf("%d event(s) could not be released or sent (the sweeper retries them)", p.Errors)
	}
	return nil
}

// Summary says what a resume of sc did, for the CLI and the page: what it
// released runs now; what waits and why; never "failed" for a breaker
// that is merely still open.
func (r Result) Summary(sc targets.Scope) string {
	name := Name(sc)
	if !r.Drained {
		return "resumed " + name + ": the sweeper releases its held events at its next rounds"
	}
	if r.Probing {
		if r.Released+r.Waiting == 0 {
			return fmt.Sprintf("resumed %s: its breaker is open and its probe is due now; nothing was held on it, "+
				"so the next event for it carries the probe", name)
		}
		return fmt.Sprintf("resumed %s: its breaker is open: its probe is made now, carried by 1 held event; "+
			"the others run once the probe succeeds", name)
	}
	s := fmt.Sprintf("resumed %s: released %d held event(s), running now at the target's rate", name, r.Released)
	if r.Waiting > 0 {
		s += fmt.Sprintf("; %d more wait on their target (its breaker open, or the target paused) and run once it is back", r.Waiting)
	}
	if r.Blocked {
		s += fmt.Sprintf("; then %s was blocked again (paused again, or its breaker opened): the rest stays held until it is resumed or probed", name)
	}
	return s
}

// publish publishes op at now, even after ctx ended, within publishTimeout.
func (c *Controller) publish(ctx context.Context, op bus.Op) error {
	if c.cfg.Ops == nil {
		return nil
	}
	op.At = c.cfg.Now()
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), publishTimeout)
	defer cancel()
	if err := c.cfg.Ops.PublishOps(pctx, []bus.Op{op}); err != nil {
		return fmt.Errorf("publish %s: %w", op.Type, err)
	}
	return nil
}

// Target is one target of the panel.
type Target struct {
	Target   string    `json:"target"`
	State    string    `json:"state"`
	Calls    int       `json:"calls"`
	Fails    int       `json:"fails"`
	OpenedAt time.Time `json:"openedAt,omitzero"`
	// ProbeAt is when an open breaker is probed next, never in the past:
	// a probe already due shows now, with ProbeDue set (it is made by the
	// next event for the target, by the sweeper's next carrier, or at
	// once by a resume of the target).
	ProbeAt  time.Time `json:"probeAt,omitzero"`
	ProbeDue bool      `json:"probeDue,omitempty"`
	Held     int       `json:"held"`
	// Scope is the target's scope as the CLI and the page take it.
	Scope string `json:"scope"`
	// Of and Tenant are, for one tenant's breaker of a target shared by
	// tenants (Target "<target>/@<tenant>"), that target and the tenant;
	// empty for a target that names its tenant.
	Of     string `json:"of,omitempty"`
	Tenant string `json:"tenant,omitempty"`
	// Paused is set when the target is paused: itself or, for a tenant's
	// breaker, the shared target; PausedBy is that pause's scope (what a
	// resume names).
	Paused   bool   `json:"paused"`
	PausedBy string `json:"pausedBy,omitempty"`
}

// Pause is one pause of the panel.
type Pause struct {
	// Scope is kind/name, as the CLI and the page take it.
	Scope  string    `json:"scope"`
	By     string    `json:"by,omitempty"`
	Reason string    `json:"reason,omitempty"`
	At     time.Time `json:"at"`
	Held   int       `json:"held"`
}

// Panel is what `hookwall targets` and the page's panel show.
type Panel struct {
	Targets []Target `json:"targets"`
	Pauses  []Pause  `json:"pauses"`
}

// Held counts the records held on sc (0 without a HeldCounter).
func (c *Controller) Held(ctx context.Context, sc targets.Scope) (int, error) {
	if c.cfg.Held == nil {
		return 0, nil
	}
	n, err := c.cfg.Held.HeldCount(ctx, sc.String())
	if err != nil {
		return 0, fmt.Errorf("control: held on %s: %w", Name(sc), err)
	}
	return n, nil
}

// Panel reads the breakers, the pauses and the held counts of each.
func (c *Controller) Panel(ctx context.Context) (Panel, error) {
	out := Panel{Targets: []Target{}, Pauses: []Pause{}}
	breakers, err := c.cfg.Gate.Breakers(ctx)
	if err != nil {
		return out, fmt.Errorf("control: breakers: %w", err)
	}
	pauses, err := c.cfg.Gate.Pauses(ctx)
	if err != nil {
		return out, fmt.Errorf("control: pauses: %w", err)
	}
	paused := map[targets.Scope]bool{}
	for _, p := range pauses {
		n, err := c.Held(ctx, p.Scope)
		if err != nil {
			return out, err
		}
		paused[p.Scope] = true
		out.Pauses = append(out.Pauses, Pause{Scope: Name(p.Scope), By: p.By, Reason: p.Reason, At: p.At, Held: n})
	}
	for _, b := range breakers {
		sc := targets.Scope{Kind: targets.KindTarget, Name: b.Target}
		n, err := c.Held(ctx, sc)
		if err != nil {
			return out, err
		}
		t := Target{Target: b.Target, State: b.State, Calls: b.Calls, Fails: b.Fails,
			OpenedAt: b.OpenedAt, ProbeAt: b.ProbeAt, Held: n, Scope: Name(sc)}
		if of, tenant := targets.SplitBreakerKey(b.Target); tenant != "" {
			t.Of, t.Tenant = of, tenant
		}
		for _, w := range targets.Within(sc) {
			if paused[w] {
				t.Paused, t.PausedBy = true, Name(w)
				break
			}
		}
		if now := c.cfg.Now(); b.State == targets.StateOpen && !b.ProbeAt.After(now) {
			t.ProbeAt, t.ProbeDue = now, true
		}
		out.Targets = append(out.Targets, t)
	}
	return out, nil
}

package control

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/hookwall/hookwall/shared/bus"
	"github.com/hookwall/hookwall/shared/drain"
	"github.com/hookwall/hookwall/shared/targets"
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
}

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
	return &Controller{cfg: cfg}, nil
}

// Name writes sc as the CLI and the page take it: kind/name.
func Name(sc targets.Scope) string { return sc.Kind + "/" + sc.Name }

// Result is what a pause or a resume did.
type Result struct {
	// WasPaused says the scope was paused before a resume.
	WasPaused bool
	// Drained says a resume ran the drain, and Released is how many held
	// records it released.
	Drained  bool
	Released int
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
// released. A drain that stops early (an error, sc blocked again, records
// it could not release, its Timeout) returns an error with the Result: the
// pause is over and the sweeper releases the rest.
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
		res.Drained = true
		res.Released, drainErr = c.drain(ctx, sc, opts)
	}
	res.OpsErr = c.publish(ctx, bus.Op{Type: bus.DetailTypeControlResumed, Scope: sc.String(), Count: res.Released})
	return res, drainErr
}

// drain releases what is held on sc, within opts.Timeout.
func (c *Controller) drain(ctx context.Context, sc targets.Scope, opts ResumeOptions) (int, error) {
	if opts.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opts.Timeout)
		defer cancel()
	}
	var progress func(drain.Progress)
	if opts.Progress != nil {
		progress = func(p drain.Progress) { opts.Progress(p.Released) }
	}
	p, err := c.cfg.Drain.Release(ctx, sc, drain.Options{Progress: progress})
	switch {
	case err != nil:
		return p.Released, fmt.Errorf("drain %s: %w", Name(sc), err)
	case p.Blocked:
		return p.Released, fmt.Errorf("%s is blocked again (paused, or its breaker open): the rest stays held", Name(sc))
	case p.Errors > 0:
		return p.Released, fmt.Errorf("%d event(s) could not be released or sent (the sweeper retries them)", p.Errors)
	}
	return p.Released, nil
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
	ProbeAt  time.Time `json:"probeAt,omitzero"`
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
		out.Targets = append(out.Targets, t)
	}
	return out, nil
}

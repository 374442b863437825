package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hookwall/hookwall/shared/bus"
	"github.com/hookwall/hookwall/shared/settings"
	"github.com/hookwall/hookwall/shared/targets"
)

// controller is what pause, resume and targets need of the targets'
// shared state (targets.Gate).
type controller interface {
	Pause(ctx context.Context, sc targets.Scope, by, reason string) error
	Resume(ctx context.Context, sc targets.Scope) error
	Pauses(ctx context.Context) ([]targets.Pause, error)
	Breakers(ctx context.Context) ([]targets.Breaker, error)
}

// heldCounter counts the records held on a scope (store.Table.HeldCount;
// on is the scope's "kind#name").
type heldCounter interface {
	HeldCount(ctx context.Context, on string) (int, error)
}

// drainer releases the events held on a scope at its target's rate,
// reporting each release, and returns how many it released (the drain).
type drainer func(ctx context.Context, sc targets.Scope, progress func(released int)) (int, error)

// opsPublisher publishes operational events (*bus.Publisher; nil: none).
type opsPublisher interface {
	PublishOps(ctx context.Context, ops []bus.Op) error
}

// scopeArg reads the one scope argument of cmd: handler/<name>,
// tenant/<name> or target/<name>.
func scopeArg(cmd string, pos []string) (targets.Scope, error) {
	if len(pos) != 1 {
		return targets.Scope{}, usagef(cmd, "want one scope (handler/NAME, tenant/NAME or target/NAME), got %d arguments", len(pos))
	}
	if !strings.Contains(pos[0], "/") {
		return targets.Scope{}, usagef(cmd, "%q: want handler/NAME, tenant/NAME or target/NAME", pos[0])
	}
	sc, err := targets.ParseScope(pos[0])
	if err != nil {
		return targets.Scope{}, usagef(cmd, "%q: want handler/NAME, tenant/NAME or target/NAME", pos[0])
	}
	return sc, nil
}

// cliScope writes sc as the CLI takes it: kind/name.
func cliScope(sc targets.Scope) string { return sc.Kind + "/" + sc.Name }

// controlBackend opens what the control commands use.
func (a *app) controlBackend(ctx context.Context) (*backend, error) {
	_, b, err := a.backend(ctx, settings.CLINeeds{Table: true, Queue: true})
	if err != nil {
		return nil, err
	}
	if b.gate == nil {
		return nil, errors.New("no targets' state on this backend")
	}
	return b, nil
}

// publishOp publishes op, a failure noted on stderr: the control action
// itself is done.
func (a *app) publishOp(ctx context.Context, b *backend, op bus.Op) {
	if b.ops == nil {
		return
	}
	if err := b.ops.PublishOps(ctx, []bus.Op{op}); err != nil {
		fmt.Fprintf(a.stderr, "note: the %s event was not published: %v\n", op.Type, err)
	}
}

func (a *app) pause(ctx context.Context, args []string) error {
	const cmd = "pause"
	fs := a.flagSet(cmd)
	reason := fs.String("reason", "", "why (shown by 'hookwall targets' and on held events)")
	pos, err := a.parse(cmd, fs, args)
	if err != nil {
		return err
	}
	sc, err := scopeArg(cmd, pos)
	if err != nil {
		return err
	}
	b, err := a.controlBackend(ctx)
	if err != nil {
		return err
	}
	by := a.user()
	if err := b.gate.Pause(ctx, sc, by, *reason); err != nil {
		return fmt.Errorf("pause %s: %w", cliScope(sc), err)
	}
	a.publishOp(ctx, b, bus.Op{Type: bus.DetailTypeControlPaused, Scope: sc.String(), Reason: *reason, At: a.now()})
	if a.json {
		return a.writeJSON(struct {
			Scope  string `json:"scope"`
			Paused bool   `json:"paused"`
			By     string `json:"by"`
			Reason string `json:"reason,omitempty"`
		}{cliScope(sc), true, by, *reason})
	}
	fmt.Fprintf(a.stdout, "paused %s: its events are still received and stored, and held instead of processed "+
		"(processors see the pause within %s); 'hookwall resume %s' drains them\n", cliScope(sc), targets.PauseCacheFor, cliScope(sc))
	return nil
}

func (a *app) resume(ctx context.Context, args []string) error {
	const cmd = "resume"
	fs := a.flagSet(cmd)
	noDrain := fs.Bool("no-drain", false, "only end the pause: the sweeper releases the held events at its next rounds")
	pos, err := a.parse(cmd, fs, args)
	if err != nil {
		return err
	}
	sc, err := scopeArg(cmd, pos)
	if err != nil {
		return err
	}
	b, err := a.controlBackend(ctx)
	if err != nil {
		return err
	}
	pauses, err := b.gate.Pauses(ctx)
	if err != nil {
		return err
	}
	wasPaused := slices.ContainsFunc(pauses, func(p targets.Pause) bool { return p.Scope == sc })
	if err := b.gate.Resume(ctx, sc); err != nil {
		return fmt.Errorf("resume %s: %w", cliScope(sc), err)
	}
	if !wasPaused && !a.json {
		fmt.Fprintf(a.stderr, "note: %s was not paused; draining what is held on it anyway\n", cliScope(sc))
	}
	released := 0
	if !*noDrain && b.drain != nil {
		total := -1
		if b.held != nil {
			if n, err := b.held.HeldCount(ctx, sc.String()); err == nil {
				total = n
			}
		}
		var last time.Time
		start := a.now()
		released, err = b.drain(ctx, sc, func(n int) {
			now := a.now()
			if !last.IsZero() && now.Sub(last) < progressEvery {
				return
			}
			last = now
			line := drainLine(sc, n, total, now.Sub(start))
			if a.progress {
				fmt.Fprintf(a.stderr, "\r\033[K%s", line)
			} else {
				fmt.Fprintln(a.stderr, line)
			}
		})
		if a.progress {
			fmt.Fprint(a.stderr, "\r\033[K")
		}
		if err != nil {
			return fmt.Errorf("resume %s: the pause is over, but the drain stopped after %d event(s) (the sweeper releases the rest): %w",
				cliScope(sc), released, err)
		}
	}
	a.publishOp(ctx, b, bus.Op{Type: bus.DetailTypeControlResumed, Scope: sc.String(), Count: released, At: a.now()})
	if a.json {
		return a.writeJSON(struct {
			Scope     string `json:"scope"`
			WasPaused bool   `json:"wasPaused"`
			Released  int    `json:"released"`
		}{cliScope(sc), wasPaused, released})
	}
	switch {
	case *noDrain || b.drain == nil:
		fmt.Fprintf(a.stdout, "resumed %s: the sweeper releases its held events at its next rounds\n", cliScope(sc))
	default:
		fmt.Fprintf(a.stdout, "resumed %s: released %d held event(s) at the target's rate\n", cliScope(sc), released)
	}
	return nil
}

// drainLine is a progress line of resume's drain.
func drainLine(sc targets.Scope, n, total int, elapsed time.Duration) string {
	s := fmt.Sprintf("resume %s: released %d", cliScope(sc), n)
	if total >= 0 {
		s += fmt.Sprintf(" of about %d held", total)
	}
	if n > 0 && elapsed > 0 {
		pace := float64(n) / elapsed.Seconds()
		s += fmt.Sprintf(", %.1f/s", pace)
		if total > n {
			s += fmt.Sprintf(", ETA %s", time.Duration(float64(total-n)/pace*float64(time.Second)).Round(time.Second))
		}
	}
	return s
}

// targetView is one row of `hookwall targets`.
type targetView struct {
	Target   string    `json:"target"`
	State    string    `json:"state"`
	Calls    int       `json:"calls"`
	Fails    int       `json:"fails"`
	OpenedAt time.Time `json:"openedAt,omitzero"`
	ProbeAt  time.Time `json:"probeAt,omitzero"`
	Held     int       `json:"held"`
}

// pauseView is one pause of `hookwall targets`.
type pauseView struct {
	Scope  string    `json:"scope"`
	By     string    `json:"by,omitempty"`
	Reason string    `json:"reason,omitempty"`
	At     time.Time `json:"at"`
	Held   int       `json:"held"`
}

func (a *app) targetsCmd(ctx context.Context, args []string) error {
	const cmd = "targets"
	pos, err := a.parse(cmd, a.flagSet(cmd), args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef(cmd, "unexpected argument %q", pos[0])
	}
	b, err := a.controlBackend(ctx)
	if err != nil {
		return err
	}
	breakers, err := b.gate.Breakers(ctx)
	if err != nil {
		return err
	}
	pauses, err := b.gate.Pauses(ctx)
	if err != nil {
		return err
	}
	count := func(sc targets.Scope) (int, error) {
		if b.held == nil {
			return 0, nil
		}
		return b.held.HeldCount(ctx, sc.String())
	}
	tv := make([]targetView, 0, len(breakers))
	for _, br := range breakers {
		n, err := count(targets.Scope{Kind: targets.KindTarget, Name: br.Target})
		if err != nil {
			return err
		}
		tv = append(tv, targetView{Target: br.Target, State: br.State, Calls: br.Calls, Fails: br.Fails,
			OpenedAt: br.OpenedAt, ProbeAt: br.ProbeAt, Held: n})
	}
	pv := make([]pauseView, 0, len(pauses))
	for _, p := range pauses {
		n, err := count(p.Scope)
		if err != nil {
			return err
		}
		pv = append(pv, pauseView{Scope: cliScope(p.Scope), By: p.By, Reason: p.Reason, At: p.At, Held: n})
	}
	if a.json {
		return a.writeJSON(struct {
			Targets []targetView `json:"targets"`
			Pauses  []pauseView  `json:"pauses"`
		}{tv, pv})
	}
	if len(tv) == 0 {
		fmt.Fprintln(a.stdout, "no target has been called yet")
	} else {
		w := a.table()
		fmt.Fprintln(w, "TARGET\tBREAKER\tWINDOW CALLS\tFAILS\tOPENED\tNEXT PROBE\tHELD")
		for _, t := range tv {
			opened, probe := "-", "-"
			if t.State == targets.StateOpen {
				opened, probe = t.OpenedAt.UTC().Format(time.RFC3339), t.ProbeAt.UTC().Format(time.RFC3339)
			}
			fmt.Fprintf(w, "%s\t%s\t%d\t%d\t%s\t%s\t%d\n", t.Target, t.State, t.Calls, t.Fails, opened, probe, t.Held)
		}
		_ = w.Flush()
	}
	fmt.Fprintln(a.stdout)
	if len(pv) == 0 {
		fmt.Fprintln(a.stdout, "no pause")
		return nil
	}
	w := a.table()
	fmt.Fprintln(w, "PAUSED\tSINCE\tBY\tHELD\tREASON")
	for _, p := range pv {
		fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%s\n", p.Scope, p.At.UTC().Format(time.RFC3339), cell(p.By, 24), p.Held, cell(p.Reason, 60))
	}
	return w.Flush()
}

package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/hookwall/hookwall/shared/config/settings"
	"github.com/hookwall/hookwall/shared/ops/control"
	"github.com/hookwall/hookwall/shared/state/targets"
)

// controller is what pause, resume and targets need of the targets'
// shared state (targets.Gate).
type controller = control.Gate

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
		return targets.Scope{}, usagef(cmd, "%.100q: want handler/NAME, tenant/NAME or target/NAME (%s)", pos[0],
			strings.TrimPrefix(err.Error(), targets.ErrBadScope.Error()+": "))
	}
	return sc, nil
}

// controls opens what the control commands use: the controller on the
// backend's targets' state, held counts, drain and op events.
func (a *app) controls(ctx context.Context) (*control.Controller, error) {
	_, b, err := a.backend(ctx, settings.CLINeeds{Table: true, Queue: true})
	if err != nil {
		return nil, err
	}
	if b.gate == nil {
		return nil, errors.New("no targets' state on this backend")
	}
	cfg := control.Config{Gate: b.gate, Now: a.now}
	if b.held != nil {
		cfg.Held = b.held
	}
	if b.drain != nil {
		cfg.Drain = b.drain
	}
	if b.ops != nil {
		cfg.Ops = b.ops
	}
	return control.New(cfg)
}

// scopeCommand parses the flags and the one scope of cmd and opens the
// controls.
func (a *app) scopeCommand(ctx context.Context, cmd string, fs *flag.FlagSet, args []string) (targets.Scope, *control.Controller, error) {
	pos, err := a.parse(cmd, fs, args)
	if err != nil {
		return targets.Scope{}, nil, err
	}
	sc, err := scopeArg(cmd, pos)
	if err != nil {
		return targets.Scope{}, nil, err
	}
	c, err := a.controls(ctx)
	return sc, c, err
}

// noteOps says on stderr that an operational event was not published: the
// action itself is done.
func (a *app) noteOps(res control.Result) {
	if res.OpsErr != nil {
		fmt.Fprintf(a.stderr, "note: %v\n", res.OpsErr)
	}
}

func (a *app) pause(ctx context.Context, args []string) error {
	const cmd = "pause"
	fs := a.flagSet(cmd)
	reason := fs.String("reason", "", "why (shown by 'hookwall targets' and on held events)")
	sc, c, err := a.scopeCommand(ctx, cmd, fs, args)
	if err != nil {
		return err
	}
	by := a.user()
	res, err := c.Pause(ctx, sc, by, *reason)
	if err != nil {
		return err
	}
	a.noteOps(res)
	if a.json {
		return a.writeJSON(struct {
			Scope  string `json:"scope"`
			Paused bool   `json:"paused"`
			By     string `json:"by"`
			Reason string `json:"reason,omitempty"`
		}{control.Name(sc), true, by, *reason})
	}
	fmt.Fprintf(a.stdout, "paused %s: its events are still received and stored, and held instead of processed "+
		"(processors see the pause within %s); 'hookwall resume %s' drains them\n", control.Name(sc), targets.PauseCacheFor, control.Name(sc))
	return nil
}

func (a *app) resume(ctx context.Context, args []string) error {
	const cmd = "resume"
	fs := a.flagSet(cmd)
	noDrain := fs.Bool("no-drain", false, "only end the pause: the sweeper releases the held events at its next rounds")
	sc, c, err := a.scopeCommand(ctx, cmd, fs, args)
	if err != nil {
		return err
	}
	total := -1
	if !*noDrain {
		if n, err := c.Held(ctx, sc); err == nil {
			total = n
		}
	}
	var last time.Time
	start := a.now()
	res, err := c.Resume(ctx, sc, control.ResumeOptions{NoDrain: *noDrain, Progress: func(n int) {
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
	}})
	if a.progress && res.Drained {
		fmt.Fprint(a.stderr, "\r\033[K")
	}
	a.noteOps(res)
	switch {
	case err != nil && !res.Drained:
		return err
	case err != nil:
		return fmt.Errorf("resume %s: the pause is over, but the drain stopped after %d event(s) (the sweeper releases the rest): %w",
			control.Name(sc), res.Released, err)
	}
	if !res.WasPaused && !a.json {
		fmt.Fprintf(a.stderr, "note: %s was not paused; draining what is held on it anyway\n", control.Name(sc))
	}
	if a.json {
		return a.writeJSON(struct {
			Scope     string `json:"scope"`
			WasPaused bool   `json:"wasPaused"`
			Released  int    `json:"released"`
			Waiting   int    `json:"waiting"`
			Probing   bool   `json:"probing"`
			Blocked   bool   `json:"blocked"`
		}{control.Name(sc), res.WasPaused, res.Released, res.Waiting, res.Probing, res.Blocked})
	}
	fmt.Fprintln(a.stdout, res.Summary(sc))
	return nil
}

// drainLine is a progress line of resume's drain.
func drainLine(sc targets.Scope, n, total int, elapsed time.Duration) string {
	s := fmt.Sprintf("resume %s: released %d", control.Name(sc), n)
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

func (a *app) targetsCmd(ctx context.Context, args []string) error {
	const cmd = "targets"
	pos, err := a.parse(cmd, a.flagSet(cmd), args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef(cmd, "unexpected argument %q", pos[0])
	}
	c, err := a.controls(ctx)
	if err != nil {
		return err
	}
	p, err := c.Panel(ctx)
	if err != nil {
		return err
	}
	if a.json {
		return a.writeJSON(p)
	}
	// TARGET is the breaker's key (what pause target/<TARGET> names): a
	// target shared by tenants has one per tenant, <target>/@<tenant>,
	// TENANT says whose ("-": the target names its tenant).
	err = printTable(a, "no target has been called yet", "TARGET\tTENANT\tBREAKER\tWINDOW CALLS\tFAILS\tOPENED\tNEXT PROBE\tHELD", p.Targets,
		func(w io.Writer, t control.Target) {
			opened, probe := "-", "-"
			if t.State == targets.StateOpen {
				opened, probe = t.OpenedAt.UTC().Format(time.RFC3339), t.ProbeAt.UTC().Format(time.RFC3339)
				if t.ProbeDue {
					probe = "due now"
				}
			}
			state := t.State
			if t.Paused {
				state += " (paused: " + t.PausedBy + ")"
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%d\t%s\t%s\t%d\n", t.Target, cmp.Or(t.Tenant, "-"), state, t.Calls, t.Fails, opened, probe, t.Held)
		})
	if err != nil {
		return err
	}
	fmt.Fprintln(a.stdout)
	return printTable(a, "no pause", "PAUSED\tSINCE\tBY\tHELD\tREASON", p.Pauses, func(w io.Writer, p control.Pause) {
		fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%s\n", p.Scope, p.At.UTC().Format(time.RFC3339), cell(p.By, 24), p.Held, cell(p.Reason, 60))
	})
}

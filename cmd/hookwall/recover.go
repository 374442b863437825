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
	"github.com/hookwall/hookwall/shared/ops/recovery"
)

// recoverer runs recovery jobs (recovery.Jobs).
type recoverer interface {
	Create(ctx context.Context, f recovery.Filter, rate float64, by string) (*recovery.Job, error)
	Run(ctx context.Context, id string, progress func(recovery.Job)) (*recovery.Job, error)
	Cancel(ctx context.Context, id string) (*recovery.Job, bool, error)
	Get(ctx context.Context, id string) (*recovery.Job, error)
	List(ctx context.Context, limit int) ([]*recovery.Job, error)
	Detach(ctx context.Context, id string) (*recovery.Job, error)
}

// progressEvery is the least time between two progress lines.
const progressEvery = time.Second

func (a *app) recover(ctx context.Context, args []string) error {
	const cmd = "recover"
	fs := a.flagSet(cmd)
	since := fs.String("since", "", "the window's start: a duration back from now (90m, 2h, 7d) or an RFC 3339 time (required for a new job)")
	until := fs.String("until", "", "the window's end (excluded): a duration back from now or an RFC 3339 time (default: now)")
	status := fs.String("status", "FAILED", "states to recover, comma-separated: FAILED, DEAD, COMPENSATED")
	tenant := fs.String("tenant", "", "only this tenant's events")
	handler := fs.String("handler", "", "only the events whose last attempt was bound for this handler's target (its name, or name/<tenant>)")
	rate := fs.Float64("rate", 0, "a new job: at most this many events per second per target, below HOOKWALL_TARGET_RATE (0: that rate alone)")
	resume := fs.String("resume", "", "resume the job ID (interrupted, cancelled, or left by a process that died)")
	cancel := fs.String("cancel", "", "cancel the job ID (its process stops within a second; --resume ID goes on)")
	list := fs.Bool("list", false, "list the latest jobs")
	detach := fs.Bool("detach", false, "a new job or --resume ID: hand it to the sweeper, which runs it in the background, and return at once")
	watch := fs.String("watch", "", "show the progress and ETA of the job ID until it ends (Ctrl-C stops watching, not the job)")
	pos, err := a.parse(cmd, fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef(cmd, "unexpected argument %q", pos[0])
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	modes := 0
	for _, m := range []string{"resume", "cancel", "list", "watch"} {
		if set[m] {
			modes++
		}
	}
	newJob := set["since"] || set["until"] || set["status"] || set["tenant"] || set["handler"]
	switch {
	case modes > 1 || (modes == 1 && newJob):
		return usagef(cmd, "give either a window (--since …) for a new job, or one of --resume ID, --cancel ID, --list, --watch ID")
	case *detach && modes == 1 && !set["resume"]:
		return usagef(cmd, "--detach applies to a new job or to --resume ID")
	case modes == 0 && !set["since"]:
		return usagef(cmd, "--since is required (the window's start), e.g. --since 2h or --since 2026-05-01T10:00:00Z")
	case *rate < 0:
		return usagef(cmd, "--rate %g: want 0 or more", *rate)
	case set["rate"] && modes > 0:
		return usagef(cmd, "--rate applies to a new job (a resumed job keeps the rate it was created with)")
	}
	for _, id := range []string{*resume, *cancel, *watch} {
		if id != "" && !recovery.ValidID(id) {
			return usagef(cmd, "%q is not a job id (see 'hookwall recover --list')", id)
		}
	}
	var f recovery.Filter
	if modes == 0 {
		if f, err = recovery.ParseFilter(recovery.Words{Since: *since, Until: *until, Status: *status, Tenant: *tenant, Handler: *handler}, a.now()); err != nil {
			return usagef(cmd, "--%v", err)
		}
	}
	_, b, err := a.backend(ctx, settings.CLINeeds{Table: true, Queue: true})
	if err != nil {
		return err
	}
	if b.jobs == nil {
		return errors.New("recover: no recovery jobs on this backend")
	}
	switch {
	case *list:
		return a.recoverList(ctx, b.jobs)
	case *cancel != "":
		return a.recoverCancel(ctx, b.jobs, *cancel)
	case *watch != "":
		return a.recoverWatch(ctx, b.jobs, *watch)
	case *resume != "":
		j, err := b.jobs.Get(ctx, *resume)
		if err != nil {
			return jobError(err)
		}
		if !j.Resumable() {
			return refusedf("job %s is done (%s): nothing left to recover", j.ID, summary(j))
		}
		if *detach {
			return a.recoverDetach(ctx, b.jobs, j.ID)
		}
		return a.recoverRun(ctx, b.jobs, j)
	}
	j, err := b.jobs.Create(ctx, f, *rate, a.user())
	if err != nil {
		return err
	}
	if *detach {
		return a.recoverDetach(ctx, b.jobs, j.ID)
	}
	fmt.Fprintf(a.stderr, "recover: job %s: %s (resume it after an interruption with 'hookwall recover --resume %s')\n",
		j.ID, describeFilter(j.Filter), j.ID)
	return a.recoverRun(ctx, b.jobs, j)
}

// recoverDetach hands job id to the sweeper and prints its id (--json: the
// job) at once.
func (a *app) recoverDetach(ctx context.Context, jobs recoverer, id string) error {
	j, err := jobs.Detach(ctx, id)
	switch {
	case errors.Is(err, recovery.ErrDone):
		return refusedf("job %s is done: nothing left to recover", id)
	case err != nil:
		return jobError(err)
	}
	fmt.Fprintf(a.stderr, "recover: job %s: %s; the sweeper runs it in the background (each of its runs goes on "+
		"for a while, at the targets' rate): 'hookwall recover --watch %s' shows its progress, --cancel %s stops it\n",
		j.ID, describeFilter(j.Filter), j.ID, j.ID)
	if a.json {
		return a.writeJSON(j)
	}
	fmt.Fprintln(a.stdout, j.ID)
	return nil
}

// recoverWatch shows the progress of job id from the job item, a line per
// pollEvery at most, until the job ends: done, cancelled, or (not detached)
// left by the process that ran it. Ctrl-C stops watching, not the job.
func (a *app) recoverWatch(ctx context.Context, jobs recoverer, id string) error {
	j, err := jobs.Get(ctx, id)
	if err != nil {
		return jobError(err)
	}
	start, startDone := a.now(), j.Counts.Done()
	for {
		line := progressLine(j, startDone, a.now().Sub(start))
		if a.progress {
			fmt.Fprintf(a.stderr, "\r\033[K%s", line)
		} else {
			fmt.Fprintln(a.stderr, line)
		}
		if watchOver(j, a.now()) {
			break
		}
		var next *recovery.Job
		select {
		case <-ctx.Done():
		case <-time.After(a.pollEvery):
			next, err = jobs.Get(ctx, id)
		}
		if ctx.Err() != nil {
			if a.progress {
				fmt.Fprintln(a.stderr)
			}
			fmt.Fprintf(a.stderr, "recover: stopped watching job %s; the job goes on ('hookwall recover --watch %s' again)\n", id, id)
			return nil
		}
		if err != nil {
			return jobError(err)
		}
		j = next
	}
	if a.progress {
		fmt.Fprintln(a.stderr)
	}
	return a.jobEnded(j)
}

// watchOver reports whether a watched job will not move any more without
// an operator: done, cancelled, or not detached and run by no process.
func watchOver(j *recovery.Job, now time.Time) bool {
	switch {
	case j.State == recovery.StateDone || j.State == recovery.StateCancelled:
		return true
	case j.Detached:
		return false
	}
	return j.State != recovery.StateRunning || j.Owner == "" || j.LeaseUntil.Before(now)
}

// jobError maps the recovery errors a command refuses on.
func jobError(err error) error {
	switch {
	case errors.Is(err, recovery.ErrNotFound):
		return refusedf("%v (see 'hookwall recover --list')", err)
	case errors.Is(err, recovery.ErrBusy):
		return refusedf("%v: wait for it, or cancel it with --cancel", err)
	}
	return err
}

// user names the operator in a job or a pause.
func (a *app) user() string {
	for _, k := range []string{"HOOKWALL_USER", "USER", "USERNAME"} {
		if v := a.getenv(k); v != "" {
			return v
		}
	}
	return "cli"
}

// recoverRun runs job j, with a progress line on stderr at most once a
// second (on a terminal it overwrites itself), and prints its summary.
func (a *app) recoverRun(ctx context.Context, jobs recoverer, j *recovery.Job) error {
	start, startDone := a.now(), j.Counts.Done()
	var last time.Time
	progress := func(p recovery.Job) {
		now := a.now()
		if !last.IsZero() && now.Sub(last) < progressEvery {
			return
		}
		last = now
		line := progressLine(&p, startDone, now.Sub(start))
		if a.progress {
			fmt.Fprintf(a.stderr, "\r\033[K%s", line)
		} else {
			fmt.Fprintln(a.stderr, line)
		}
	}
	got, err := jobs.Run(ctx, j.ID, progress)
	if a.progress {
		fmt.Fprint(a.stderr, "\r\033[K")
	}
	if got != nil {
		fmt.Fprintln(a.stderr, progressLine(got, startDone, a.now().Sub(start)))
	}
	switch {
	case errors.Is(err, context.Canceled) && got != nil:
		_ = a.printJob(got)
		fmt.Fprintf(a.stderr, "recover: job %s interrupted at %s; resume it with 'hookwall recover --resume %s'\n", got.ID, summary(got), got.ID)
		return err
	case err != nil:
		return jobError(err)
	}
	return a.jobEnded(got)
}

// jobEnded prints the summary of a job whose run (or watch) ended, and
// says why it is not done, if it is not.
func (a *app) jobEnded(got *recovery.Job) error {
	if err := a.printJob(got); err != nil {
		return err
	}
	switch {
	case got.State == recovery.StateInterrupted || got.State == recovery.StateRunning:
		return fmt.Errorf("recover: job %s stopped at %s (%s); 'hookwall recover --resume %s' goes on", got.ID, summary(got),
			cmp.Or(got.LastError, "no process runs it"), got.ID)
	case got.State == recovery.StateCancelled:
		return fmt.Errorf("recover: job %s was cancelled at %s; 'hookwall recover --resume %s' goes on", got.ID, summary(got), got.ID)
	case got.Counts.NotEnqueued > 0:
		return fmt.Errorf("recover: %d event(s) replayed but not enqueued: they are RECEIVED, and the sweeper enqueues them", got.Counts.NotEnqueued)
	}
	return nil
}

// progressLine is one progress report: done of total, what was done, the
// pace of this run and the time left at that pace.
func progressLine(j *recovery.Job, startDone int, elapsed time.Duration) string {
	c := j.Counts
	if !c.Counted {
		return fmt.Sprintf("recover %s: counting the events in the window (%d so far)", j.ID, c.Total)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "recover %s: %d/%d", j.ID, c.Done(), c.Total)
	if c.Total > 0 {
		fmt.Fprintf(&b, " (%d%%)", min(100, 100*c.Done()/c.Total))
	}
	fmt.Fprintf(&b, " replayed %d, skipped %d, missing %d", c.Replayed, c.Skipped, c.Missing)
	if c.NotEnqueued > 0 {
		fmt.Fprintf(&b, ", not enqueued %d", c.NotEnqueued)
	}
	if j.State == recovery.StateDone || j.State == recovery.StateCancelled || j.State == recovery.StateInterrupted {
		fmt.Fprintf(&b, "; %s", j.State)
		return b.String()
	}
	if j.LastError != "" {
		fmt.Fprintf(&b, ", last run stopped on: %s", cell(j.LastError, 80))
	}
	if j.Detached && j.Owner == "" {
		b.WriteString(", waiting for the next sweep run")
	}
	if done := c.Done() - startDone; done > 0 && elapsed > 0 {
		pace := float64(done) / elapsed.Seconds()
		left := time.Duration(float64(max(c.Total-c.Done(), 0)) / pace * float64(time.Second))
		fmt.Fprintf(&b, ", %.1f/s, ETA %s", pace, left.Round(time.Second))
	} else {
		b.WriteString(", ETA -")
	}
	return b.String()
}

// summary is a job's counts in a few words.
func summary(j *recovery.Job) string {
	c := j.Counts
	return fmt.Sprintf("%d/%d done: replayed %d, skipped %d, missing %d", c.Done(), c.Total, c.Replayed, c.Skipped, c.Missing)
}

// describeFilter says what a filter selects.
func describeFilter(f recovery.Filter) string {
	s := fmt.Sprintf("%s events received from %s to %s", joinStatuses(f.Statuses),
		f.Since.UTC().Format(time.RFC3339), f.Until.UTC().Format(time.RFC3339))
	if f.Tenant != "" {
		s += ", tenant " + f.Tenant
	}
	if f.Handler != "" {
		s += ", handler " + f.Handler
	}
	return s
}

// printJob prints a job's summary: its JSON with --json, else a line.
func (a *app) printJob(j *recovery.Job) error {
	if a.json {
		return a.writeJSON(j)
	}
	fmt.Fprintf(a.stdout, "job %s %s: %s (%s)\n", j.ID, j.State, summary(j), describeFilter(j.Filter))
	if j.Why != "" {
		fmt.Fprintf(a.stdout, "selected nothing: %s\n", j.Why)
	}
	return nil
}

func (a *app) recoverCancel(ctx context.Context, jobs recoverer, id string) error {
	j, changed, err := jobs.Cancel(ctx, id)
	if err != nil {
		return jobError(err)
	}
	if !changed {
		return refusedf("job %s is %s: nothing to cancel", j.ID, j.State)
	}
	if a.json {
		return a.writeJSON(j)
	}
	running := ""
	if j.Owner != "" && j.LeaseUntil.After(a.now()) {
		running = fmt.Sprintf(" (%s runs it: it stops at its next save, within a second)", j.Owner)
	}
	fmt.Fprintf(a.stdout, "cancelled job %s at %s%s; 'hookwall recover --resume %s' goes on from there\n", j.ID, summary(j), running, j.ID)
	return nil
}

func (a *app) recoverList(ctx context.Context, jobs recoverer) error {
	list, err := jobs.List(ctx, 20)
	if err != nil {
		return err
	}
	if a.json {
		if list == nil {
			list = []*recovery.Job{}
		}
		return a.writeJSON(struct {
			Jobs []*recovery.Job `json:"jobs"`
		}{list})
	}
	return printTable(a, "no recovery job", "JOB\tSTATE\tDONE\tREPLAYED\tSKIPPED\tUPDATED\tSELECTS", list, func(w io.Writer, j *recovery.Job) {
		fmt.Fprintf(w, "%s\t%s\t%d/%d\t%d\t%d\t%s\t%s\n", j.ID, j.State, j.Counts.Done(), j.Counts.Total, j.Counts.Replayed,
			j.Counts.Skipped, j.UpdatedAt.UTC().Format(time.RFC3339), describeFilter(j.Filter))
	})
}

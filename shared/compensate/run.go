package compensate

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"

	"github.com/hookwall/hookwall/shared/internal/kernel"
	"github.com/hookwall/hookwall/shared/internal/registry"
	"github.com/hookwall/hookwall/shared/obs"
	"github.com/hookwall/hookwall/shared/webhook"
)

// run is one compensation attempt at one event: the journal and the undos,
// under the kernel's lease and heartbeat.
type run struct {
	c    *Compensator
	a    *kernel.Attempt
	orig webhook.Envelope // the dead letter's envelope, as the receiver sent it

	nothing bool     // no journaled step has a compensation
	undone  []string // "handler/step" undone by this attempt, in order
	skipped []string // "handler/step" found undone by an earlier attempt
	failed  string   // "handler/step" whose undo ended the attempt
}

// todo is one forward step to undo.
type todo struct {
	entry webhook.JournalEntry
	index int // position in the journal
	reg   *registry.Entry
}

// Run undoes the journaled forward steps (ctx is cancelled when the lease
// is lost) and returns the first undo (or journal) error; with no journaled
// step to compensate it sets r.nothing. It reports the undos run and
// skipped in res.
func (r *run) Run(ctx context.Context, res *kernel.Result) error {
	defer func() { res.Undone, res.Skipped = r.undone, r.skipped }()
	a, cfg := r.a, &r.c.cfg
	entries, err := cfg.Store.Journal(ctx, a.Lease)
	if err != nil {
		return fmt.Errorf("load journal: %w", err)
	}
	plan, done := r.plan(ctx, entries)
	if len(plan) == 0 {
		r.nothing = true
		return nil
	}
	for _, td := range plan {
		if a.Lost() {
			return registry.ErrLeaseLost
		}
		id := td.entry.Handler + "/" + td.entry.Step
		if done[td.entry.Handler+"#"+td.entry.Step] {
			cfg.Metrics.Count(MetricUndoSkipped, 1)
			r.skipped = append(r.skipped, id)
			a.Log.DebugContext(ctx, "undo already journaled; skipped", slog.String("handler", td.entry.Handler), slog.String("step", td.entry.Step))
			continue
		}
		if err := r.undo(ctx, td); err != nil {
			r.failed = id
			if a.Lost() {
				return registry.ErrLeaseLost
			}
			return fmt.Errorf("undo %s: %w", id, err)
		}
		held, err := cfg.Store.SaveStep(ctx, a.Lease, webhook.JournalEntry{
			Handler: td.entry.Handler, Step: registry.UndoStep(td.entry.Step), CompletedAt: cfg.Now(), Run: td.entry.Run})
		if err != nil {
			r.failed = id
			return fmt.Errorf("journal undo %s: %w", id, err)
		}
		if !held {
			a.MarkLost()
			return registry.ErrLeaseLost
		}
		cfg.Metrics.Count(MetricUndone, 1)
		r.undone = append(r.undone, id)
		a.Log.InfoContext(ctx, "step undone", slog.String("handler", td.entry.Handler), slog.String("step", td.entry.Step))
	}
	return nil
}

// plan returns the forward steps to undo, newest first (by CompletedAt,
// ties by reverse journal order), of the handlers that registered a
// compensation, and the set of those already undone ("handler#step"): an
// undo is journaled for the step's run or a later one. A step run again
// after its undo (a replay of a compensated event) is a new run, to be
// undone again.
func (r *run) plan(ctx context.Context, entries []webhook.JournalEntry) ([]todo, map[string]bool) {
	table := (*registry.Table)(r.c.cfg.Registry)
	undoRun := map[string]int{} // "handler#step" → the run its journaled undo undid
	for _, e := range entries {
		if fwd, ok := registry.IsUndoStep(e.Step); ok {
			undoRun[e.Handler+"#"+fwd] = e.Run
		}
	}
	done := map[string]bool{}
	var plan []todo
	without := map[string]int{} // handler → steps left as they are
	for i, e := range entries {
		if e.Step == "" || e.Step[0] == '$' { // undo steps, DoneStep and any other marker
			continue
		}
		if u, ok := undoRun[e.Handler+"#"+e.Step]; ok && u >= e.Run {
			done[e.Handler+"#"+e.Step] = true
		}
		reg := table.Handler(e.Handler)
		if reg == nil || reg.Undo == nil {
			without[e.Handler]++
			continue
		}
		plan = append(plan, todo{entry: e, index: i, reg: reg})
	}
	for _, h := range slices.Sorted(maps.Keys(without)) {
		r.c.cfg.Metrics.Count(MetricNotCompensable, without[h])
		r.a.Log.WarnContext(ctx, "journaled steps of a handler without compensation are left as they are",
			slog.String("handler", h), slog.Int("steps", without[h]), slog.Bool("registered", table.Handler(h) != nil))
	}
	slices.SortStableFunc(plan, func(a, b todo) int {
		if c := b.entry.CompletedAt.Compare(a.entry.CompletedAt); c != 0 {
			return c
		}
		return cmp.Compare(b.index, a.index)
	})
	return plan, done
}

// undo runs one undo function under the handler's timeout, a panic turned
// into an error to try again.
func (r *run) undo(ctx context.Context, td todo) error {
	a := r.a
	log := a.Log.With(slog.String("handler", td.entry.Handler), slog.String("step", td.entry.Step))
	ctx = obs.WithAttrs(ctx, slog.String(obs.KeyEventKey, a.Env.Key), slog.String("handler", td.entry.Handler),
		slog.String("step", td.entry.Step))
	return a.Guard(ctx, td.reg.Timeout, log, func(ctx context.Context) error {
		return td.reg.Undo(ctx, registry.UndoCall{Envelope: a.Env, Entry: td.entry, Attempt: a.Lease.Attempt, Log: log,
			Transport: r.c.cfg.Transport})
	})
}

package compensate

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/internal/kernel"
	"github.com/hookwall/hookwall/shared/internal/registry"
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
	j := a.Journal(cfg.Store)
	entries, err := j.Read(ctx)
	if err != nil {
		return err
	}
	plan := r.plan(ctx, entries)
	if len(plan) == 0 {
		r.nothing = true
		return nil
	}
	for _, td := range plan {
		if a.Lost() {
			return registry.ErrLeaseLost
		}
		id := td.entry.Handler + "/" + td.entry.Step
		if j.Undone(td.entry) {
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
		if err := j.Save(ctx, webhook.JournalEntry{Handler: td.entry.Handler, Step: registry.UndoStep(td.entry.Step), Run: td.entry.Run}); err != nil {
			r.failed = id
			if errors.Is(err, registry.ErrLeaseLost) {
				return err
			}
			return fmt.Errorf("journal undo %s: %w", id, err)
		}
		cfg.Metrics.Count(MetricUndone, 1)
		r.undone = append(r.undone, id)
		a.Log.InfoContext(ctx, "step undone", slog.String("handler", td.entry.Handler), slog.String("step", td.entry.Step))
	}
	return nil
}

// plan returns the forward steps to undo, newest first (by CompletedAt,
// ties by reverse journal order), of the handlers that registered a
// compensation (those already undone among them: [kernel.Journal.Undone]).
func (r *run) plan(ctx context.Context, entries []webhook.JournalEntry) []todo {
	table := (*registry.Table)(r.c.cfg.Registry)
	var plan []todo
	without := map[string]int{} // handler → steps left as they are
	for i, e := range entries {
		if kernel.IsMarker(e.Step) {
			continue
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
	return plan
}

// undo runs one undo function under the handler's timeout, a panic turned
// into an error to try again.
func (r *run) undo(ctx context.Context, td todo) error {
	a := r.a
	return a.Call(ctx, td.reg.Timeout, func(ctx context.Context, log *slog.Logger) error {
		return td.reg.Undo(ctx, registry.UndoCall{Envelope: a.Env, Entry: td.entry, Attempt: a.Lease.Attempt, Log: log,
			Transport: r.c.cfg.Transport})
	}, slog.String("handler", td.entry.Handler), slog.String("step", td.entry.Step))
}

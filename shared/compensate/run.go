package compensate

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"maps"
	"runtime/debug"
	"slices"

	"github.com/hookwall/hookwall/shared/internal/registry"
	"github.com/hookwall/hookwall/shared/lease"
	"github.com/hookwall/hookwall/shared/obs"
	"github.com/hookwall/hookwall/shared/webhook"
)

// run is one compensation attempt at one event: the lease, the heartbeat,
// the journal and the undos.
type run struct {
	c     *Compensator
	lease webhook.Lease
	env   webhook.Envelope
	orig  webhook.Envelope // the dead letter's envelope, as the receiver sent it
	log   *slog.Logger
	keep  lease.Keeper // the heartbeat; lost lease

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

// run undoes the journaled forward steps under the heartbeat. nothing is
// true when no journaled step has a compensation; err is the first undo (or
// journal) error.
func (r *run) run(ctx context.Context) (nothing bool, err error) {
	hctx, stop := r.keep.Start(ctx, r.c.cfg.LeaseDuration, r.c.cfg.FinishReserve, registry.ErrLeaseLost, r.log,
		func(ctx context.Context) (bool, error) {
			return r.c.cfg.Store.HeartbeatCompensation(ctx, r.lease, r.c.leaseUntil(ctx))
		})
	defer stop()

	entries, err := r.c.cfg.Store.Journal(hctx, r.lease)
	if err != nil {
		return false, fmt.Errorf("load journal: %w", err)
	}
	plan, done := r.plan(ctx, entries)
	if len(plan) == 0 {
		return true, nil
	}
	for _, td := range plan {
		if r.keep.Lost() {
			return false, registry.ErrLeaseLost
		}
		id := td.entry.Handler + "/" + td.entry.Step
		if done[td.entry.Handler+"#"+td.entry.Step] {
			r.c.cfg.Metrics.Count(MetricUndoSkipped, 1)
			r.skipped = append(r.skipped, id)
			r.log.DebugContext(ctx, "undo already journaled; skipped", slog.String("handler", td.entry.Handler), slog.String("step", td.entry.Step))
			continue
		}
		if err := r.undo(hctx, td); err != nil {
			r.failed = id
			if r.keep.Lost() {
				return false, registry.ErrLeaseLost
			}
			return false, fmt.Errorf("undo %s: %w", id, err)
		}
		held, err := r.c.cfg.Store.SaveStep(hctx, r.lease, webhook.JournalEntry{
			Handler: td.entry.Handler, Step: registry.UndoStep(td.entry.Step), CompletedAt: r.c.cfg.Now()})
		if err != nil {
			r.failed = id
			return false, fmt.Errorf("journal undo %s: %w", id, err)
		}
		if !held {
			r.keep.MarkLost()
			return false, registry.ErrLeaseLost
		}
		r.c.cfg.Metrics.Count(MetricUndone, 1)
		r.undone = append(r.undone, id)
		r.log.InfoContext(ctx, "step undone", slog.String("handler", td.entry.Handler), slog.String("step", td.entry.Step))
	}
	return false, nil
}

// plan returns the forward steps to undo, newest first (by CompletedAt,
// ties by reverse journal order), of the handlers that registered a
// compensation, and the set of those already undone ("handler#step").
func (r *run) plan(ctx context.Context, entries []webhook.JournalEntry) ([]todo, map[string]bool) {
	done := map[string]bool{}
	var plan []todo
	without := map[string]int{} // handler → steps left as they are
	for i, e := range entries {
		if fwd, ok := registry.IsUndoStep(e.Step); ok {
			done[e.Handler+"#"+fwd] = true
			continue
		}
		if e.Step == "" || e.Step[0] == '$' { // DoneStep and any other marker
			continue
		}
		reg := (*registry.Table)(r.c.cfg.Registry).Handler(e.Handler)
		if reg == nil || reg.Undo == nil {
			without[e.Handler]++
			continue
		}
		plan = append(plan, todo{entry: e, index: i, reg: reg})
	}
	for _, h := range slices.Sorted(maps.Keys(without)) {
		r.c.cfg.Metrics.Count(MetricNotCompensable, without[h])
		r.log.WarnContext(ctx, "journaled steps of a handler without compensation are left as they are",
			slog.String("handler", h), slog.Int("steps", without[h]), slog.Bool("registered", (*registry.Table)(r.c.cfg.Registry).Handler(h) != nil))
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
func (r *run) undo(ctx context.Context, td todo) (err error) {
	timeout := td.reg.Timeout
	if timeout == 0 {
		timeout = r.c.cfg.Timeout
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	log := r.log.With(slog.String("handler", td.entry.Handler), slog.String("step", td.entry.Step))
	ctx = obs.WithAttrs(ctx, slog.String(obs.KeyEventKey, r.env.Key), slog.String("handler", td.entry.Handler),
		slog.String("step", td.entry.Step))
	defer func() {
		if v := recover(); v != nil {
			pe := &registry.PanicError{Value: v, Stack: debug.Stack()}
			log.ErrorContext(ctx, "undo panicked", slog.Any("panic", v), slog.String("stack", string(pe.Stack)))
			err = pe
		}
	}()
	err = td.reg.Undo(ctx, registry.UndoCall{Envelope: r.env, Entry: td.entry, Attempt: r.lease.Attempt, Log: log, Transport: r.c.cfg.Transport})
	if err == nil && ctx.Err() != nil && r.keep.Lost() {
		err = registry.ErrLeaseLost
	}
	return err
}

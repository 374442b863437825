package dispatch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/hookwall/hookwall/shared/internal/registry"
	"github.com/hookwall/hookwall/shared/webhook"
)

// handlerDone reports whether handler completed: its done marker is
// journaled and none of its steps is undone (a replay of a compensated
// event runs the handler again, its undone steps as new runs).
func (t *attempt) handlerDone(handler string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.journal[handler+"#"+webhook.DoneStep]; !ok {
		return false
	}
	for _, e := range t.journal {
		if fwd, ok := registry.IsUndoStep(e.Step); ok && e.Handler == handler {
			if _, done, _ := t.stepState(handler, fwd); !done {
				return false
			}
		}
	}
	return true
}

// stepState returns the journal entry of handler's step name and whether
// the step is done: journaled, and its run not undone (no undo journaled
// for that run or a later one). run is the run the step makes when it is
// not done: 0 for its first, n+1 once its run n was undone (t.mu held).
func (t *attempt) stepState(handler, name string) (e webhook.JournalEntry, done bool, run int) {
	e, ok := t.journal[handler+"#"+name]
	if u, undone := t.journal[handler+"#"+registry.UndoStep(name)]; undone && (!ok || u.Run >= e.Run) {
		return e, false, u.Run + 1
	}
	return e, ok, 0
}

// load reads the journal once per attempt. The first attempt of a fresh
// claim (attempt 1 at version 2: claimed at 1, acquired once) has none, so
// the happy path skips the read; a replayed record starts again at attempt 1
// but at a higher version, and keeps its journal unless replayed with fresh
// steps (a new claim id), so it is read.
func (t *attempt) load(ctx context.Context) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	l := t.a.Lease
	if t.loaded || (l.Attempt <= 1 && l.Version <= 2) {
		return nil
	}
	entries, err := t.d.cfg.Store.Journal(ctx, l)
	if err != nil {
		return fmt.Errorf("load journal: %w", err)
	}
	t.journal = make(map[string]webhook.JournalEntry, len(entries))
	for _, e := range entries {
		t.journal[e.Handler+"#"+e.Step] = e
	}
	t.loaded = true
	return nil
}

// stepCarrier is a Store that writes several journal entries in one write
// and completes a record carrying entries (*store.Table and
// *memstore.Store are): with it, a step's entry waits for the attempt's
// next write, so a handler's last step is journaled by the completion
// instead of a write of its own.
type stepCarrier interface {
	// SaveSteps writes entries in one write, fenced on the lease.
	SaveSteps(ctx context.Context, l webhook.Lease, entries []webhook.JournalEntry) (held bool, err error)
	// CompleteSteps is Complete carrying entries in the same write.
	CompleteSteps(ctx context.Context, l webhook.Lease, retainUntil time.Time, entries []webhook.JournalEntry) (held bool, err error)
}

// carrier returns the store as a stepCarrier, if it is one.
func (t *attempt) carrier() (stepCarrier, bool) {
	c, ok := t.d.cfg.Store.(stepCarrier)
	return c, ok
}

// save journals e, with the entries waiting for a write; held false means
// the lease is lost.
func (t *attempt) save(ctx context.Context, e webhook.JournalEntry) (bool, error) {
	e.CompletedAt = t.d.cfg.Now()
	t.mu.Lock()
	entries := append(t.pending[:len(t.pending):len(t.pending)], e)
	t.mu.Unlock()
	if err := t.write(ctx, entries); err != nil {
		return false, err
	}
	t.remember(e)
	return true, nil
}

// write journals entries (those waiting for a write first) and forgets the
// waiting ones it wrote: registry.ErrLeaseLost when the lease is lost.
func (t *attempt) write(ctx context.Context, entries []webhook.JournalEntry) error {
	var held bool
	var err error
	if c, ok := t.carrier(); ok {
		held, err = c.SaveSteps(ctx, t.a.Lease, entries)
	} else {
		for _, e := range entries {
			if held, err = t.d.cfg.Store.SaveStep(ctx, t.a.Lease, e); !held || err != nil {
				break
			}
		}
	}
	if err != nil {
		last := entries[len(entries)-1]
		return fmt.Errorf("journal step %s/%s: %w", last.Handler, last.Step, err)
	}
	if !held {
		t.a.MarkLost()
		return registry.ErrLeaseLost
	}
	t.mu.Lock()
	t.pending = slices.DeleteFunc(t.pending, func(p webhook.JournalEntry) bool {
		return slices.ContainsFunc(entries, func(e webhook.JournalEntry) bool {
			return e.Handler == p.Handler && e.Step == p.Step && e.CompletedAt.Equal(p.CompletedAt)
		})
	})
	t.mu.Unlock()
	return nil
}

// done records a step's entry: with a stepCarrier it waits for the
// attempt's next write (the next step's start, the handler's completion
// marker, or the completion), else it is saved now.
func (t *attempt) done(ctx context.Context, e webhook.JournalEntry) error {
	if _, ok := t.carrier(); !ok {
		_, err := t.save(ctx, e)
		return err
	}
	e.CompletedAt = t.d.cfg.Now()
	t.mu.Lock()
	t.pending = append(t.pending, e)
	t.mu.Unlock()
	t.remember(e)
	return nil
}

// remember adds e to the attempt's view of the journal.
func (t *attempt) remember(e webhook.JournalEntry) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.journal == nil {
		t.journal = map[string]webhook.JournalEntry{}
	}
	t.journal[e.Handler+"#"+e.Step] = e
}

// flush writes the entries waiting for a write, if any.
func (t *attempt) flush(ctx context.Context) error {
	t.mu.Lock()
	entries := slices.Clone(t.pending)
	t.mu.Unlock()
	if len(entries) == 0 {
		return nil
	}
	return t.write(ctx, entries)
}

// flushed is Run's error exit: the entries still waiting are written
// before the record is settled (a retry must not run their steps again);
// herr is returned as it is, the flush's own failure only logged.
func (t *attempt) flushed(ctx context.Context, herr error) error {
	if err := t.flush(ctx); err != nil && !errors.Is(err, registry.ErrLeaseLost) {
		t.a.Log.WarnContext(ctx, "journal the steps done before the error", slog.Any("error", err))
	}
	return herr
}

// completeWrite completes the record of l, carrying the entries still
// waiting for a write (a handler's last step) when the store can.
func (t *attempt) completeWrite(ctx context.Context, l webhook.Lease, retainUntil time.Time) (bool, error) {
	t.mu.Lock()
	entries := slices.Clone(t.pending)
	t.mu.Unlock()
	c, ok := t.carrier()
	if !ok || len(entries) == 0 {
		return t.d.cfg.Store.Complete(ctx, l, retainUntil)
	}
	return c.CompleteSteps(ctx, l, retainUntil, entries)
}

// handlerRun is one handler's run within an attempt: the [registry.Stepper]
// of its journaled steps.
type handlerRun struct {
	att     *attempt
	handler string
	mu      sync.Mutex
	used    map[string]bool
}

// Step implements [registry.Stepper].
func (h *handlerRun) Step(ctx context.Context, name string, fn func(ctx context.Context, key string) ([]byte, error)) ([]byte, error) {
	t := h.att
	if err := registry.ValidStepName(name); err != nil {
		return nil, err
	}
	h.mu.Lock()
	dup := h.used[name]
	h.used[name] = true
	h.mu.Unlock()
	if dup {
		return nil, registry.Permanent(fmt.Errorf("step %q used twice in handler %s", name, h.handler))
	}
	if t.a.Lost() {
		return nil, registry.ErrLeaseLost
	}
	if err := t.load(ctx); err != nil {
		return nil, err
	}
	t.mu.Lock()
	e, done, run := t.stepState(h.handler, name)
	t.mu.Unlock()
	if !done {
		// The steps done so far are journaled before this one runs.
		if err := t.flush(ctx); err != nil {
			return nil, err
		}
	}
	if done {
		t.d.cfg.Metrics.Count(MetricStepSkipped, 1)
		t.a.Log.DebugContext(ctx, "step already journaled; skipped", slog.String("handler", h.handler), slog.String("step", name))
		return e.Result, nil
	}
	if run > 0 {
		t.a.Log.InfoContext(ctx, "step undone by a compensation; run again under a new idempotency key",
			slog.String("handler", h.handler), slog.String("step", name), slog.Int("run", run))
	}
	key := webhook.RunKey(t.a.Env.Key, h.handler, name, run)
	result, err := fn(registry.WithIdempotencyKey(ctx, key), key)
	if err != nil {
		if t.a.Lost() {
			return nil, registry.ErrLeaseLost
		}
		return nil, err
	}
	if err := t.done(ctx, webhook.JournalEntry{Handler: h.handler, Step: name, Result: result, Run: run}); err != nil {
		return nil, err
	}
	return result, nil
}

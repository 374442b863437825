package kernel

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/internal/registry"
)

// StepKey is the one key of a journal entry within an event's claim: a
// handler's step (a forward step, its undo, or a marker).
type StepKey struct {
	Handler, Step string
}

// KeyOf returns the key of e.
func KeyOf(e webhook.JournalEntry) StepKey { return StepKey{e.Handler, e.Step} }

// IsMarker reports whether step is one of the journal's markers rather
// than a handler's forward step: an undo ([registry.UndoStep]), the done
// marker ([webhook.DoneStep]) or any other name starting with '$', which
// forward step names cannot ([registry.ValidStepName]).
func IsMarker(step string) bool { return step == "" || step[0] == '$' }

// StepCarrier is a [JournalStore] that writes several journal entries in
// one write and completes a record carrying entries (*store.Table and
// *memstore.Store are): with it, a step's entry waits for the attempt's
// next write ([Journal.Done]), so a handler's last step is journaled by the
// completion instead of a write of its own.
type StepCarrier interface {
	// SaveSteps writes entries in one write, fenced on the lease.
	SaveSteps(ctx context.Context, l webhook.Lease, entries []webhook.JournalEntry) (held bool, err error)
	// CompleteSteps completes the record (SUCCEEDED, kept until
	// retainUntil) carrying entries in the same write.
	CompleteSteps(ctx context.Context, l webhook.Lease, retainUntil time.Time, entries []webhook.JournalEntry) (held bool, err error)
}

// Journal is one attempt's view of its event's step journal, for both
// engines: read once ([Journal.Load], [Journal.Read]), keyed by
// [StepKey], with the entries done but not yet written, and written fenced
// on the attempt's lease (a lost lease marks the attempt lost and returns
// ErrLeaseLost). It is safe for concurrent use.
type Journal struct {
	a     *Attempt
	store JournalStore
	now   func() time.Time

	mu      sync.Mutex
	loaded  bool
	entries []webhook.JournalEntry // as read, in the store's order
	byKey   map[StepKey]webhook.JournalEntry
	pending []webhook.JournalEntry // done, waiting for the attempt's next write
}

// Journal returns the attempt's journal on store, its entries stamped with
// the engine's clock.
func (a *Attempt) Journal(store JournalStore) *Journal {
	return &Journal{a: a, store: store, now: a.e.cfg.Now}
}

// Load reads the journal once per attempt. The first attempt of a fresh
// claim (attempt 1 at version 2: claimed at 1, acquired once) has none, so
// the happy path skips the read; a replayed record starts again at attempt
// 1 but at a higher version, and keeps its journal unless replayed with
// fresh steps (a new claim id), so it is read.
func (j *Journal) Load(ctx context.Context) error {
	l := j.a.Lease
	if l.Attempt <= 1 && l.Version <= 2 {
		return nil
	}
	_, err := j.Read(ctx)
	return err
}

// Read reads the journal (once per attempt) and returns its entries in the
// store's order.
func (j *Journal) Read(ctx context.Context) ([]webhook.JournalEntry, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.loaded {
		return slices.Clone(j.entries), nil
	}
	entries, err := j.store.Journal(ctx, j.a.Lease)
	if err != nil {
		return nil, fmt.Errorf("load journal: %w", err)
	}
	j.entries = entries
	if j.byKey == nil {
		j.byKey = make(map[StepKey]webhook.JournalEntry, len(entries))
	}
	for _, e := range entries {
		if _, newer := j.byKey[KeyOf(e)]; !newer { // written by this attempt since
			j.byKey[KeyOf(e)] = e
		}
	}
	j.loaded = true
	return slices.Clone(entries), nil
}

// Undone reports whether forward entry e is undone: an undo is journaled
// for its run or a later one (a step run again after its undo, a replay of
// a compensated event, is a new run, not undone).
func (j *Journal) Undone(e webhook.JournalEntry) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	u, ok := j.byKey[StepKey{e.Handler, registry.UndoStep(e.Step)}]
	return ok && u.Run >= e.Run
}

// StepState returns the entry of handler's step name and whether the step
// is done: journaled, and its run not undone. run is the run the step makes
// when it is not done: 0 for its first, n+1 once its run n was undone.
func (j *Journal) StepState(handler, name string) (e webhook.JournalEntry, done bool, run int) {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.stepState(handler, name)
}

func (j *Journal) stepState(handler, name string) (e webhook.JournalEntry, done bool, run int) {
	e, ok := j.byKey[StepKey{handler, name}]
	if u, undone := j.byKey[StepKey{handler, registry.UndoStep(name)}]; undone && (!ok || u.Run >= e.Run) {
		return e, false, u.Run + 1
	}
	return e, ok, 0
}

// HandlerDone reports whether handler completed: its done marker is
// journaled and none of its steps is undone (a replay of a compensated
// event runs the handler again, its undone steps as new runs).
func (j *Journal) HandlerDone(handler string) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	if _, ok := j.byKey[StepKey{handler, webhook.DoneStep}]; !ok {
		return false
	}
	for k := range j.byKey {
		if fwd, ok := registry.IsUndoStep(k.Step); ok && k.Handler == handler {
			if _, done, _ := j.stepState(handler, fwd); !done {
				return false
			}
		}
	}
	return true
}

// carrier returns the store as a StepCarrier, if it is one.
func (j *Journal) carrier() (StepCarrier, bool) {
	c, ok := j.store.(StepCarrier)
	return c, ok
}

// Save journals e now (stamped), with the entries waiting for a write.
func (j *Journal) Save(ctx context.Context, e webhook.JournalEntry) error {
	e.CompletedAt = j.now()
	j.mu.Lock()
	entries := append(j.pending[:len(j.pending):len(j.pending)], e)
	j.mu.Unlock()
	if err := j.write(ctx, entries); err != nil {
		return err
	}
	j.remember(e)
	return nil
}

// Done records a step's entry: with a [StepCarrier] it waits for the
// attempt's next write (the next step's start, a handler's done marker, or
// the completion), else it is saved now.
func (j *Journal) Done(ctx context.Context, e webhook.JournalEntry) error {
	if _, ok := j.carrier(); !ok {
		return j.Save(ctx, e)
	}
	e.CompletedAt = j.now()
	j.mu.Lock()
	j.pending = append(j.pending, e)
	j.mu.Unlock()
	j.remember(e)
	return nil
}

// write journals entries (those waiting for a write first) and forgets the
// waiting ones it wrote: ErrLeaseLost when the lease is lost.
func (j *Journal) write(ctx context.Context, entries []webhook.JournalEntry) error {
	var held bool
	var err error
	if c, ok := j.carrier(); ok {
		held, err = c.SaveSteps(ctx, j.a.Lease, entries)
	} else {
		for _, e := range entries {
			if held, err = j.store.SaveStep(ctx, j.a.Lease, e); !held || err != nil {
				break
			}
		}
	}
	if err != nil {
		last := entries[len(entries)-1]
		return fmt.Errorf("journal step %s/%s: %w", last.Handler, last.Step, err)
	}
	if !held {
		j.a.MarkLost()
		return errLeaseLost
	}
	j.mu.Lock()
	j.pending = slices.DeleteFunc(j.pending, func(p webhook.JournalEntry) bool {
		return slices.ContainsFunc(entries, func(e webhook.JournalEntry) bool {
			return KeyOf(e) == KeyOf(p) && e.CompletedAt.Equal(p.CompletedAt)
		})
	})
	j.mu.Unlock()
	return nil
}

// remember adds e to the attempt's view of the journal.
func (j *Journal) remember(e webhook.JournalEntry) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.byKey == nil {
		j.byKey = map[StepKey]webhook.JournalEntry{}
	}
	j.byKey[KeyOf(e)] = e
}

// Flush writes the entries waiting for a write, if any.
func (j *Journal) Flush(ctx context.Context) error {
	j.mu.Lock()
	entries := slices.Clone(j.pending)
	j.mu.Unlock()
	if len(entries) == 0 {
		return nil
	}
	return j.write(ctx, entries)
}

// Flushed is a task's error exit: the entries still waiting are written
// before the record is settled (a retry must not run their steps again);
// werr is returned as it is, the flush's own failure only logged.
func (j *Journal) Flushed(ctx context.Context, werr error) error {
	if err := j.Flush(ctx); err != nil && !errors.Is(err, errLeaseLost) {
		j.a.Log.WarnContext(ctx, "journal the steps done before the error", slog.Any("error", err))
	}
	return werr
}

// Complete completes the record of l (SUCCEEDED, kept until retainUntil)
// with complete, or carrying the entries still waiting for a write (a
// handler's last step) in the same write when the store can.
func (j *Journal) Complete(ctx context.Context, l webhook.Lease, retainUntil time.Time,
	complete func(ctx context.Context, l webhook.Lease, retainUntil time.Time) (bool, error)) (bool, error) {
	j.mu.Lock()
	entries := slices.Clone(j.pending)
	j.mu.Unlock()
	c, ok := j.carrier()
	if !ok || len(entries) == 0 {
		return complete(ctx, l, retainUntil)
	}
	return c.CompleteSteps(ctx, l, retainUntil, entries)
}

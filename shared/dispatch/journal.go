package dispatch

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/hookwall/hookwall/shared/internal/registry"
	"github.com/hookwall/hookwall/shared/webhook"
)

func (a *attempt) journaled(handler, step string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	_, ok := a.journal[handler+"#"+step]
	return ok
}

// load reads the journal once per attempt. The first attempt of a fresh
// claim (attempt 1 at version 2: claimed at 1, acquired once) has none, so
// the happy path skips the read; a replayed record starts again at attempt 1
// but at a higher version, and keeps its journal unless replayed with fresh
// steps (a new claim id), so it is read.
func (a *attempt) load(ctx context.Context) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.loaded || (a.lease.Attempt <= 1 && a.lease.Version <= 2) {
		return nil
	}
	entries, err := a.d.cfg.Store.Journal(ctx, a.lease)
	if err != nil {
		return fmt.Errorf("load journal: %w", err)
	}
	a.journal = make(map[string]webhook.JournalEntry, len(entries))
	for _, e := range entries {
		a.journal[e.Handler+"#"+e.Step] = e
	}
	a.loaded = true
	return nil
}

// save journals e; held false means the lease is lost.
func (a *attempt) save(ctx context.Context, e webhook.JournalEntry) (bool, error) {
	e.CompletedAt = a.d.cfg.Now()
	held, err := a.d.cfg.Store.SaveStep(ctx, a.lease, e)
	if err != nil {
		return false, fmt.Errorf("journal step %s/%s: %w", e.Handler, e.Step, err)
	}
	if !held {
		a.keep.MarkLost()
		return false, registry.ErrLeaseLost
	}
	a.mu.Lock()
	if a.journal == nil {
		a.journal = map[string]webhook.JournalEntry{}
	}
	a.journal[e.Handler+"#"+e.Step] = e
	a.mu.Unlock()
	return true, nil
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
	a := h.att
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
	if a.keep.Lost() {
		return nil, registry.ErrLeaseLost
	}
	if err := a.load(ctx); err != nil {
		return nil, err
	}
	a.mu.Lock()
	e, done := a.journal[h.handler+"#"+name]
	a.mu.Unlock()
	if done {
		a.d.cfg.Metrics.Count(MetricStepSkipped, 1)
		a.log.DebugContext(ctx, "step already journaled; skipped", slog.String("handler", h.handler), slog.String("step", name))
		return e.Result, nil
	}
	key := webhook.IdempotencyKey(a.env.Key, h.handler, name)
	result, err := fn(registry.WithIdempotencyKey(ctx, key), key)
	if err != nil {
		if a.keep.Lost() {
			return nil, registry.ErrLeaseLost
		}
		return nil, err
	}
	if _, err := a.save(ctx, webhook.JournalEntry{Handler: h.handler, Step: name, Result: result}); err != nil {
		return nil, err
	}
	return result, nil
}

package dispatch

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/hookwall/hookwall/shared/internal/registry"
	"github.com/hookwall/hookwall/shared/webhook"
)

func (t *attempt) journaled(handler, step string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	_, ok := t.journal[handler+"#"+step]
	return ok
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

// save journals e; held false means the lease is lost.
func (t *attempt) save(ctx context.Context, e webhook.JournalEntry) (bool, error) {
	e.CompletedAt = t.d.cfg.Now()
	held, err := t.d.cfg.Store.SaveStep(ctx, t.a.Lease, e)
	if err != nil {
		return false, fmt.Errorf("journal step %s/%s: %w", e.Handler, e.Step, err)
	}
	if !held {
		t.a.MarkLost()
		return false, registry.ErrLeaseLost
	}
	t.mu.Lock()
	if t.journal == nil {
		t.journal = map[string]webhook.JournalEntry{}
	}
	t.journal[e.Handler+"#"+e.Step] = e
	t.mu.Unlock()
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
	e, done := t.journal[h.handler+"#"+name]
	t.mu.Unlock()
	if done {
		t.d.cfg.Metrics.Count(MetricStepSkipped, 1)
		t.a.Log.DebugContext(ctx, "step already journaled; skipped", slog.String("handler", h.handler), slog.String("step", name))
		return e.Result, nil
	}
	key := webhook.IdempotencyKey(t.a.Env.Key, h.handler, name)
	result, err := fn(registry.WithIdempotencyKey(ctx, key), key)
	if err != nil {
		if t.a.Lost() {
			return nil, registry.ErrLeaseLost
		}
		return nil, err
	}
	if _, err := t.save(ctx, webhook.JournalEntry{Handler: h.handler, Step: name, Result: result}); err != nil {
		return nil, err
	}
	return result, nil
}

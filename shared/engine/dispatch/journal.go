package dispatch

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/internal/registry"
)

// handlerRun is one handler's run within an attempt: the [registry.Stepper]
// of its journaled steps (the attempt's kernel.Journal).
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
	if err := t.j.Load(ctx); err != nil {
		return nil, err
	}
	e, done, run := t.j.StepState(h.handler, name)
	if done {
		t.d.cfg.Metrics.Count(MetricStepSkipped, 1)
		t.a.Log.DebugContext(ctx, "step already journaled; skipped", slog.String("handler", h.handler), slog.String("step", name))
		return e.Result, nil
	}
	// The steps done so far are journaled before this one runs.
	if err := t.j.Flush(ctx); err != nil {
		return nil, err
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
	if err := t.j.Done(ctx, webhook.JournalEntry{Handler: h.handler, Step: name, Result: result, Run: run}); err != nil {
		return nil, err
	}
	return result, nil
}

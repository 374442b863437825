package dispatch

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/engine/process"
	"github.com/hookwall/hookwall/shared/state/store"
)

// replayedWithUndone puts record k as a replay of a COMPENSATED event leaves
// it (RECEIVED at a later version) whose claim journaled, for each handler
// of undone, its step and that step's undo.
func (rg *rig) replayedWithUndone(t testing.TB, k string, undone map[string]string) {
	t.Helper()
	rg.store.Seed(store.Record{Key: k, Status: webhook.StatusReceived})
	rg.store.Update(k, func(r *store.Record) { r.Version = 9 })
	at := time.Now().Add(-time.Hour)
	var j []webhook.JournalEntry
	for h, step := range undone {
		j = append(j, webhook.JournalEntry{Handler: h, Step: step, CompletedAt: at},
			webhook.JournalEntry{Handler: h, Step: webhook.DoneStep, CompletedAt: at},
			webhook.JournalEntry{Handler: h, Step: "$undo:" + step, CompletedAt: at.Add(time.Minute)})
	}
	rg.store.SeedJournal(k, j...)
}

// keyRecorder records the idempotency keys a step ran with, by step.
type keyRecorder struct {
	mu   sync.Mutex
	keys map[string][]string
}

func (r *keyRecorder) step(name string) func(ctx context.Context, ev *process.Event[follow]) error {
	return func(ctx context.Context, ev *process.Event[follow]) error {
		return ev.Step(ctx, name, func(_ context.Context, key string) error {
			r.mu.Lock()
			defer r.mu.Unlock()
			if r.keys == nil {
				r.keys = map[string][]string{}
			}
			r.keys[name] = append(r.keys[name], key)
			return nil
		})
	}
}

func (r *keyRecorder) of(name string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.keys[name]...)
}

// A replayed COMPENSATED event runs its undone step again, under a new key
// (run 1), journals it as run 1, and a later delivery skips it.
func TestUndoneStepRunsAgainUnderANewKey(t *testing.T) {
	var rec keyRecorder
	rg := newRig(t, nil, func(r *process.Registry) { process.Handle(r, "crm.lead", followType, rec.step("create-lead")) })
	rg.replayedWithUndone(t, "k", map[string]string{"crm.lead": "create-lead"})

	if res := rg.d.Handle(context.Background(), delivery("k", "line", "follow", follow{})); res.Verdict != Succeeded {
		t.Fatalf("got %v (%v), want succeeded", res.Verdict, res.Err)
	}
	old, redo := webhook.IdempotencyKey("k", "crm.lead", "create-lead"), webhook.RunKey("k", "crm.lead", "create-lead", 1)
	if got := rec.of("create-lead"); len(got) != 1 || got[0] != redo || redo == old {
		t.Fatalf("create-lead ran with keys %v, want once with the run-1 key %s (not the undone run's %s)", got, redo, old)
	}
	if e, ok := rg.store.Entry("k", "crm.lead", "create-lead"); !ok || e.Run != 1 {
		t.Errorf("journaled run %d (journaled: %v), want 1", e.Run, ok)
	}

	// Replayed again: the step's run 1 is not undone, so it is done.
	rg.store.Update("k", func(r *store.Record) { r.Status, r.Attempts = webhook.StatusReceived, 0 })
	if res := rg.d.Handle(context.Background(), delivery("k", "line", "follow", follow{})); res.Verdict != Succeeded {
		t.Fatalf("second replay: got %v (%v), want succeeded", res.Verdict, res.Err)
	}
	if got := rec.of("create-lead"); len(got) != 1 {
		t.Errorf("create-lead ran %d times, want once: its run 1 is journaled and not undone", len(got))
	}
}

// A handler whose done marker is journaled but one of whose steps was
// undone is not done: it runs again, the undone step under a new key.
func TestHandlerWithAnUndoneStepIsNotDone(t *testing.T) {
	var rec keyRecorder
	rg := newRig(t, nil, func(r *process.Registry) {
		process.Handle(r, "a", followType, rec.step("one"))
		process.Handle(r, "b", followType, rec.step("two"))
	})
	rg.replayedWithUndone(t, "k", map[string]string{"a": "one"})
	if res := rg.d.Handle(context.Background(), delivery("k", "line", "follow", follow{})); res.Verdict != Succeeded {
		t.Fatalf("got %v (%v), want succeeded", res.Verdict, res.Err)
	}
	if got := rec.of("one"); len(got) != 1 || got[0] != webhook.RunKey("k", "a", "one", 1) {
		t.Errorf("a/one ran with keys %v, want once with its run-1 key", got)
	}
	if got := rec.of("two"); len(got) != 1 || got[0] != webhook.IdempotencyKey("k", "b", "two") {
		t.Errorf("b/two ran with keys %v, want once with its first key", got)
	}
}

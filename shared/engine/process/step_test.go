package process

import (
	"context"
	"testing"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/internal/registry"
)

// stepper is a journal in memory, as the engine's.
type stepper struct {
	journal map[string][]byte
	runs    int
}

func (s *stepper) Step(ctx context.Context, name string, fn func(ctx context.Context, idemKey string) ([]byte, error)) ([]byte, error) {
	if b, ok := s.journal[name]; ok {
		return b, nil
	}
	s.runs++
	b, err := fn(registry.WithIdempotencyKey(ctx, "key-"+name), "key-"+name)
	if err == nil {
		s.journal[name] = b
	}
	return b, err
}

func TestStepsGoThroughTheEnginesStepper(t *testing.T) {
	st := &stepper{journal: map[string][]byte{}}
	ev := newEvent[follow](registry.Call{Envelope: webhook.Envelope{Key: "k"}, Steps: st})
	for range 2 {
		if err := ev.Step(context.Background(), "a", func(_ context.Context, key string) error {
			if key != "key-a" {
				t.Errorf("got key %q", key)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		n, err := StepResult(context.Background(), ev, "b", func(context.Context, string) (int, error) { return 7, nil })
		if err != nil || n != 7 {
			t.Fatalf("StepResult: got %v, %v", n, err)
		}
	}
	if st.runs != 2 {
		t.Errorf("the steps ran %d times, want 2 (once each)", st.runs)
	}
	st.journal["bad"] = []byte(`"x"`)
	if _, err := StepResult(context.Background(), ev, "bad", func(context.Context, string) (int, error) { return 0, nil }); !IsPermanent(err) {
		t.Errorf("a journaled result of another type: got %v, want a permanent error", err)
	}
}

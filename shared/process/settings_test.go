package process

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/internal/registry"
	"github.com/hookwall/hookwall/shared/webhook"
)

func TestGettersReadTheirKind(t *testing.T) {
	env := map[string]string{"A_URL": "https://a.example", "A_DURATION": "90s", "A_INT": "7", "A_STRING": "x.y"}
	r := (*Registry)(registry.NewWith(func(k string) string { return env[k] }))
	if got := r.URL(Setting{Name: "A_URL", Doc: "d"}); got != "https://a.example" {
		t.Errorf("URL: got %q", got)
	}
	if got := r.Duration(Setting{Name: "A_DURATION", Doc: "d"}); got != 90*time.Second {
		t.Errorf("Duration: got %v", got)
	}
	if got := r.Int(Setting{Name: "A_INT", Doc: "d"}); got != 7 {
		t.Errorf("Int: got %v", got)
	}
	if got := r.String(Setting{Name: "A_STRING", Doc: "d"}); got != "x.y" {
		t.Errorf("String: got %q", got)
	}
	if got := r.Duration(Setting{Name: "UNSET_DURATION", Doc: "d", Default: "2m"}); got != 2*time.Minute {
		t.Errorf("Duration default: got %v", got)
	}
	if got := r.Int(Setting{Name: "UNSET_INT", Doc: "d"}); got != 0 {
		t.Errorf("Int unset: got %v", got)
	}
	check := Setting{Name: "CHECKED", Doc: "d", Check: func(v string) error {
		if v != "ok" {
			return errors.New("want ok")
		}
		return nil
	}}
	env["CHECKED"] = "nope"
	r.String(check)
	if err := r.table().Err(); err == nil || !strings.Contains(err.Error(), `CHECKED="nope": want ok`) {
		t.Errorf("got %v, want the check's error naming the variable", err)
	}
	kinds := map[string]registry.Kind{}
	for _, d := range r.table().Settings() {
		kinds[d.Name] = d.Kind
		if d.Owner != "shared/process" {
			t.Errorf("%s: owner %q, want the caller's package", d.Name, d.Owner)
		}
	}
	if kinds["A_URL"] != registry.KindURL || kinds["A_DURATION"] != registry.KindDuration || kinds["A_INT"] != registry.KindInt ||
		kinds["A_STRING"] != registry.KindString {
		t.Errorf("got kinds %v", kinds)
	}
}

type tenantsDoc struct{ name string }

func TestUseFindsADependencyByType(t *testing.T) {
	doc := &tenantsDoc{"acme"}
	r := (*Registry)(registry.NewWith(nil, 42, doc))
	if got, ok := Use[*tenantsDoc](r); !ok || got != doc {
		t.Errorf("got %v, %v", got, ok)
	}
	if got, ok := Use[interface{ String() string }](r); ok || got != nil {
		t.Errorf("a type nobody gave: got %v, %v", got, ok)
	}
	if _, ok := Use[int](NewRegistry()); ok {
		t.Error("a new registry gives a dependency")
	}
}

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

package processtest_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/engine/dispatch"
	"github.com/hookwall/hookwall/shared/engine/process"
	"github.com/hookwall/hookwall/shared/engine/processtest"
	"github.com/hookwall/hookwall/shared/state/store"
	"github.com/hookwall/hookwall/shared/state/store/memstore"
)

// Both events tables serve the kit; a team's table is either kind.
var (
	_ processtest.Store = (*store.Table)(nil)
	_ processtest.Store = (*memstore.Store)(nil)
	_ processtest.Table = (*memstore.Table)(nil)
	_ processtest.Table = (*dynamodb.Client)(nil)
)

type signup struct {
	UserID string `json:"userId"`
}

var signupType = webhook.NewType[signup]("line", "follow")

// post makes one effect: a POST to url through the event's client, which
// sends the step's Idempotency-Key.
func post[T any](ctx context.Context, ev *process.Event[T], url, body string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return err
	}
	resp, err := ev.HTTPClient().Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	return nil
}

func twoSteps(url string) func(context.Context, *process.Event[signup]) error {
	return func(ctx context.Context, ev *process.Event[signup]) error {
		for _, step := range []string{"create", "tag"} {
			err := ev.Step(ctx, step, func(ctx context.Context, _ string) error {
				return post(ctx, ev, url+"/"+step, `{"user":"`+ev.Data.UserID+`"}`)
			})
			if err != nil {
				return fmt.Errorf("%s: %w", step, err)
			}
		}
		return nil
	}
}

func TestRedeliverAndCrashAfterEachStep(t *testing.T) {
	srv := processtest.NewEffectServer(t, nil)
	reg := process.NewRegistry()
	process.Handle(reg, "kit.two-steps", signupType, twoSteps(srv.URL))
	rep := processtest.Run(t, reg, signupType, signup{UserID: "U1"}, processtest.Redeliver(3), processtest.CrashAfterEachStep())

	if rep.Status != webhook.StatusSucceeded || rep.Attempts != 1 {
		t.Errorf("plain run: got %s after %d attempts, want SUCCEEDED after 1", rep.Status, rep.Attempts)
	}
	// 1 plain run + 2 steps × 2 crash points; 3 copies per round; crash runs take 2 rounds.
	if len(rep.Events) != 5 || rep.Crashes != 4 || rep.Deliveries != 3+4*2*3 {
		t.Errorf("got %d events, %d crashes, %d deliveries; want 5, 4, 27", len(rep.Events), rep.Crashes, rep.Deliveries)
	}
	srv.AssertOnce(t)
	if got, want := srv.Keys(), rep.StepKeys(); !slices.Equal(got, want) || len(want) != 10 {
		t.Errorf("got keys %v, want the 10 journaled steps' keys %v", got, want)
	}
	crashes := map[string]int{} // "step/journaled" -> crash runs
	for _, ev := range rep.Events {
		if ev.Crash != nil {
			crashes[fmt.Sprintf("%s/%v", ev.Crash.Step, ev.Crash.Journaled)]++
		}
		if ev.Status != webhook.StatusSucceeded {
			t.Errorf("%s: got %s, want SUCCEEDED", ev.Key, ev.Status)
		}
		for _, step := range []string{"create", "tag"} {
			want := 1
			if ev.Crash != nil && ev.Crash.Step == step && !ev.Crash.Journaled {
				want = 2 // ran, not journaled: run again, with the same key
			}
			if n := srv.Count(webhook.IdempotencyKey(ev.Key, "kit.two-steps", step)); n != want {
				t.Errorf("%s (crash %+v): step %s requested %d times, want %d", ev.Key, ev.Crash, step, n, want)
			}
		}
		if ev.Crash != nil && (ev.Attempts != 2 || ev.Verdicts[dispatch.LeaseLost] != 1) {
			t.Errorf("%s: got %d attempts, verdicts %v; want 2 attempts, one crash", ev.Key, ev.Attempts, ev.Verdicts)
		}
	}
	if want := map[string]int{"create/false": 1, "create/true": 1, "tag/false": 1, "tag/true": 1}; !maps.Equal(crashes, want) {
		t.Errorf("got crash runs %v, want one per step before and after its journal write %v", crashes, want)
	}
	t.Logf("kit: %d events, %d deliveries, %d crashes, %d requests for %d keys",
		len(rep.Events), rep.Deliveries, rep.Crashes, srv.Total(), len(srv.Keys()))
}

func TestPermanentFailureIsReported(t *testing.T) {
	reg := process.NewRegistry()
	process.Handle(reg, "kit.blocked", signupType, func(context.Context, *process.Event[signup]) error {
		return process.Permanent(errors.New("user blocked the bot"))
	})
	rep := processtest.Run(t, reg, signupType, []byte(`{"userId":"U2"}`), processtest.Redeliver(2), processtest.Tenant("acme"))
	if rep.Status != webhook.StatusFailed || rep.Attempts != 1 || !strings.HasPrefix(rep.Key, "line#acme#") {
		t.Errorf("got %s after %d attempts (key %s), want FAILED after 1 for tenant acme", rep.Status, rep.Attempts, rep.Key)
	}
	if len(rep.DeadLetters) != 1 || rep.DeadLetters[0].Reason != "permanent: user blocked the bot" {
		t.Errorf("got dead letters %+v, want one with the reason", rep.DeadLetters)
	}
}

// spy records the failures the kit reports, so that a test can check the
// kit fails a test where it must; everything else goes to the real test.
type spy struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (s *spy) Errorf(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.errs = append(s.errs, fmt.Sprintf(format, args...))
}

func (s *spy) failedWith(substr string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range s.errs {
		if strings.Contains(e, substr) {
			return true
		}
	}
	return false
}

func TestKitCatchesBrokenHandlers(t *testing.T) {
	t.Run("a handler that swallows Step's error", func(t *testing.T) {
		srv := processtest.NewEffectServer(t, nil)
		reg := process.NewRegistry()
		process.Handle(reg, "kit.swallow", signupType, func(ctx context.Context, ev *process.Event[signup]) error {
			_ = ev.Step(ctx, "create", func(ctx context.Context, _ string) error { return post(ctx, ev, srv.URL, "{}") })
			return nil
		})
		s := &spy{TB: t}
		processtest.Run(s, reg, signupType, signup{}, processtest.CrashAfterEachStep())
		if !s.failedWith("the attempt did not end") {
			t.Errorf("got failures %q, want the swallowed crash reported", s.errs)
		}
	})
	t.Run("an effect outside a step", func(t *testing.T) {
		srv := processtest.NewEffectServer(t, nil)
		reg := process.NewRegistry()
		process.Handle(reg, "kit.unkeyed", signupType, func(ctx context.Context, ev *process.Event[signup]) error {
			return post(ctx, ev, srv.URL, "{}") // outside Step: no Idempotency-Key
		})
		processtest.Run(t, reg, signupType, signup{}, processtest.Redeliver(2))
		s := &spy{TB: t}
		srv.AssertOnce(s)
		if !s.failedWith("without an Idempotency-Key header") {
			t.Errorf("got failures %q, want the unkeyed request reported", s.errs)
		}
	})
	t.Run("a key made up per attempt", func(t *testing.T) {
		srv := processtest.NewEffectServer(t, nil)
		reg := process.NewRegistry()
		process.Handle(reg, "kit.random-key", signupType, func(ctx context.Context, ev *process.Event[signup]) error {
			return ev.Step(ctx, "create", func(ctx context.Context, _ string) error {
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, nil)
				req.Header.Set(process.HeaderIdempotencyKey, rand.Text()) // wrong: not the step's key
				resp, err := http.DefaultClient.Do(req)
				if err == nil {
					resp.Body.Close()
				}
				return err
			})
		})
		rep := processtest.Run(t, reg, signupType, signup{}, processtest.CrashAfterEachStep())
		if got, want := srv.Keys(), rep.StepKeys(); slices.Equal(got, want) {
			t.Errorf("made-up keys went unnoticed: server keys equal the step keys %v", want)
		}
		if got, want := len(srv.Keys()), len(rep.StepKeys())+1; got != want {
			t.Errorf("got %d distinct keys, want %d (one extra effect from the crash before the journal write)", got, want)
		}
	})
	t.Run("a body that changes per attempt", func(t *testing.T) {
		srv := processtest.NewEffectServer(t, nil)
		reg := process.NewRegistry()
		process.Handle(reg, "kit.changing-body", signupType, func(ctx context.Context, ev *process.Event[signup]) error {
			return ev.Step(ctx, "create", func(ctx context.Context, _ string) error {
				return post(ctx, ev, srv.URL, fmt.Sprintf(`{"attempt":%d}`, ev.Attempt))
			})
		})
		processtest.Run(t, reg, signupType, signup{}, processtest.CrashAfterEachStep())
		s := &spy{TB: t}
		srv.AssertOnce(s)
		if !s.failedWith("differs from the first") {
			t.Errorf("got failures %q, want the changed replay reported", s.errs)
		}
	})
}

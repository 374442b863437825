package compensatetest_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"testing"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/engine/compensate"
	"github.com/hookwall/hookwall/shared/engine/compensatetest"
	"github.com/hookwall/hookwall/shared/engine/process"
	"github.com/hookwall/hookwall/shared/engine/processtest"
)

type follow struct {
	UserID string `json:"userId"`
}

var followType = webhook.NewType[follow]("line", "follow")

// twoSteps registers a handler that journals steps one and two, then fails
// permanently; its compensation DELETEs /things/<step> on api.
func twoSteps(api string, undoErr error) *process.Registry {
	reg := process.NewRegistry()
	process.Handle(reg, "test.two-steps", followType, func(ctx context.Context, ev *process.Event[follow]) error {
		for _, s := range []string{"one", "two"} {
			if err := ev.Step(ctx, s, func(context.Context, string) error { return nil }); err != nil {
				return err
			}
		}
		return process.Permanent(errors.New("refused"))
	}, process.Compensate(func(ctx context.Context, u *process.Undo) error {
		if undoErr != nil {
			return undoErr
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodDelete, api+"/things/"+u.Step, nil)
		resp, err := u.HTTPClient().Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		return process.HTTPStatus(resp.StatusCode)
	}))
	return reg
}

func TestRunCompensatesThroughCrashesAndCopies(t *testing.T) {
	api := processtest.NewEffectServer(t, nil)
	rep := compensatetest.Run(t, twoSteps(api.URL, nil), followType, follow{UserID: "U1"},
		compensatetest.Redeliver(3), compensatetest.CrashAfterEachUndo())

	api.AssertOnce(t)
	if got, want := api.Keys(), rep.UndoKeys(); !slices.Equal(got, want) {
		t.Errorf("the API got keys %v, want one per journaled undo %v", got, want)
	}
	if len(rep.Events) != 5 || rep.Crashes != 4 {
		t.Errorf("got %d events, %d crashes; want 5 and 4 (2 undos × before/after the journal write)", len(rep.Events), rep.Crashes)
	}
	for _, ev := range rep.Events {
		if ev.Status != webhook.StatusCompensated || !slices.Equal(ev.Undone, []string{"test.two-steps/two", "test.two-steps/one"}) {
			t.Errorf("%s (crash %+v): got %s, undone %v; want COMPENSATED, two then one", ev.Key, ev.Crash, ev.Status, ev.Undone)
		}
		if len(ev.Outcomes) != 1 || ev.Outcomes[0].Status != webhook.StatusCompensated {
			t.Errorf("%s: outcomes %+v, want one COMPENSATED", ev.Key, ev.Outcomes)
		}
		if ev.Verdicts[compensate.Compensated] != 1 {
			t.Errorf("%s: verdicts %v, want one delivery compensating it", ev.Key, ev.Verdicts)
		}
	}
	t.Logf("%d events, %d dead-letter deliveries, %d crashes, %d undo requests for %d undo keys",
		len(rep.Events), rep.Deliveries, rep.Crashes, api.Total(), len(api.Keys()))
}

func TestRunReportsDead(t *testing.T) {
	rep := compensatetest.Run(t, twoSteps("", process.Permanent(errors.New("locked"))), followType, follow{UserID: "U1"},
		compensatetest.Redeliver(2))
	if rep.Status != webhook.StatusDead || rep.LastError != "compensation failed permanently: undo test.two-steps/two: permanent: locked" {
		t.Errorf("got %s (%q)", rep.Status, rep.LastError)
	}
	if rep.FailedWith != "permanent: refused" || len(rep.Undone) != 0 {
		t.Errorf("failed with %q, undone %v", rep.FailedWith, rep.Undone)
	}
}

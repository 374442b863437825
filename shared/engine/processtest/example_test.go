package processtest_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/engine/process"
	"github.com/hookwall/hookwall/shared/engine/processtest"
)

// follow is a team's typed event (in real code: line.Follow and line.FollowEvent).
type follow struct {
	UserID string `json:"userId"`
}

var followType = webhook.NewType[follow]("line", "follow")

// createLead is the team's handler: one external effect, in a step, sent
// with the step's Idempotency-Key by ev.HTTPClient().
func createLead(crmURL string) func(context.Context, *process.Event[follow]) error {
	return func(ctx context.Context, ev *process.Event[follow]) error {
		return ev.Step(ctx, "create-lead", func(ctx context.Context, _ string) error {
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, crmURL+"/leads",
				strings.NewReader(`{"lineUserId":"`+ev.Data.UserID+`"}`))
			if err != nil {
				return process.Permanent(err)
			}
			resp, err := ev.HTTPClient().Do(req)
			if err != nil {
				return fmt.Errorf("crm: create lead: %w", err)
			}
			defer resp.Body.Close()
			if resp.StatusCode/100 != 2 {
				return fmt.Errorf("crm: create lead: status %d", resp.StatusCode)
			}
			return nil
		})
	}
}

// proveCreateLead is the team's test, as it reads in a _test.go file with
// func TestCreateLead(t *testing.T) { ... }.
func proveCreateLead(t testing.TB) {
	crm := processtest.NewEffectServer(t, nil)
	reg := process.NewRegistry()
	process.Handle(reg, "crm.lead-from-follow", followType, createLead(crm.URL))

	rep := processtest.Run(t, reg, followType, follow{UserID: "U1"},
		processtest.Redeliver(3), processtest.CrashAfterEachStep())

	crm.AssertOnce(t) // every request keyed; every repeat the same request
	fmt.Println("status:", rep.Status)
	fmt.Println("events:", len(rep.Events), "crashes:", rep.Crashes)
	fmt.Println("effects:", len(crm.Keys()), "keys, for", len(rep.StepKeys()), "journaled steps")
	fmt.Println("requests:", crm.Total())
}

// The kit delivers the follow event 3 times at once, then runs it again with
// a crash before and after the step's journal write: 3 events, each with one
// effect under its own key. The step that crashed before its journal write
// was sent again with the same key (4 requests), which the CRM applies once.
func ExampleRun() {
	t := &exampleT{}
	defer t.cleanup()
	proveCreateLead(t)
	// Output:
	// status: SUCCEEDED
	// events: 3 crashes: 2
	// effects: 3 keys, for 3 journaled steps
	// requests: 4
}

// exampleT stands in for the *testing.T a real test has and an example does
// not: it prints failures and runs the cleanups at the end.
type exampleT struct {
	testing.TB // nil: only the methods below are used
	cleanups   []func()
}

func (t *exampleT) Helper()                   {}
func (t *exampleT) Name() string              { return "ExampleRun" }
func (t *exampleT) Logf(string, ...any)       {}
func (t *exampleT) Cleanup(f func())          { t.cleanups = append(t.cleanups, f) }
func (t *exampleT) Errorf(f string, a ...any) { fmt.Printf("FAIL: "+f+"\n", a...) }
func (t *exampleT) Fatalf(f string, a ...any) {
	t.Errorf(f, a...)
	panic("fatal")
}

func (t *exampleT) cleanup() {
	for i := len(t.cleanups) - 1; i >= 0; i-- {
		t.cleanups[i]()
	}
}

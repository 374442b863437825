package approvals_test

import (
	"context"
	"errors"
	"testing"

	"github.com/hookwall/hookwall/functions/processor/handlers/approvals"
	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/engine/compensatetest"
	"github.com/hookwall/hookwall/shared/engine/platform"
	"github.com/hookwall/hookwall/shared/engine/process"
	"github.com/hookwall/hookwall/shared/engine/processtest"
	"github.com/hookwall/hookwall/shared/protocol/provider/wecom"
)

// registerFailing registers the approvals handler, then one that fails the
// event permanently after it, so that the move is to be compensated.
func registerFailing(t *testing.T, tt *teamTable) *process.Registry {
	reg := processtest.NewRegistry(t, approvals.Team, processtest.Env{"APPROVALS_TABLE": tt.name}, platform.Deps{DynamoDB: tt.db})
	process.Handle(reg, "test.fails-after", wecom.ApprovalChanged, func(context.Context, *process.Event[wecom.ApprovalChange]) error {
		return process.Permanent(errors.New("downstream refused the approval"))
	})
	return reg
}

func TestApprovalRevertedWhenTheEventFails(t *testing.T) {
	tt := newTeamTable(t)
	tt.put(t, "SP-9", approvals.StatusSubmitted)
	reg := registerFailing(t, tt)

	rep := compensatetest.Run(t, reg, wecom.ApprovalChanged, change("SP-9", "2"),
		compensatetest.Redeliver(3), compensatetest.CrashAfterEachUndo())

	if rep.Crashes != 2 || len(rep.Events) != 3 {
		t.Errorf("got %d events, %d crashes; want 3 and 2 (one undo step × before/after its journal write)", len(rep.Events), rep.Crashes)
	}
	for _, ev := range rep.Events {
		if ev.Status != webhook.StatusCompensated {
			t.Errorf("%s: got %s (%s), want COMPENSATED", ev.Key, ev.Status, ev.LastError)
		}
	}
	if got := rep.Undone; len(got) != 1 || got[0] != approvals.HandlerName+"/move-row" {
		t.Errorf("undone: got %v, want the move-row step", got)
	}
	// Every event moved the row (each its own, the earlier one reverted
	// first) and reverted it: it is SUBMITTED again.
	if status, _ := tt.get(t, "SP-9"); status != approvals.StatusSubmitted {
		t.Errorf("row: got %s, want SUBMITTED (reverted)", status)
	}
}

// A step that found the row moved on elsewhere changed nothing: its undo
// leaves the row alone, and the event is still COMPENSATED.
func TestApprovalNotMovedIsLeftAlone(t *testing.T) {
	tt := newTeamTable(t)
	tt.put(t, "SP-8", approvals.StatusRejected)
	rep := compensatetest.Run(t, registerFailing(t, tt), wecom.ApprovalChanged, change("SP-8", "2"))
	if rep.Status != webhook.StatusCompensated {
		t.Errorf("got %s (%s), want COMPENSATED", rep.Status, rep.LastError)
	}
	if status, _ := tt.get(t, "SP-8"); status != approvals.StatusRejected {
		t.Errorf("row: got %s, want REJECTED (left alone)", status)
	}
}

// A row that moved on after the event moved it is not reverted.
func TestApprovalMovedOnSinceIsNotReverted(t *testing.T) {
	tt := newTeamTable(t)
	tt.put(t, "SP-7", approvals.StatusSubmitted)
	reg := processtest.NewRegistry(t, approvals.Team, processtest.Env{"APPROVALS_TABLE": tt.name}, platform.Deps{DynamoDB: tt.db})
	process.Handle(reg, "test.moves-on-then-fails", wecom.ApprovalChanged, func(context.Context, *process.Event[wecom.ApprovalChange]) error {
		tt.put(t, "SP-7", "ARCHIVED") // the business app moved it on
		return process.Permanent(errors.New("downstream refused the approval"))
	})
	rep := compensatetest.Run(t, reg, wecom.ApprovalChanged, change("SP-7", "2"))
	if rep.Status != webhook.StatusCompensated {
		t.Errorf("got %s (%s), want COMPENSATED", rep.Status, rep.LastError)
	}
	if status, _ := tt.get(t, "SP-7"); status != "ARCHIVED" {
		t.Errorf("row: got %s, want ARCHIVED (left alone)", status)
	}
}

// A move whose journal write was lost (a crash) is found on the retry with
// this event's decidedBy and journaled as applied, so that the event's
// compensation reverts it.
func TestOwnMoveFoundOnRetryCountsAsApplied(t *testing.T) {
	tt := newTeamTable(t)
	reg := processtest.NewRegistry(t, platform.Team{Owner: approvals.Team.Owner, Settings: approvals.Team.Settings, Register: func(r *process.Registry, d platform.Deps) {
		// Every event starts from a SUBMITTED row (its first attempt puts it back).
		process.Handle(r, "test.reset-row", wecom.ApprovalChanged, func(_ context.Context, ev *process.Event[wecom.ApprovalChange]) error {
			if ev.Attempt == 1 {
				tt.put(t, "SP-6", approvals.StatusSubmitted)
			}
			return nil
		})
		approvals.Register(r, d)
	}}, processtest.Env{"APPROVALS_TABLE": tt.name}, platform.Deps{DynamoDB: tt.db})

	rep := processtest.Run(t, reg, wecom.ApprovalChanged, change("SP-6", "2"), processtest.CrashAfterEachStep())

	if len(rep.Events) != 3 {
		t.Fatalf("got %d events, want 3 (the plain run and a crash before and after the journal write)", len(rep.Events))
	}
	for _, ev := range rep.Events {
		for _, e := range ev.Journal {
			if e.Handler == approvals.HandlerName && string(e.Result) != `"applied"` {
				t.Errorf("%s (crash %+v): journaled %s, want \"applied\" (the row carries this event's decidedBy)", ev.Key, ev.Crash, e.Result)
			}
		}
	}
}

package approvals_test

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookwall/hookwall/functions/processor/handlers/approvals"
	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/engine/dispatch"
	"github.com/hookwall/hookwall/shared/engine/platform"
	"github.com/hookwall/hookwall/shared/engine/processtest"
	"github.com/hookwall/hookwall/shared/protocol/provider/wecom"
	"github.com/hookwall/hookwall/shared/protocol/provider/wxmsg"
)

// teamTable is the approvals team's own table (pk = SpNo): in memory, or in
// DynamoDB Local with HOOKWALL_TEST_STORE=dynamodb (processtest.NewTable).
type teamTable struct {
	db   processtest.Table
	name string
}

func newTeamTable(t *testing.T) *teamTable {
	t.Helper()
	db, name := processtest.NewTable(t)
	return &teamTable{db: db, name: name}
}

func (tt *teamTable) put(t *testing.T, spNo, status string) {
	t.Helper()
	_, err := tt.db.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: &tt.name, Item: map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: spNo}, "status": &types.AttributeValueMemberS{Value: status},
	}})
	if err != nil {
		t.Fatal(err)
	}
}

func (tt *teamTable) get(t *testing.T, spNo string) (status, decidedBy string) {
	t.Helper()
	out, err := tt.db.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: &tt.name, ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: spNo}}})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := out.Item["status"].(*types.AttributeValueMemberS)
	d, _ := out.Item["decidedBy"].(*types.AttributeValueMemberS)
	if s == nil {
		return "", ""
	}
	if d == nil {
		return s.Value, ""
	}
	return s.Value, d.Value
}

func change(spNo, spStatus string) wecom.ApprovalChange {
	hdr := wxmsg.EventHeader{Header: wxmsg.Header{ToUserName: "ww-corp", FromUserName: "sys", CreateTime: "1700000000", MsgType: "event"},
		Event: "sys_approval_change"}
	return wecom.ApprovalChange{EventHeader: hdr, AgentID: "3010040", ApprovalInfo: wecom.ApprovalInfo{SpNo: spNo, SpName: "Leave",
		SpStatus: spStatus, TemplateID: "tpl", ApplyTime: "1699990000", Applyer: wecom.Applyer{UserID: "alice"}}}
}

// results returns the journaled outcomes of the move-row step, per event.
func results(rep *processtest.Report) []string {
	var out []string
	for _, ev := range rep.Events {
		for _, e := range ev.Journal {
			if e.Handler == approvals.HandlerName && e.Step == "move-row" {
				out = append(out, strings.Trim(string(e.Result), `"`))
			}
		}
	}
	return out
}

func TestApprovalMovesTheRowOnce(t *testing.T) {
	tt := newTeamTable(t)
	tt.put(t, "202401010001", approvals.StatusSubmitted)
	reg := processtest.NewRegistry(t, approvals.Team, processtest.Env{"APPROVALS_TABLE": tt.name}, platform.Deps{DynamoDB: tt.db})

	rep := processtest.Run(t, reg, wecom.ApprovalChanged, change("202401010001", "2"),
		processtest.Redeliver(3), processtest.CrashAfterEachStep())

	if status, by := tt.get(t, "202401010001"); status != approvals.StatusApproved || by != rep.Key {
		t.Errorf("row: got %s decided by %q, want APPROVED decided by the first event %q", status, by, rep.Key)
	}
	got := results(rep)
	applied := 0
	for _, r := range got {
		if r == "applied" {
			applied++
		} else if r != "already-in-target" {
			t.Errorf("unexpected outcome %q", r)
		}
	}
	if applied != 1 || len(got) != len(rep.Events) || len(rep.Events) != 3 || rep.Crashes != 2 {
		t.Errorf("got outcomes %v over %d events (%d crashes), want one applied, the rest already-in-target, over 3 events (2 crashes)",
			got, len(rep.Events), rep.Crashes)
	}
	for _, ev := range rep.Events {
		if ev.Status != webhook.StatusSucceeded {
			t.Errorf("%s: got %s (%s), want SUCCEEDED", ev.Key, ev.Status, ev.LastError)
		}
	}
	t.Logf("approvals: %d events, %d deliveries, %d crashes; outcomes %v", len(rep.Events), rep.Deliveries, rep.Crashes, got)
}

func TestApprovalOutcomes(t *testing.T) {
	tests := []struct {
		name         string
		row          string // "" = no row
		spStatus     string
		wantRow      string
		wantStatus   webhook.Status
		wantAttempts int
		wantResult   string // journaled outcome; "" = no step
	}{
		{"rejected", approvals.StatusSubmitted, "3", approvals.StatusRejected, webhook.StatusSucceeded, 1, "applied"},
		{"a row that moved on is a conflict, left alone", approvals.StatusRejected, "2", approvals.StatusRejected, webhook.StatusSucceeded, 1, "conflict"},
		{"a state not tracked is ignored", approvals.StatusSubmitted, "1", approvals.StatusSubmitted, webhook.StatusSucceeded, 1, ""},
		{"a missing row is retried until the attempts run out", "", "2", "", webhook.StatusFailed, dispatch.DefaultMaxAttempts, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tt := newTeamTable(t)
			if tc.row != "" {
				tt.put(t, "SP-1", tc.row)
			}
			reg := processtest.NewRegistry(t, approvals.Team, processtest.Env{"APPROVALS_TABLE": tt.name}, platform.Deps{DynamoDB: tt.db})
			rep := processtest.Run(t, reg, wecom.ApprovalChanged, change("SP-1", tc.spStatus), processtest.Redeliver(2))
			if rep.Status != tc.wantStatus || rep.Attempts != tc.wantAttempts {
				t.Errorf("got %s after %d attempts (%s), want %s after %d", rep.Status, rep.Attempts, rep.LastError, tc.wantStatus, tc.wantAttempts)
			}
			if row, _ := tt.get(t, "SP-1"); row != tc.wantRow {
				t.Errorf("row: got %q, want %q", row, tc.wantRow)
			}
			var want []string
			if tc.wantResult != "" {
				want = []string{tc.wantResult}
			}
			if got := results(rep); strings.Join(got, ",") != strings.Join(want, ",") {
				t.Errorf("journaled outcomes: got %v, want %v", got, want)
			}
			if tc.wantStatus == webhook.StatusFailed && (len(rep.DeadLetters) != 1 || !strings.Contains(rep.DeadLetters[0].Reason, "no row yet")) {
				t.Errorf("got dead letters %+v, want one saying there is no row yet", rep.DeadLetters)
			}
		})
	}
}

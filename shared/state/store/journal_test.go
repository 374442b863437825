package store

import (
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookwall/hookwall/shared/base/webhook"
)

// An entry of run 0 without a result is stored as before runs were counted
// (the time alone), so that a version that does not know runs reads it;
// entries stored before runs, as a time or as {t, r}, read run 0.
func TestRecordStepsRuns(t *testing.T) {
	at := time.UnixMilli(1_700_000_000_000)
	if v, ok := stepValue(webhook.JournalEntry{Handler: "h", Step: "s", CompletedAt: at}).(*types.AttributeValueMemberN); !ok ||
		v.Value != "1700000000000" {
		t.Errorf("run 0 without a result: stored %#v, want the time alone", v)
	}
	item := map[string]types.AttributeValue{
		StepAttr("h", "old"): avInt(at.UnixMilli()),
		StepAttr("h", "oldResult"): &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
			"t": avInt(at.UnixMilli()), "r": &types.AttributeValueMemberB{Value: []byte("1")}}},
		StepAttr("h", "again"):       stepValue(webhook.JournalEntry{Handler: "h", Step: "again", CompletedAt: at, Run: 2}),
		StepAttr("h", "$undo:again"): stepValue(webhook.JournalEntry{Handler: "h", Step: "$undo:again", CompletedAt: at, Run: 1}),
		StepAttr("h", "againResult"): stepValue(webhook.JournalEntry{Handler: "h", Step: "againResult", CompletedAt: at, Run: 3, Result: []byte("x")}),
	}
	entries, err := RecordSteps(item)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		run    int
		result string
	}{"old": {0, ""}, "oldResult": {0, "1"}, "again": {2, ""}, "$undo:again": {1, ""}, "againResult": {3, "x"}}
	if len(entries) != len(want) {
		t.Fatalf("got %d entries, want %d", len(entries), len(want))
	}
	for _, e := range entries {
		w := want[e.Step]
		if e.Run != w.run || string(e.Result) != w.result || !e.CompletedAt.Equal(at) {
			t.Errorf("%s: run %d result %q at %v, want run %d result %q at %v", e.Step, e.Run, e.Result, e.CompletedAt, w.run, w.result, at)
		}
	}
}

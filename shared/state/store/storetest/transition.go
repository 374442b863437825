package storetest

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookwall/hookwall/shared/state/store"
)

// rows is one transition subtest's business table.
type rows struct {
	db    TransitionDB
	table string
	ctx   context.Context
}

func s(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }

var rowKey = map[string]types.AttributeValue{"pk": s("SP-1"), "sk": s("ROW")}

// put writes the row with attrs (strings) besides its key.
func (r *rows) put(t *testing.T, attrs map[string]string) {
	t.Helper()
	item := map[string]types.AttributeValue{"pk": s("SP-1"), "sk": s("ROW")}
	for k, v := range attrs {
		item[k] = s(v)
	}
	if _, err := r.db.PutItem(r.ctx, &dynamodb.PutItemInput{TableName: &r.table, Item: item}); err != nil {
		t.Fatalf("put row: %v", err)
	}
}

// get reads the row's string attributes (nil if there is no row).
func (r *rows) get(t *testing.T) map[string]string {
	t.Helper()
	out, err := r.db.GetItem(r.ctx, &dynamodb.GetItemInput{TableName: &r.table, Key: rowKey, ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatalf("get row: %v", err)
	}
	if len(out.Item) == 0 {
		return nil
	}
	m := map[string]string{}
	for k, v := range out.Item {
		if sv, ok := v.(*types.AttributeValueMemberS); ok {
			m[k] = sv.Value
		}
	}
	return m
}

func (r *rows) apply(t *testing.T, tr store.Transition) store.TransitionResult {
	t.Helper()
	tr.Table, tr.Key = r.table, rowKey
	res, err := store.ApplyTransition(r.ctx, r.db, tr)
	if err != nil {
		t.Fatalf("apply: %v", err)
	}
	return res
}

func str(item map[string]types.AttributeValue, name string) string {
	if v, ok := item[name].(*types.AttributeValueMemberS); ok {
		return v.Value
	}
	return ""
}

var approve = store.Transition{From: []string{"SUBMITTED", "PENDING"}, To: "APPROVED",
	Set: map[string]types.AttributeValue{"decidedBy": s("second")}}

var transitionCases = []struct {
	name string
	run  func(t *testing.T, r *rows)
}{
	{"a row in a listed state moves to the target with the attributes set", func(t *testing.T, r *rows) {
		r.put(t, map[string]string{"status": "PENDING", "note": "kept"})
		res := r.apply(t, approve)
		if res.Outcome != store.TransitionApplied || res.State != "APPROVED" || str(res.Item, "status") != "APPROVED" ||
			str(res.Item, "decidedBy") != "second" || str(res.Item, "note") != "kept" {
			t.Errorf("got %v, state %q, item %v; want applied, the new item", res.Outcome, res.State, res.Item)
		}
		if got := r.get(t); got["status"] != "APPROVED" || got["decidedBy"] != "second" || got["note"] != "kept" {
			t.Errorf("stored: %v", got)
		}
	}},
	{"a row already in the target state is left as it is", func(t *testing.T, r *rows) {
		r.put(t, map[string]string{"status": "APPROVED", "decidedBy": "first"})
		res := r.apply(t, approve)
		if res.Outcome != store.TransitionAlreadyInTarget || res.State != "APPROVED" || str(res.Item, "decidedBy") != "first" {
			t.Errorf("got %v, state %q, item %v; want already-in-target with the row as found", res.Outcome, res.State, res.Item)
		}
		if got := r.get(t); got["decidedBy"] != "first" {
			t.Errorf("stored: %v, want untouched", got)
		}
	}},
	{"a row in another state is a conflict reporting that state", func(t *testing.T, r *rows) {
		r.put(t, map[string]string{"status": "REJECTED"})
		res := r.apply(t, approve)
		if res.Outcome != store.TransitionConflict || res.State != "REJECTED" || str(res.Item, "status") != "REJECTED" {
			t.Errorf("got %v, state %q; want conflict, REJECTED", res.Outcome, res.State)
		}
		if got := r.get(t); got["status"] != "REJECTED" || got["decidedBy"] != "" {
			t.Errorf("stored: %v, want untouched", got)
		}
	}},
	{"a row without a state is a conflict with an empty state", func(t *testing.T, r *rows) {
		r.put(t, map[string]string{"note": "x"})
		if res := r.apply(t, approve); res.Outcome != store.TransitionConflict || res.State != "" {
			t.Errorf("got %v, state %q; want conflict, empty", res.Outcome, res.State)
		}
	}},
	{"a missing row is not found and not created", func(t *testing.T, r *rows) {
		if res := r.apply(t, approve); res.Outcome != store.TransitionNotFound || res.Item != nil {
			t.Errorf("got %v with %v, want not found", res.Outcome, res.Item)
		}
		if got := r.get(t); got != nil {
			t.Errorf("a row was created: %v", got)
		}
	}},
	{"a custom state attribute is the one compared and set", func(t *testing.T, r *rows) {
		r.put(t, map[string]string{"status": "OTHER", "phase": "SUBMITTED"})
		tr := approve
		tr.Attribute = "phase"
		if res := r.apply(t, tr); res.Outcome != store.TransitionApplied {
			t.Fatalf("got %v, want applied", res.Outcome)
		}
		if got := r.get(t); got["phase"] != "APPROVED" || got["status"] != "OTHER" {
			t.Errorf("stored: %v, want phase APPROVED, status untouched", got)
		}
	}},
	{"a transition without table, key, from or to is an error", func(t *testing.T, r *rows) {
		for name, tr := range map[string]store.Transition{
			"no table": {Key: rowKey, From: []string{"A"}, To: "B"},
			"no key":   {Table: r.table, From: []string{"A"}, To: "B"},
			"no from":  {Table: r.table, Key: rowKey, To: "B"},
			"no to":    {Table: r.table, Key: rowKey, From: []string{"A"}},
		} {
			if _, err := store.ApplyTransition(r.ctx, r.db, tr); err == nil {
				t.Errorf("%s: got no error", name)
			}
		}
	}},
}

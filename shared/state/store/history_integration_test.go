//go:build integration

package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookwall/hookwall/shared/aws/awstest"
	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/engine/dispatch"
	"github.com/hookwall/hookwall/shared/state/store"
)

// historyLines renders a history as "from→to attempt fn owner? error", one
// entry per element, for comparison.
func historyLines(h []webhook.HistoryEntry) []string {
	var out []string
	for _, e := range h {
		owner := "-"
		if e.Owner != "" {
			owner = "owner"
		}
		out = append(out, fmt.Sprintf("v%d %s→%s attempt=%d fn=%s %s %q", e.Version, e.From, e.To, e.Attempt, e.Function, owner, e.Error))
	}
	return out
}

func expectLines(t *testing.T, got []webhook.HistoryEntry, want ...string) {
	t.Helper()
	g := historyLines(got)
	if strings.Join(g, "\n") != strings.Join(want, "\n") {
		t.Errorf("history:\n got %s\nwant %s", strings.Join(g, "\n     "), strings.Join(want, "\n     "))
	}
}

// Must show 5: an event that goes RECEIVED → PROCESSING → RETRY →
// PROCESSING → SUCCEEDED through the receiver's claim and the processor's
// dispatcher on DynamoDB Local has all five in its history, in order, each
// written by the transition's own call (the calls are those of before the
// history, see TestCallsAndCapacityPerEvent), and leaves the sweep index.
func TestHistoryOfARetriedEvent(t *testing.T) {
	p := newPipeline(t, store.Config{Function: "processor"})
	receiver, err := store.New(store.Config{Client: awstest.DynamoDB(t), TableName: p.table.Name(), Function: "receiver"})
	if err != nil {
		t.Fatal(err)
	}
	const key = "line#t1#history-1"
	res, err := receiver.Claim(context.Background(), store.NewEvent{Key: key, Provider: "line", Tenant: "t1",
		EventType: orderType.Name, PayloadHash: "h", Payload: payloadOf(200)}, time.Hour)
	if err != nil || res.Outcome != store.Claimed {
		t.Fatalf("claim: %v, %v", res.Outcome, err)
	}
	env := res.Record.Envelope()
	p.take()

	p.fail.Store(true)
	first := p.process(t, env, dispatch.Retried)
	p.fail.Store(false)
	second := p.process(t, env, dispatch.Succeeded)
	for name, c := range map[string]struct {
		got  map[string]int
		want map[string]int
	}{
		"attempt 1": {first.ops, map[string]int{"UpdateItem": 3}},
		"attempt 2": {second.ops, map[string]int{"UpdateItem": 2, "GetItem": 1, "Query": 1}},
	} {
		if fmt.Sprint(c.got) != fmt.Sprint(c.want) {
			t.Errorf("%s: got calls %v, want %v", name, c.got, c.want)
		}
	}

	rec, err := p.table.Get(context.Background(), key)
	if err != nil || rec == nil {
		t.Fatalf("get: %v, %v", rec, err)
	}
	expectLines(t, rec.History,
		`v1 →RECEIVED attempt=0 fn=receiver - ""`,
		`v2 RECEIVED→PROCESSING attempt=1 fn=processor owner ""`,
		`v3 PROCESSING→RETRY attempt=1 fn=processor owner "payment service down"`,
		`v4 RETRY→PROCESSING attempt=2 fn=processor owner ""`,
		`v5 PROCESSING→SUCCEEDED attempt=2 fn=processor owner ""`)
	if rec.HistoryDropped() != 0 || rec.Version != 5 || rec.Status != webhook.StatusSucceeded {
		t.Errorf("got %s at version %d with %d dropped, want SUCCEEDED at 5, none dropped", rec.Status, rec.Version, rec.HistoryDropped())
	}
	for i := 1; i < len(rec.History); i++ {
		if rec.History[i].At.Before(rec.History[i-1].At) {
			t.Errorf("entry v%d is older than v%d", rec.History[i].Version, rec.History[i-1].Version)
		}
	}
	if rec.History[1].Owner == rec.History[3].Owner {
		t.Errorf("both attempts have the lease owner %s, want one per attempt", rec.History[1].Owner)
	}
	if rec.SweepShard != store.ShardName(store.ShardOf(key)) || rec.SweepAt == 0 {
		t.Errorf("the SUCCEEDED record lost its sweep attributes: %q %d", rec.SweepShard, rec.SweepAt)
	}
	// The completion leaves the sweep entry (the sweeper passes it).
	stuck, _, err := p.table.Stuck(context.Background(), store.ShardOf(key), time.Time{}, time.Now().Add(time.Hour), 10, nil)
	if err != nil || len(stuck) != 1 || stuck[0].Key != key {
		t.Errorf("the sweep index lists %v (%v), want the one entry of %s", stuck, err, key)
	}
}

// A processor that did not write the record's last state (another Lambda
// container took the first attempt) acquires it with one more call: the
// first write, pinned to the state a claim leaves, fails and returns the
// record, and the second is pinned to it.
func TestAcquireInAnotherProcess(t *testing.T) {
	p := newPipeline(t, store.Config{Function: "processor"})
	env, _ := p.claim(t, "line#t1#other", payloadOf(200))
	p.fail.Store(true)
	p.process(t, env, dispatch.Retried)
	p.fail.Store(false)

	ops := &awstest.OpCounter{}
	other, err := store.New(store.Config{Client: awstest.DynamoDB(t, ops.DynamoDBOption), TableName: p.table.Name(), Function: "processor"})
	if err != nil {
		t.Fatal(err)
	}
	ops.Take()
	acq, err := other.Acquire(context.Background(), env.Key, "w-other", time.Now().Add(time.Minute))
	if err != nil || acq.Outcome != webhook.Acquired || acq.Lease.Version != 4 || acq.Lease.Attempt != 2 {
		t.Fatalf("acquire: got %+v, %v; want acquired at version 4, attempt 2", acq, err)
	}
	if got := ops.Take(); fmt.Sprint(got) != fmt.Sprint(map[string]int{"UpdateItem": 2}) {
		t.Errorf("acquire without a hint: got calls %v, want 2 UpdateItem", got)
	}
	if ok, err := other.Complete(context.Background(), acq.Lease, time.Now().Add(time.Hour)); err != nil || !ok {
		t.Fatalf("complete: %v, %v", ok, err)
	}
	rec, _ := other.Get(context.Background(), env.Key)
	expectLines(t, rec.History,
		`v1 →RECEIVED attempt=0 fn=processor - ""`,
		`v2 RECEIVED→PROCESSING attempt=1 fn=processor owner ""`,
		`v3 PROCESSING→RETRY attempt=1 fn=processor owner "payment service down"`,
		`v4 RETRY→PROCESSING attempt=2 fn=processor owner ""`,
		`v5 PROCESSING→SUCCEEDED attempt=2 fn=processor owner ""`)
}

// A record written before records had a history (no `history` map) gets
// one with its next transition: DynamoDB refuses to add an entry to a map
// that is not there, and the write is made again with a new map (one more
// call, once per such record).
func TestRecordWithoutHistory(t *testing.T) {
	ops := &awstest.OpCounter{}
	db := awstest.DynamoDB(t, ops.DynamoDBOption)
	name := awstest.NewTable(t, db)
	table, err := store.New(store.Config{Client: db, TableName: name, Function: "processor", HistoryKeep: 2})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	n := func(v int64) types.AttributeValue { return &types.AttributeValueMemberN{Value: fmt.Sprint(v)} }
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	_, err = db.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: &name, Item: map[string]types.AttributeValue{
		"pk": s("line#t1#old"), "sk": s(store.SKEvent), "status": s("RECEIVED"), "version": n(1), "provider": s("line"),
		"tenant": s("t1"), "eventType": s("order"), "receivedAt": n(now.UnixMilli()), "updatedAt": n(now.UnixMilli()),
		"enqueuedAt": n(now.UnixMilli()), "expiresAt": n(now.Add(time.Hour).Unix()), "attempts": n(0),
		"payloadHash": s("h"), "payload": s(`{}`), "claimId": s("c-old"),
	}})
	if err != nil {
		t.Fatal(err)
	}
	ops.Take()
	acq, err := table.Acquire(context.Background(), "line#t1#old", "w1", now.Add(time.Minute))
	if err != nil || acq.Outcome != webhook.Acquired || acq.Lease.Version != 2 {
		t.Fatalf("acquire: got %+v, %v", acq, err)
	}
	if got := ops.Take(); fmt.Sprint(got) != fmt.Sprint(map[string]int{"UpdateItem": 2}) {
		t.Errorf("first transition of a record without history: got calls %v, want 2 UpdateItem", got)
	}
	for i, step := range []func() (bool, error){
		func() (bool, error) { return table.Retry(context.Background(), acq.Lease, "x") },
	} {
		if ok, err := step(); err != nil || !ok {
			t.Fatalf("step %d: %v, %v", i, ok, err)
		}
	}
	if got := ops.Take(); fmt.Sprint(got) != fmt.Sprint(map[string]int{"UpdateItem": 1}) {
		t.Errorf("the next transition: got calls %v, want 1 UpdateItem", got)
	}
	acq, err = table.Acquire(context.Background(), "line#t1#old", "w2", now.Add(time.Minute))
	if err != nil || acq.Outcome != webhook.Acquired {
		t.Fatalf("acquire: got %+v, %v", acq, err)
	}
	rec, err := table.Get(context.Background(), "line#t1#old")
	if err != nil || rec == nil {
		t.Fatal(rec, err)
	}
	expectLines(t, rec.History,
		`v3 PROCESSING→RETRY attempt=1 fn=processor owner "x"`,
		`v4 RETRY→PROCESSING attempt=2 fn=processor owner ""`)
	if rec.HistoryDropped() != 2 {
		t.Errorf("dropped: got %d, want 2 (v1, before histories, and v2, past HistoryKeep)", rec.HistoryDropped())
	}
}

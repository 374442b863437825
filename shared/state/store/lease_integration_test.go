//go:build integration

package store_test

import (
	"context"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookwall/hookwall/shared/aws/awstest"
	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/state/store"
)

type env struct {
	db    *dynamodb.Client
	table *store.Table
	name  string
	clock *leaseClock
}

// leaseClock is the table's clock: real time plus an offset that Advance moves
// on, so that a test lets a lease run out without sleeping.
type leaseClock struct {
	mu     sync.Mutex
	offset time.Duration
}

// Now returns the real time plus the offset.
func (c *leaseClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.offset)
}

// Advance moves the clock on by d.
func (c *leaseClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offset += d
}

func newEnv(t *testing.T) *env {
	t.Helper()
	db := awstest.DynamoDB(t)
	name := awstest.NewTable(t, db)
	clk := &leaseClock{}
	table, err := store.New(store.Config{Client: db, TableName: name, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	return &env{db: db, table: table, name: name, clock: clk}
}

// seed writes a record as the receiver's claim leaves it, then applies mutate.
func (e *env) seed(t *testing.T, key string, mutate func(*store.Record)) store.Record {
	t.Helper()
	now := time.Now()
	rec := store.Record{
		Key: key, SK: store.SKEvent, Status: webhook.StatusReceived, Version: 1, Provider: "line", Tenant: "t1",
		EventType: "follow", ReceivedAt: now.UnixMilli(), UpdatedAt: now.UnixMilli(), EnqueuedAt: now.UnixMilli(),
		ExpiresAt: now.Add(7 * 24 * time.Hour).Unix(), PayloadHash: "h", Payload: store.Payload(`{}`), ClaimID: "claim-" + key,
	}
	if mutate != nil {
		mutate(&rec)
	}
	item, err := attributevalue.MarshalMap(rec)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: &e.name, Item: item}); err != nil {
		t.Fatal(err)
	}
	return rec
}

func (e *env) get(t *testing.T, key string) store.Record {
	t.Helper()
	out, err := e.db.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: &e.name, ConsistentRead: new(true),
		Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: key}, "sk": &types.AttributeValueMemberS{Value: store.SKEvent}}})
	if err != nil {
		t.Fatal(err)
	}
	var rec store.Record
	if err := attributevalue.UnmarshalMap(out.Item, &rec); err != nil {
		t.Fatal(err)
	}
	return rec
}

func TestAcquireOutcomes(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	now := time.Now()
	e.seed(t, "received", nil)
	e.seed(t, "retry", func(r *store.Record) { r.Status = webhook.StatusRetry; r.Attempts = 2; r.Version = 5 })
	e.seed(t, "done", func(r *store.Record) { r.Status = webhook.StatusSucceeded })
	e.seed(t, "dead", func(r *store.Record) { r.Status = webhook.StatusDead })
	e.seed(t, "failed", func(r *store.Record) { r.Status = webhook.StatusFailed; r.LastError = "nope" })
	e.seed(t, "busy", func(r *store.Record) {
		r.Status, r.LeaseOwner, r.LeaseUntil = webhook.StatusProcessing, "other", now.Add(20*time.Second).UnixMilli()
	})
	e.seed(t, "stale-lease", func(r *store.Record) {
		r.Status, r.LeaseOwner, r.LeaseUntil, r.Attempts = webhook.StatusProcessing, "other", now.Add(-time.Second).UnixMilli(), 1
	})
	e.seed(t, "expired", func(r *store.Record) { r.ExpiresAt = now.Add(-time.Hour).Unix() })
	tests := []struct {
		key         string
		want        webhook.AcquireOutcome
		wantAttempt int
		wantVersion int64
	}{
		{"received", webhook.Acquired, 1, 2},
		{"retry", webhook.Acquired, 3, 6},
		{"stale-lease", webhook.Acquired, 2, 2},
		{"done", webhook.AcquireDone, 0, 0},
		{"dead", webhook.AcquireDone, 0, 0},
		{"failed", webhook.AcquireFailedState, 0, 0},
		{"busy", webhook.AcquireBusy, 0, 0},
		{"expired", webhook.AcquireMissing, 0, 0},
		{"absent", webhook.AcquireMissing, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			until := time.Now().Add(time.Minute).Truncate(time.Millisecond)
			a, err := e.table.Acquire(ctx, tt.key, "me-"+tt.key, until)
			if err != nil {
				t.Fatal(err)
			}
			if a.Outcome != tt.want {
				t.Fatalf("got %v, want %v", a.Outcome, tt.want)
			}
			switch tt.want {
			case webhook.Acquired:
				l := a.Lease
				if l.Owner != "me-"+tt.key || l.Attempt != tt.wantAttempt || l.Version != tt.wantVersion ||
					!l.Until.Equal(until) || l.ClaimID != "claim-"+tt.key {
					t.Errorf("got lease %+v, want attempt %d version %d", l, tt.wantAttempt, tt.wantVersion)
				}
				if rec := e.get(t, tt.key); rec.Status != webhook.StatusProcessing || rec.LeaseOwner != l.Owner {
					t.Errorf("got record %s owned by %q", rec.Status, rec.LeaseOwner)
				}
			case webhook.AcquireBusy:
				if a.RetryAfter < 15*time.Second || a.RetryAfter > 20*time.Second {
					t.Errorf("got RetryAfter %v, want the remaining lease (~20s)", a.RetryAfter)
				}
			case webhook.AcquireFailedState:
				if a.LastError != "nope" {
					t.Errorf("got lastError %q", a.LastError)
				}
			}
		})
	}
}

func TestAcquireRaceHasOneWinner(t *testing.T) {
	e := newEnv(t)
	e.seed(t, "k", nil)
	var won, busy atomic.Int32
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a, err := e.table.Acquire(context.Background(), "k", "w"+string(rune('a'+i)), time.Now().Add(time.Minute))
			if err != nil {
				t.Error(err)
				return
			}
			switch a.Outcome {
			case webhook.Acquired:
				won.Add(1)
			case webhook.AcquireBusy:
				busy.Add(1)
			}
		}()
	}
	wg.Wait()
	if won.Load() != 1 || busy.Load() != 19 {
		t.Errorf("got %d winners and %d busy, want 1 and 19", won.Load(), busy.Load())
	}
}

func TestFence(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.seed(t, "k", nil)
	// A takes a lease and stalls past it; B takes over.
	a, err := e.table.Acquire(ctx, "k", "A", e.clock.Now().Add(time.Minute))
	if err != nil || a.Outcome != webhook.Acquired {
		t.Fatalf("A: %v %v", a.Outcome, err)
	}
	if held, err := e.table.Heartbeat(ctx, a.Lease, e.clock.Now().Add(2*time.Minute)); !held || err != nil {
		t.Fatalf("A's heartbeat while it holds the lease: held %v, err %v", held, err)
	}
	if b, err := e.table.Acquire(ctx, "k", "B", e.clock.Now().Add(time.Minute)); err != nil || b.Outcome != webhook.AcquireBusy {
		t.Fatalf("B while A's lease runs: %v %v, want Busy", b.Outcome, err)
	}
	e.clock.Advance(3 * time.Minute) // A's lease runs out
	b, err := e.table.Acquire(ctx, "k", "B", e.clock.Now().Add(time.Minute))
	if err != nil || b.Outcome != webhook.Acquired || b.Lease.Attempt != 2 {
		t.Fatalf("B: %+v %v", b, err)
	}
	before := e.get(t, "k")
	// Every write of A is now refused, and changes nothing.
	for name, write := range map[string]func() (bool, error){
		"heartbeat": func() (bool, error) { return e.table.Heartbeat(ctx, a.Lease, time.Now().Add(time.Hour)) },
		"complete":  func() (bool, error) { return e.table.Complete(ctx, a.Lease, time.Now().Add(time.Hour)) },
		"retry":     func() (bool, error) { return e.table.Retry(ctx, a.Lease, "x") },
		"fail":      func() (bool, error) { return e.table.Fail(ctx, a.Lease, "x") },
		"journal": func() (bool, error) {
			return e.table.SaveStep(ctx, a.Lease, webhook.JournalEntry{Handler: "h", Step: "s", CompletedAt: time.Now()})
		},
	} {
		held, err := write()
		if err != nil || held {
			t.Errorf("A's %s after B took over: held %v, err %v; want false, nil", name, held, err)
		}
	}
	if after := e.get(t, "k"); !reflect.DeepEqual(after, before) {
		t.Errorf("A's refused writes changed the record:\n got %+v\nwant %+v", after, before)
	}
	if steps, err := e.table.Journal(ctx, b.Lease); err != nil || len(steps) != 0 {
		t.Errorf("got journal %v, %v; want empty", steps, err)
	}
	// B's writes go through, each moving the version on.
	if held, err := e.table.SaveStep(ctx, b.Lease, webhook.JournalEntry{Handler: "h", Step: "s", Result: []byte(`"r"`), CompletedAt: time.Now()}); !held || err != nil {
		t.Fatalf("B's journal: %v %v", held, err)
	}
	retain := time.Now().Add(24 * time.Hour)
	if held, err := e.table.Complete(ctx, b.Lease, retain); !held || err != nil {
		t.Fatalf("B's completion: %v %v", held, err)
	}
	rec := e.get(t, "k")
	if rec.Status != webhook.StatusSucceeded || rec.Version != b.Lease.Version+1 || rec.LeaseOwner != "" ||
		rec.LeaseUntil != 0 || rec.ExpiresAt != retain.Unix() {
		t.Errorf("got record %+v, want SUCCEEDED, version %d, no lease, expiresAt %d", rec, b.Lease.Version+1, retain.Unix())
	}
	// Once completed, B's own fence is spent too.
	if held, _ := e.table.Complete(ctx, b.Lease, retain); held {
		t.Error("a second completion with the same lease was applied")
	}
}

func TestRetryAndFail(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.seed(t, "k", nil)
	a, _ := e.table.Acquire(ctx, "k", "A", time.Now().Add(time.Minute))
	if held, err := e.table.Retry(ctx, a.Lease, "boom"); !held || err != nil {
		t.Fatalf("retry: %v %v", held, err)
	}
	if rec := e.get(t, "k"); rec.Status != webhook.StatusRetry || rec.LastError != "boom" || rec.LeaseOwner != "" || rec.Version != 3 {
		t.Errorf("after retry got %+v", rec)
	}
	b, _ := e.table.Acquire(ctx, "k", "B", time.Now().Add(time.Minute))
	if b.Outcome != webhook.Acquired || b.Lease.Attempt != 2 || b.LastError != "boom" {
		t.Fatalf("second acquire: %+v", b)
	}
	if held, err := e.table.Fail(ctx, b.Lease, "gave up"); !held || err != nil {
		t.Fatalf("fail: %v %v", held, err)
	}
	if rec := e.get(t, "k"); rec.Status != webhook.StatusFailed || rec.LastError != "gave up" || rec.Version != 5 {
		t.Errorf("after fail got %+v", rec)
	}
}

func TestJournalIgnoresAnEarlierClaim(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.seed(t, "k", func(r *store.Record) { r.ClaimID = "old" })
	a, _ := e.table.Acquire(ctx, "k", "A", time.Now().Add(time.Minute))
	for _, s := range []string{"one", "two"} {
		if held, err := e.table.SaveStep(ctx, a.Lease, webhook.JournalEntry{Handler: "h", Step: s, CompletedAt: time.Now()}); !held || err != nil {
			t.Fatalf("save %s: %v %v", s, held, err)
		}
	}
	// The key is claimed anew (the old claim expired): a new claim id.
	e.seed(t, "k", func(r *store.Record) { r.ClaimID = "new"; r.Attempts = 1; r.Status = webhook.StatusRetry })
	b, _ := e.table.Acquire(ctx, "k", "B", time.Now().Add(time.Minute))
	if held, err := e.table.SaveStep(ctx, b.Lease, webhook.JournalEntry{Handler: "h", Step: "two", Result: []byte("2"), CompletedAt: time.Now()}); !held || err != nil {
		t.Fatalf("save: %v %v", held, err)
	}
	got, err := e.table.Journal(ctx, b.Lease)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Handler != "h" || got[0].Step != "two" || string(got[0].Result) != "2" {
		t.Errorf("got %+v, want only the new claim's step two", got)
	}
	// The old claim's entries were kept in its record, which the new claim
	// replaced: they are gone with it.
	old, _ := e.table.Steps(ctx, "k", "old")
	if len(old) != 0 {
		t.Errorf("got old claim's steps %+v, want none (gone with the old record)", old)
	}
}

func TestApplyTransition(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	key := func(id string) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: id}, "sk": &types.AttributeValueMemberS{Value: "ORDER"}}
	}
	item := key("o1")
	item["state"] = &types.AttributeValueMemberS{Value: "PENDING"}
	if _, err := e.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &e.name, Item: item}); err != nil {
		t.Fatal(err)
	}
	tr := store.Transition{Table: e.name, Key: key("o1"), Attribute: "state", From: []string{"PENDING"}, To: "APPROVED",
		Set: map[string]types.AttributeValue{"approvedBy": &types.AttributeValueMemberS{Value: "sp-1"}}}
	steps := []struct {
		tr   store.Transition
		want store.TransitionOutcome
	}{
		{tr, store.TransitionApplied},
		{tr, store.TransitionAlreadyInTarget},
		{store.Transition{Table: e.name, Key: key("o1"), Attribute: "state", From: []string{"PENDING"}, To: "REJECTED"}, store.TransitionConflict},
		{store.Transition{Table: e.name, Key: key("nope"), Attribute: "state", From: []string{"PENDING"}, To: "APPROVED"}, store.TransitionNotFound},
	}
	for i, s := range steps {
		res, err := store.ApplyTransition(ctx, e.db, s.tr)
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if res.Outcome != s.want {
			t.Errorf("step %d: got %v, want %v", i, res.Outcome, s.want)
		}
		if s.want == store.TransitionConflict && res.State != "APPROVED" {
			t.Errorf("conflict: got state %q, want the current APPROVED", res.State)
		}
	}
	out, _ := e.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &e.name, Key: key("o1")})
	if v, _ := out.Item["approvedBy"].(*types.AttributeValueMemberS); v == nil || v.Value != "sp-1" {
		t.Errorf("got approvedBy %v, want sp-1", out.Item["approvedBy"])
	}
	// A race: 10 workers, one applies, the rest see it applied.
	var applied, already atomic.Int32
	item["state"] = &types.AttributeValueMemberS{Value: "PENDING"}
	e.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &e.name, Item: item})
	var wg sync.WaitGroup
	for range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := store.ApplyTransition(ctx, e.db, tr)
			if err != nil {
				t.Error(err)
			}
			switch res.Outcome {
			case store.TransitionApplied:
				applied.Add(1)
			case store.TransitionAlreadyInTarget:
				already.Add(1)
			}
		}()
	}
	wg.Wait()
	if applied.Load() != 1 || already.Load() != 9 {
		t.Errorf("race: got %d applied, %d already; want 1 and 9", applied.Load(), already.Load())
	}
}

//go:build integration

package sweep_test

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	dbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookwall/hookwall/shared/aws/awstest"
	"github.com/hookwall/hookwall/shared/aws/queue"
	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/base/webhook/webhooktest"
	"github.com/hookwall/hookwall/shared/engine/sweep"
	"github.com/hookwall/hookwall/shared/state/store"
)

// payloadWorld is a table, queues and a sweeper without a gate (so a held
// record is rechecked at each look), on a clock the test moves.
type payloadWorld struct {
	ctx   context.Context
	db    *dynamodb.Client
	name  string
	clock *webhooktest.Clock
	table *store.Table
	sw    *sweep.Sweeper
}

func newPayloadWorld(t *testing.T) *payloadWorld {
	t.Helper()
	w := &payloadWorld{ctx: context.Background(), db: awstest.DynamoDB(t), clock: webhooktest.NewClock(time.Now())}
	w.name = awstest.NewTable(t, w.db)
	var err error
	if w.table, err = store.New(store.Config{Client: w.db, TableName: w.name, Now: w.clock.Now, Function: "processor"}); err != nil {
		t.Fatal(err)
	}
	sc := awstest.SQS(t)
	qs := awstest.NewQueues(t, sc, 5, 30*time.Second)
	mainQ, _ := queue.New(queue.Config{Client: sc, URL: qs.URL})
	dlq, _ := queue.New(queue.Config{Client: sc, URL: qs.DLQURL})
	if w.sw, err = sweep.New(sweep.Config{Store: w.table, Queue: mainQ, DLQ: dlq, Now: w.clock.Now,
		Logger: slog.New(slog.DiscardHandler)}); err != nil {
		t.Fatal(err)
	}
	return w
}

// hold claims key with a payload too large for the record (so it has its
// own item) and holds it on target forward/t1, as the processor does.
func (w *payloadWorld) hold(t *testing.T, key string) *store.Record {
	t.Helper()
	noise := make([]byte, 2*store.InlineRecordBytes) // incompressible: the payload goes to its own item
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range noise {
		noise[i] = 'a' + byte(rng.IntN(26))
	}
	payload := `{"type":"follow","note":"` + string(noise) + `"}`
	res, err := w.table.Claim(w.ctx, store.NewEvent{Key: key, Provider: "line", Tenant: "t1", EventType: "follow",
		PayloadHash: "h-" + key, Payload: []byte(payload)}, window)
	if err != nil || res.Outcome != store.Claimed || res.Record.PayloadRef == "" {
		t.Fatalf("claim %s: %v %v (payload ref %q)", key, res.Outcome, err, res.Record.PayloadRef)
	}
	acq, err := w.table.Acquire(w.ctx, key, "worker", w.clock.Now().Add(time.Minute))
	if err != nil || acq.Outcome != webhook.Acquired {
		t.Fatalf("acquire %s: %v %v", key, acq.Outcome, err)
	}
	l := acq.Lease
	l.Target = "forward/t1"
	if ok, err := w.table.Hold(w.ctx, l, webhook.Hold{Reason: "circuit open: forward/t1", On: "target#forward/t1",
		Target: "forward/t1", RecheckAt: w.clock.Now().Add(time.Minute), RetainUntil: w.clock.Now().Add(sweep.DefaultRetention)}); !ok || err != nil {
		t.Fatalf("hold %s: %v %v", key, ok, err)
	}
	return res.Record
}

// payloadExpiry reads the expiresAt of rec's payload item (0: gone).
func (w *payloadWorld) payloadExpiry(t *testing.T, rec *store.Record) int64 {
	t.Helper()
	out, err := w.db.GetItem(w.ctx, &dynamodb.GetItemInput{TableName: &w.name, ConsistentRead: aws.Bool(true),
		Key: map[string]dbtypes.AttributeValue{"pk": &dbtypes.AttributeValueMemberS{Value: rec.Key},
			"sk": &dbtypes.AttributeValueMemberS{Value: rec.PayloadRef}}})
	if err != nil {
		t.Fatal(err)
	}
	n, ok := out.Item["expiresAt"].(*dbtypes.AttributeValueMemberN)
	if !ok {
		return 0
	}
	v, _ := strconv.ParseInt(n.Value, 10, 64)
	return v
}

// A record held for weeks keeps its payload: each hold and each recheck
// that pushes the record's expiry out pushes its payload item's too, so the
// payload never expires before the record (issue 29, item 7).
func TestHeldRecordNeverOutlivesItsPayload(t *testing.T) {
	w := newPayloadWorld(t)
	claimed := w.hold(t, "line#t1#held-long")
	for day := 1; day <= 40; day += 3 {
		w.clock.Advance(3 * 24 * time.Hour)
		if _, err := w.sw.Run(w.ctx); err != nil {
			t.Fatalf("day %d: sweep: %v", day, err)
		}
		rec, err := w.table.Get(w.ctx, claimed.Key)
		if err != nil || rec == nil || rec.Status != webhook.StatusHeld {
			t.Fatalf("day %d: %+v %v; want still HELD, payload readable", day, rec, err)
		}
		if exp := w.payloadExpiry(t, rec); exp < rec.ExpiresAt {
			t.Fatalf("day %d: the payload item expires at %s, before its record (%s)", day,
				time.Unix(exp, 0).UTC(), time.Unix(rec.ExpiresAt, 0).UTC())
		}
	}
}

// A due record whose payload item is gone (deleted by hand, or expired by
// an older version) can never be processed: the sweeper dead-letters it
// (DEAD, with the reason), without an error, and its cursor moves past it;
// the record stays readable.
func TestRecordWithoutItsPayloadIsDeadLettered(t *testing.T) {
	w := newPayloadWorld(t)
	rec := w.hold(t, "line#t1#lost-payload")
	if _, err := w.db.DeleteItem(w.ctx, &dynamodb.DeleteItemInput{TableName: &w.name,
		Key: map[string]dbtypes.AttributeValue{"pk": &dbtypes.AttributeValueMemberS{Value: rec.Key},
			"sk": &dbtypes.AttributeValueMemberS{Value: rec.PayloadRef}}}); err != nil {
		t.Fatal(err)
	}
	w.clock.Advance(2 * time.Minute)
	rep, err := w.sw.Run(w.ctx)
	if err != nil || rep.Errors != 0 || rep.PayloadMissing != 1 {
		t.Fatalf("sweep: %+v %v; want the record dead-lettered, no error", rep, err)
	}
	got, err := w.table.Get(w.ctx, rec.Key)
	if got == nil || got.Status != webhook.StatusDead || !strings.Contains(got.LastError, "payload") || got.HeldOn != "" {
		t.Fatalf("after the sweep: %+v %v; want DEAD, its last error naming the missing payload", got, err)
	}
	// The cursor moved past it: the next run finds nothing to do.
	w.clock.Advance(time.Minute)
	if rep, err := w.sw.Run(w.ctx); err != nil || rep.Scanned != 0 || rep.Errors != 0 || rep.Passed != 0 {
		t.Fatalf("next sweep: %+v %v; want nothing due", rep, err)
	}
	cur, err := w.table.SweepCursor(w.ctx, store.ShardOf(rec.Key))
	if err != nil || cur.UnixMilli() < got.SweepAt {
		t.Errorf("cursor of its shard %s (%v), want past its entry at %s", cur, err, time.UnixMilli(got.SweepAt))
	}
}

//go:build integration

package sweep_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	dbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/hookwall/hookwall/shared/aws/awstest"
	"github.com/hookwall/hookwall/shared/aws/queue"
	"github.com/hookwall/hookwall/shared/aws/sqsbatch"
	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/base/webhook/webhooktest"
	"github.com/hookwall/hookwall/shared/engine/dispatch"
	"github.com/hookwall/hookwall/shared/engine/process"
	"github.com/hookwall/hookwall/shared/engine/sweep"
	"github.com/hookwall/hookwall/shared/state/store"
)

type follow struct {
	UserID string `json:"userId"`
	Note   string `json:"note,omitempty"`
}

var (
	followType = webhook.NewType[follow]("line", "follow")
	permType   = webhook.NewType[follow]("line", "permanent")
)

// calls counts handler runs per event key, and keeps the payload each saw.
type calls struct {
	mu   sync.Mutex
	n    map[string]int
	data map[string]follow
}

func (c *calls) add(key string, data follow) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n[key]++
	c.data[key] = data
}

func (c *calls) seen(key string) follow {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.data[key]
}

func (c *calls) get(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[key]
}

// localStack is a sweep test's table (written as the processor) and queues
// on the local stack.
type localStack struct {
	db        *dynamodb.Client
	name      string
	table     *store.Table
	sqs       *sqs.Client
	queues    awstest.Queues
	main, dlq *queue.Queue
}

// newLocalStack creates the table and the queues (their redrive after
// maxReceive receives), deleted when the test ends.
func newLocalStack(t *testing.T, clock *webhooktest.Clock, maxReceive int) *localStack {
	t.Helper()
	st := &localStack{db: awstest.DynamoDB(t), sqs: awstest.SQS(t)}
	st.name = awstest.NewTable(t, st.db)
	table, err := store.New(store.Config{Client: st.db, TableName: st.name, Now: clock.Now, Function: "processor"})
	if err != nil {
		t.Fatal(err)
	}
	st.table = table
	st.queues = awstest.NewQueues(t, st.sqs, maxReceive, 30*time.Second)
	st.main, _ = queue.New(queue.Config{Client: st.sqs, URL: st.queues.URL})
	st.dlq, _ = queue.New(queue.Config{Client: st.sqs, URL: st.queues.DLQURL})
	return st
}

func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// counts is what the table and the sweep index hold: the figures of must-show 3.
type counts struct {
	table, index int            // Select COUNT of a Scan (records only) and of a Query per shard
	byStatus     map[string]int // the records' statuses (a Scan)
	indexKeys    []string       // the keys the index lists (a Query per shard)
}

func (c counts) String() string {
	return fmt.Sprintf("table %d records %v, sweep index %d items", c.table, c.byStatus, c.index)
}

// count counts the records with a Scan and the sweep index with one Query
// per shard, both Select COUNT (DescribeTable's ItemCount is refreshed only
// every few hours on AWS, and lazily by DynamoDB Local); then lists both to
// compare their keys.
func count(t *testing.T, db *dynamodb.Client, table string) counts {
	t.Helper()
	ctx := context.Background()
	c := counts{byStatus: map[string]int{}}
	recordsOnly := map[string]dbtypes.AttributeValue{":event": &dbtypes.AttributeValueMemberS{Value: store.SKEvent}}
	scan := dynamodb.NewScanPaginator(db, &dynamodb.ScanInput{TableName: &table, Select: dbtypes.SelectCount,
		FilterExpression: aws.String("sk = :event"), ExpressionAttributeValues: recordsOnly})
	for scan.HasMorePages() {
		out, err := scan.NextPage(ctx)
		if err != nil {
			t.Fatalf("scan count: %v", err)
		}
		c.table += int(out.Count)
	}
	items := dynamodb.NewScanPaginator(db, &dynamodb.ScanInput{TableName: &table, FilterExpression: aws.String("sk = :event"),
		ExpressionAttributeValues: recordsOnly, ProjectionExpression: aws.String("#s"),
		ExpressionAttributeNames: map[string]string{"#s": store.AttrStatus}})
	for items.HasMorePages() {
		out, err := items.NextPage(ctx)
		if err != nil {
			t.Fatalf("scan: %v", err)
		}
		for _, it := range out.Items {
			c.byStatus[it[store.AttrStatus].(*dbtypes.AttributeValueMemberS).Value]++
		}
	}
	for shard := range store.SweepShards {
		in := &dynamodb.QueryInput{TableName: &table, IndexName: aws.String(store.SweepIndex),
			KeyConditionExpression:    aws.String("#shard = :shard"),
			ExpressionAttributeNames:  map[string]string{"#shard": store.AttrSweepShard},
			ExpressionAttributeValues: map[string]dbtypes.AttributeValue{":shard": &dbtypes.AttributeValueMemberS{Value: store.ShardName(shard)}}}
		counted := *in
		counted.Select = dbtypes.SelectCount
		for p := dynamodb.NewQueryPaginator(db, &counted); p.HasMorePages(); {
			out, err := p.NextPage(ctx)
			if err != nil {
				t.Fatalf("query count shard %d: %v", shard, err)
			}
			c.index += int(out.Count)
		}
		for p := dynamodb.NewQueryPaginator(db, in); p.HasMorePages(); {
			out, err := p.NextPage(ctx)
			if err != nil {
				t.Fatalf("query shard %d: %v", shard, err)
			}
			for _, it := range out.Items {
				c.indexKeys = append(c.indexKeys, it[store.AttrPK].(*dbtypes.AttributeValueMemberS).Value)
			}
		}
	}
	slices.Sort(c.indexKeys)
	return c
}

// Must show 3: a claim left in RECEIVED with no message (the receiver
// crashed between claim and send) is found by the sweeper through the sweep
// index and processed once by the real processor; the index holds only the
// records that are not terminal, so that is all the sweeper's queries touch.
func TestSweeperRecoversAClaimLeftWithoutAMessage(t *testing.T) {
	const done = 100
	ctx := context.Background()
	clock := webhooktest.NewClock(time.Now())

	// The processor's side: its table, the queues and the engine.
	st := newLocalStack(t, clock, 5)
	db, name, procTable, sc, qs, mainQ, dlq := st.db, st.name, st.table, st.sqs, st.queues, st.main, st.dlq
	ran := &calls{n: map[string]int{}, data: map[string]follow{}}
	reg := process.NewRegistry()
	process.Handle(reg, "crm.lead", followType, func(_ context.Context, ev *process.Event[follow]) error {
		ran.add(ev.Key, ev.Data)
		return nil
	})
	process.Handle(reg, "crm.reject", permType, func(_ context.Context, ev *process.Event[follow]) error {
		ran.add(ev.Key, ev.Data)
		return process.Permanent(errors.New("blocked user"))
	})
	d, err := dispatch.New(dispatch.Config{Registry: reg, Store: procTable, DLQ: dlq,
		Kernel: dispatch.Kernel{Queue: mainQ, Now: clock.Now}})
	if err != nil {
		t.Fatal(err)
	}
	pctx, stop := context.WithCancel(ctx)
	wg := awstest.Pump(pctx, t, sc, qs.URL, sqsbatch.New(d, 10).Handle, 1, nil)
	defer func() { stop(); wg.Wait() }()

	// The receiver's side: claims, and the sends of all but the crashed one.
	claim := func(key string, typ string, note string) *store.Record {
		payload, _ := json.Marshal(follow{UserID: "U-" + key, Note: note})
		res, err := procTable.Claim(ctx, store.NewEvent{Key: key, Provider: "line", Tenant: "t1", EventType: typ,
			PayloadHash: "h", Payload: payload}, 7*24*time.Hour)
		if err != nil || res.Outcome != store.Claimed {
			t.Fatalf("claim %s: %v %v", key, res.Outcome, err)
		}
		return res.Record
	}
	var sent []webhook.Envelope
	for i := range done {
		sent = append(sent, claim(fmt.Sprintf("line#t1#done-%02d", i), followType.Name, "").Envelope())
	}
	const failed, crashed, crashedBig, busy = "line#t1#failed", "line#t1#crashed", "line#t1#crashed-big", "line#t1#busy"
	sent = append(sent, claim(failed, permType.Name, "").Envelope())
	claim(crashed, followType.Name, "") // the receiver dies here: no message
	// The same with a payload too large for a message: the sweeper's message
	// carries the key alone, and the processor reads the payload from the record.
	bigNote := strings.Repeat("x", queue.InlinePayloadBytes)
	claim(crashedBig, followType.Name, bigNote)
	claim(busy, followType.Name, "") // a worker holds it for an hour (its message is in flight)
	if acq, err := procTable.Acquire(ctx, busy, "worker-busy", clock.Now().Add(time.Hour)); err != nil || acq.Outcome != webhook.Acquired {
		t.Fatalf("acquire %s: %v %v", busy, acq.Outcome, err)
	}
	if err := mainQ.Send(ctx, sent); err != nil {
		t.Fatal(err)
	}
	status := func(key string) webhook.Status {
		rec, err := procTable.Get(ctx, key)
		if err != nil || rec == nil {
			t.Fatalf("get %s: %v %v", key, rec, err)
		}
		return rec.Status
	}
	waitFor(t, time.Minute, "the sent events to be processed", func() bool {
		for _, env := range sent {
			if st := status(env.Key); st != webhook.StatusSucceeded && st != webhook.StatusFailed {
				return false
			}
		}
		return true
	})
	// The processor's own dead letter for the failed event: taken away, so
	// that the sweeper's is the only one left.
	drainDLQ(t, sc, qs.DLQURL, failed)

	before := count(t, db, name)
	t.Logf("before the sweep: %s", before)
	// The completions left their entries: the index holds every record.
	if before.table != done+4 || before.index != done+4 {
		t.Errorf("before the sweep: %s, keys %v; want %d records, each in the index", before, before.indexKeys, done+4)
	}

	// The sweeper, on its own client so its calls can be counted.
	ops := &awstest.OpCounter{}
	sweepDB := awstest.DynamoDB(t, ops.DynamoDBOption)
	sweepTable, err := store.New(store.Config{Client: sweepDB, TableName: name, Now: clock.Now, Function: "sweeper"})
	if err != nil {
		t.Fatal(err)
	}
	ops.Take()
	sw, err := sweep.New(sweep.Config{Store: sweepTable, Queue: mainQ, DLQ: dlq, Now: clock.Now,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	run := func() sweep.Report {
		t.Helper()
		rep, err := sw.Run(ctx)
		if err != nil {
			t.Fatalf("sweep: %v", err)
		}
		rep.Elapsed, rep.CursorLag = 0, 0
		return rep
	}

	// Nothing is due before SweepAfter: the claim may still be on its way.
	if rep := run(); rep != (sweep.Report{}) {
		t.Errorf("sweep at claim time: %+v, want nothing due", rep)
	}
	ops.Take()
	clock.Advance(store.DefaultSweepAfter + time.Second)
	rep := run()
	calls := ops.Take()
	if w := (sweep.Report{Scanned: 4, Passed: done, Requeued: 2, DeadLettered: 1, Resweeped: 1}); rep != w {
		t.Errorf("sweep: %+v, want %+v", rep, w)
	}
	t.Logf("sweep over %d records (%d in the index): %+v; DynamoDB calls %v", before.table, before.index, rep, calls)
	// Per shard: the cursor's GetItem, one Query, a BatchGetItem of a
	// non-empty page and the cursor's PutItem when it moved; per record
	// not terminal, a GetItem and its UpdateItem.
	if calls["Scan"] != 0 || calls["Query"] != store.SweepShards || calls["GetItem"] != store.SweepShards+4 || calls["UpdateItem"] != 4 ||
		calls["BatchGetItem"] > store.SweepShards || calls["PutItem"] > store.SweepShards {
		t.Errorf("sweep calls %v, want %d Query (one per shard), %d GetItem, 4 UpdateItem, at most one BatchGetItem and one PutItem per shard, and no Scan",
			calls, store.SweepShards, store.SweepShards+4)
	}

	// The crashed claims are processed, once, with their stored payloads.
	waitFor(t, time.Minute, "the crashed claims to be processed", func() bool {
		return status(crashed) == webhook.StatusSucceeded && status(crashedBig) == webhook.StatusSucceeded
	})
	for key, note := range map[string]string{crashed: "", crashedBig: bigNote} {
		rec, err := procTable.Get(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if n := ran.get(key); n != 1 || rec.Attempts != 1 {
			t.Errorf("%s: handler ran %d times in %d attempts, want once", key, n, rec.Attempts)
		}
		if got := ran.seen(key); got.UserID != "U-"+key || got.Note != note {
			t.Errorf("%s: handler saw user %q and a %d-byte note, want the stored payload", key, got.UserID, len(got.Note))
		}
	}
	for i := range done {
		if k := fmt.Sprintf("line#t1#done-%02d", i); ran.get(k) != 1 {
			t.Errorf("%s: handler ran %d times, want once", k, ran.get(k))
		}
	}
	// The failed event is back on the dead-letter queue, for the compensator.
	if got, reason := drainDLQ(t, sc, qs.DLQURL, failed); got.Key != failed || !strings.HasPrefix(reason, "sweeper: FAILED since ") {
		t.Errorf("dead letter %+v (reason %q), want the envelope of %s from the sweeper", got, reason, failed)
	}
	if st := status(busy); st != webhook.StatusProcessing {
		t.Errorf("%s: %s, want PROCESSING (its lease is live: left alone)", busy, st)
	}

	after := count(t, db, name)
	t.Logf("after the sweep: %s", after)
	// The index still holds every record: terminal ones until TTL.
	if after.table != done+4 || after.index != done+4 {
		t.Errorf("after the sweep: %s; want every record in the index", after)
	}

	// A second run at once finds nothing to do: the re-sent records wait a
	// SweepAfter, the busy one its lease. The terminal entries within
	// SweepLag of now are below no cursor yet: passed again.
	if rep := run(); rep != (sweep.Report{Passed: done}) {
		t.Errorf("second sweep: %+v, want nothing due, the %d terminal entries passed again", rep, done)
	}
	// SweepLag later a run passes them once more and its cursors go past
	// them: the next run reads nothing.
	clock.Advance(sweep.DefaultSweepLag)
	if rep := run(); rep != (sweep.Report{Passed: done}) {
		t.Errorf("third sweep: %+v, want the %d terminal entries passed, the cursors past them", rep, done)
	}
	if rep := run(); rep != (sweep.Report{}) {
		t.Errorf("fourth sweep: %+v, want nothing read", rep)
	}
	if n := ran.get(crashed); n != 1 {
		t.Errorf("%s: handler ran %d times after the second sweep", crashed, n)
	}
}

// drainDLQ receives the dead-letter queue's one message, for key, deletes it
// and returns its envelope and reason.
func drainDLQ(t *testing.T, c *sqs.Client, url, key string) (webhook.Envelope, string) {
	t.Helper()
	ctx := context.Background()
	var msgs []sqstypes.Message
	waitFor(t, 30*time.Second, "a dead letter for "+key, func() bool {
		m, err := awstest.Receive(ctx, c, url, 10, time.Second)
		if err != nil {
			t.Fatalf("receive dead letters: %v", err)
		}
		msgs = append(msgs, m...)
		return len(msgs) > 0
	})
	if len(msgs) != 1 {
		t.Fatalf("got %d dead letters, want 1", len(msgs))
	}
	m := msgs[0]
	if got := aws.ToString(m.MessageAttributes[queue.AttrEventKey].StringValue); got != key {
		t.Errorf("dead letter key attribute %q, want %q", got, key)
	}
	var env webhook.Envelope
	if err := json.Unmarshal([]byte(aws.ToString(m.Body)), &env); err != nil {
		t.Fatalf("dead letter body: %v", err)
	}
	if _, err := c.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: &url, ReceiptHandle: m.ReceiptHandle}); err != nil {
		t.Fatal(err)
	}
	return env, aws.ToString(m.MessageAttributes[queue.AttrReason].StringValue)
}

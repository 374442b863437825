//go:build integration

package store_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	mathrand "math/rand/v2"
	"os"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"

	"github.com/hookwall/hookwall/shared/aws/awstest"
	"github.com/hookwall/hookwall/shared/aws/queue"
	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/engine/dispatch"
	"github.com/hookwall/hookwall/shared/engine/process"
	"github.com/hookwall/hookwall/shared/state/store"
)

// capacity asks DynamoDB for the capacity every write consumes
// (ReturnConsumedCapacity INDEXES) and adds it up, for the table and for
// its indexes. DynamoDB Local reports it as DynamoDB does.
type capacity struct {
	mu    sync.Mutex
	table float64 // write units
	reads float64 // read units
	index map[string]float64
	calls []call
}

func (c *capacity) option(o *dynamodb.Options) {
	o.APIOptions = append(o.APIOptions, func(stack *middleware.Stack) error {
		return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("test-capacity",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				op := ""
				switch p := in.Parameters.(type) {
				case *dynamodb.PutItemInput:
					op, p.ReturnConsumedCapacity = "PutItem", types.ReturnConsumedCapacityIndexes
				case *dynamodb.UpdateItemInput:
					op, p.ReturnConsumedCapacity = "UpdateItem", types.ReturnConsumedCapacityIndexes
				case *dynamodb.DeleteItemInput:
					op, p.ReturnConsumedCapacity = "DeleteItem", types.ReturnConsumedCapacityIndexes
				case *dynamodb.TransactWriteItemsInput:
					op, p.ReturnConsumedCapacity = "TransactWriteItems", types.ReturnConsumedCapacityIndexes
				case *dynamodb.GetItemInput:
					op, p.ReturnConsumedCapacity = "GetItem", types.ReturnConsumedCapacityIndexes
				case *dynamodb.QueryInput:
					op, p.ReturnConsumedCapacity = "Query", types.ReturnConsumedCapacityIndexes
				case *dynamodb.BatchGetItemInput:
					op, p.ReturnConsumedCapacity = "BatchGetItem", types.ReturnConsumedCapacityIndexes
				}
				out, md, err := next.HandleInitialize(ctx, in)
				var ccs []types.ConsumedCapacity
				switch r := out.Result.(type) {
				case *dynamodb.PutItemOutput:
					if r.ConsumedCapacity != nil {
						ccs = append(ccs, *r.ConsumedCapacity)
					}
				case *dynamodb.UpdateItemOutput:
					if r.ConsumedCapacity != nil {
						ccs = append(ccs, *r.ConsumedCapacity)
					}
				case *dynamodb.DeleteItemOutput:
					if r.ConsumedCapacity != nil {
						ccs = append(ccs, *r.ConsumedCapacity)
					}
				case *dynamodb.TransactWriteItemsOutput:
					ccs = r.ConsumedCapacity
				case *dynamodb.GetItemOutput:
					if r.ConsumedCapacity != nil {
						ccs = append(ccs, *r.ConsumedCapacity)
					}
				case *dynamodb.QueryOutput:
					if r.ConsumedCapacity != nil {
						ccs = append(ccs, *r.ConsumedCapacity)
					}
				case *dynamodb.BatchGetItemOutput:
					ccs = r.ConsumedCapacity
				}
				if err != nil {
					// A failed conditional write is charged too; DynamoDB
					// does not say how much in the error: count the
					// minimum, one unit.
					ccs = append(ccs, types.ConsumedCapacity{CapacityUnits: aws.Float64(1)})
				}
				c.add(op, ccs)
				return out, md, err
			}), middleware.After)
	})
}

// call is one DynamoDB call as the meter saw it: its operation and the
// capacity it consumed on the table (read or write units by operation)
// and on the indexes.
type call struct {
	op    string
	table float64
	index map[string]float64
}

// read reports whether the call consumed read units.
func (c call) read() bool {
	return c.op == "GetItem" || c.op == "Query" || c.op == "BatchGetItem"
}

func (c *capacity) add(op string, ccs []types.ConsumedCapacity) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.index == nil {
		c.index = map[string]float64{}
	}
	cl := call{op: op, index: map[string]float64{}}
	for _, cc := range ccs {
		if cc.Table != nil {
			cl.table += aws.ToFloat64(cc.Table.CapacityUnits)
		} else {
			cl.table += aws.ToFloat64(cc.CapacityUnits)
		}
		for name, ic := range cc.GlobalSecondaryIndexes {
			cl.index[name] += aws.ToFloat64(ic.CapacityUnits)
		}
	}
	c.calls = append(c.calls, cl)
	if cl.read() {
		c.reads += cl.table
		return
	}
	c.table += cl.table
	for name, u := range cl.index {
		c.index[name] += u
	}
}

// takeCalls returns the calls made since the last take or takeCalls.
func (c *capacity) takeCalls() []call {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.calls
	c.calls, c.table, c.reads, c.index = nil, 0, 0, map[string]float64{}
	return out
}

// take returns the capacity consumed since the last take, table and indexes.
func (c *capacity) take() (float64, map[string]float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, i := c.table, c.index
	c.table, c.reads, c.index, c.calls = 0, 0, map[string]float64{}, nil
	if i == nil {
		i = map[string]float64{}
	}
	return t, i
}

// pipeline is one table on DynamoDB Local, seen through an op counter and a
// capacity meter, and the processor's dispatcher on it.
type pipeline struct {
	db    *dynamodb.Client
	table *store.Table
	ops   *awstest.OpCounter
	cap   *capacity
	d     *dispatch.Dispatcher
	fail  atomic.Bool // the handler's second step fails while set
}

type order struct {
	ID   string `json:"id"`
	Note string `json:"note"`
}

var orderType = webhook.NewType[order]("line", "order")

func newPipeline(t *testing.T, cfg store.Config) *pipeline {
	t.Helper()
	p := &pipeline{ops: &awstest.OpCounter{}, cap: &capacity{}}
	db := awstest.DynamoDB(t, p.ops.DynamoDBOption, p.cap.option)
	cfg.Client, cfg.TableName, p.db = db, awstest.NewTable(t, db), db
	var err error
	if p.table, err = store.New(cfg); err != nil {
		t.Fatal(err)
	}
	reg := process.NewRegistry()
	process.Handle(reg, "shop.order", orderType, func(ctx context.Context, ev *process.Event[order]) error {
		if err := ev.Step(ctx, "reserve", func(context.Context, string) error { return nil }); err != nil {
			return err
		}
		return ev.Step(ctx, "charge", func(context.Context, string) error {
			if p.fail.Load() {
				return errors.New("payment service down")
			}
			return nil
		})
	})
	if p.d, err = dispatch.New(dispatch.Config{Registry: reg, Store: p.table, DLQ: nopQueue{},
		Kernel: dispatch.Kernel{Queue: nopQueue{}}}); err != nil {
		t.Fatal(err)
	}
	p.ops.Take()
	p.cap.take()
	return p
}

type nopQueue struct{}

func (nopQueue) ChangeVisibility(context.Context, string, time.Duration) error { return nil }
func (nopQueue) SendDeadLetter(context.Context, string, []byte, string) error  { return nil }

// usage is what one step of an event cost: calls by operation, and write
// capacity on the table and on the sweep index.
type usage struct {
	ops   map[string]int
	table float64
	index float64
}

func (p *pipeline) take() usage {
	tbl, idx := p.cap.take()
	return usage{ops: p.ops.Take(), table: tbl, index: idx["sweep"]}
}

// claim claims an event as the receiver does and returns its envelope.
func (p *pipeline) claim(t *testing.T, key string, payload []byte) (webhook.Envelope, usage) {
	t.Helper()
	res, err := p.table.Claim(context.Background(), store.NewEvent{Key: key, Provider: "line", Tenant: "t1",
		EventType: orderType.Name, PayloadHash: "h", Payload: payload}, time.Hour)
	if err != nil || res.Outcome != store.Claimed {
		t.Fatalf("claim %s: %v, %v", key, res.Outcome, err)
	}
	return res.Record.Envelope(), p.take()
}

// process runs one delivery of env through the dispatcher.
func (p *pipeline) process(t *testing.T, env webhook.Envelope, want dispatch.Verdict) usage {
	t.Helper()
	b, err := json.Marshal(env)
	if err != nil {
		t.Fatal(err)
	}
	if r := p.d.Handle(context.Background(), dispatch.Message{MessageID: env.Key, ReceiptHandle: "rh", Body: b}); r.Verdict != want {
		t.Fatalf("%s: got verdict %v (%v), want %v", env.Key, r.Verdict, r.Err, want)
	}
	return p.take()
}

func payloadOf(n int) []byte {
	b, _ := json.Marshal(order{ID: "o-1", Note: strings.Repeat("x", max(n-22, 0))})
	return b
}

// TestCallsAndCapacityPerEvent measures, for a small and a 2 KB payload,
// the DynamoDB calls and the write capacity of an event's claim, its
// processing with two journaled steps, and a retried event's two attempts,
// and checks the calls: one UpdateItem for the claim; one UpdateItem to
// acquire, one per step but the last, whose entry the completing
// UpdateItem carries (the step journal in the record, store/journal.go);
// a retry's journal read is a GetItem of the record and a Query of the
// journal items.
func TestCallsAndCapacityPerEvent(t *testing.T) {
	p := newPipeline(t, store.Config{Function: "processor"})
	for _, size := range []int{200, 2048} {
		env, claim := p.claim(t, fmt.Sprintf("line#t1#ok-%d", size), payloadOf(size))
		happy := p.process(t, env, dispatch.Succeeded)
		env2, claim2 := p.claim(t, fmt.Sprintf("line#t1#retry-%d", size), payloadOf(size))
		p.fail.Store(true)
		first := p.process(t, env2, dispatch.Retried)
		p.fail.Store(false)
		second := p.process(t, env2, dispatch.Succeeded)
		for _, c := range []struct {
			name string
			got  usage
			want map[string]int
		}{
			{"claim", claim, map[string]int{"PutItem": 1}},
			{"processing, two steps", happy, map[string]int{"UpdateItem": 3}},
			{"claim of the retried event", claim2, map[string]int{"PutItem": 1}},
			{"attempt 1: step one done, step two fails", first, map[string]int{"UpdateItem": 3}},
			{"attempt 2: journal read, step two run", second, map[string]int{"UpdateItem": 2, "GetItem": 1, "Query": 1}},
		} {
			t.Logf("payload %d B, %s: calls %v, write capacity: table %.1f, sweep index %.1f", size, c.name, c.got.ops, c.got.table, c.got.index)
			if !reflect.DeepEqual(c.got.ops, c.want) {
				t.Errorf("payload %d B, %s: got calls %v, want %v", size, c.name, c.got.ops, c.want)
			}
		}
		t.Logf("payload %d B, happy path total: table %.1f WCU, sweep index %.1f WCU", size, claim.table+happy.table, claim.index+happy.index)
		if idx := claim.index + happy.index + claim2.index + first.index + second.index; idx != 2 {
			t.Errorf("payload %d B: %.1f WCU on the sweep index for two events, want 2 (each claim's put; nothing after)", size, idx)
		}
		out, err := p.db.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(p.table.Name()),
			Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: env2.Key}, "sk": &types.AttributeValueMemberS{Value: store.SKEvent}}})
		if err != nil {
			t.Fatal(err)
		}
		item := out.Item
		p.take() // the read above is the test's, not the event's
		t.Logf("payload %d B, the retried event's item: %d bytes, of which history (%d entries) %d bytes",
			size, store.ItemSize(item), historyEntries(item), store.ItemSize(map[string]types.AttributeValue{"": item["history"]}))
	}
}

func historyEntries(item map[string]types.AttributeValue) int {
	if m, ok := item["history"].(*types.AttributeValueMemberM); ok {
		return len(m.Value)
	}
	return 0
}

// eventCost is what one unique event costs through receiver and processor
// (claim, acquire, one journaled step, complete): write units per phase on
// the table, write units on the sweep index, read units, and the receiver's
// calls; and what a duplicate delivery costs (its claim, and CountDelivery
// when the claim could not count it).
type eventCost struct {
	claim, acquire, step, complete float64 // table write units
	gsi                            float64 // sweep index write units, all phases
	rcu                            float64 // read units, all phases (the claim's read of a large payload's record included)
	claimCalls                     int     // DynamoDB calls of the first delivery's claim
	dupWCU                         float64 // write units of a duplicate delivery (claim, and count when apart)
	dupRCU                         float64 // read units of a duplicate delivery (a large payload's claim reads the record)
	dupCalls                       int     // DynamoDB calls of a duplicate delivery
	dupCounted                     bool    // the duplicate's claim counted it (no CountDelivery)
	recordBytes                    int     // the record's size once SUCCEEDED
	heartbeat                      float64 // table write units of one heartbeat (not in the total)
}

func (c eventCost) total() float64 { return c.claim + c.acquire + c.step + c.complete }

// capacitySizes are the payload sizes of the capacity table.
var capacitySizes = []int{512, 4 << 10, 64 << 10}

// capacityBefore is the table measured on the design that stored every
// payload in the event record (inline up to 4 KiB, gzip above), the
// before of issue 11, by this test on DynamoDB Local.
var capacityBefore = map[int]eventCost{
	512:      {claim: 1, acquire: 1, step: 2, complete: 1, gsi: 2, claimCalls: 1, dupWCU: 1, dupCalls: 1},
	4 << 10:  {claim: 5, acquire: 5, step: 6, complete: 5, gsi: 2, claimCalls: 1, dupWCU: 1, dupCalls: 1},
	64 << 10: {claim: 49, acquire: 49, step: 28, complete: 49, gsi: 2, claimCalls: 1, dupWCU: 1, dupCalls: 1},
}

// capacityBeforeIssue20 is the table measured by this test on DynamoDB
// Local at commit 93643ab, before issue 20: a journaled step was a
// TransactWriteItems (a ConditionCheck of the record's lease and the Put
// of a STEP item) and the completion a write of its own.
var capacityBeforeIssue20 = map[int]eventCost{
	512:      {claim: 1, acquire: 1, step: 2, complete: 1, gsi: 2, claimCalls: 1, dupWCU: 1, dupCalls: 1, recordBytes: 969, heartbeat: 1},
	4 << 10:  {claim: 5, acquire: 1, step: 2, complete: 1, gsi: 2, claimCalls: 2, dupWCU: 2, dupCalls: 2, recordBytes: 501, heartbeat: 1},
	64 << 10: {claim: 50, acquire: 1, step: 2, complete: 1, gsi: 2, rcu: 13, claimCalls: 2, dupWCU: 2, dupCalls: 2, recordBytes: 502, heartbeat: 1},
}

// duplicateShare is the share of deliveries that are duplicates in the
// cost table of docs/PERFORMANCE.md (40%: 2/3 of a duplicate per unique
// event), every duplicate priced as reaching DynamoDB.
const duplicateShare = 0.4

// wruPerUnique is the write units one unique event costs with its
// duplicates: table and index writes, and 2/3 of a duplicate's claim.
func (c eventCost) wruPerUnique() float64 {
	return c.total() + c.gsi + c.dupWCU*duplicateShare/(1-duplicateShare)
}

// textPayload returns a JSON payload of n bytes whose text compresses about
// as well as a chat event's (base64 of random bytes: gzip keeps ~3/4).
func textPayload(n int) []byte {
	r := mathrand.New(mathrand.NewPCG(uint64(n), 11))
	raw := make([]byte, n)
	for i := range raw {
		raw[i] = byte(r.Uint32())
	}
	text := base64.StdEncoding.EncodeToString(raw)
	b, _ := json.Marshal(order{ID: "o-1", Note: text[:max(n-22, 0)]})
	return b
}

// measureEvent runs one unique event of payload through the receiver's claim
// and the processor (one step), then a duplicate delivery as the receiver
// makes it (the claim, and CountDelivery when the claim did not count it),
// and returns its cost.
func measureEvent(t *testing.T, p *pipeline, key string, payload []byte) eventCost {
	t.Helper()
	var c eventCost
	ev := store.NewEvent{Key: key, Provider: "line", Tenant: "t1", EventType: orderType.Name, PayloadHash: "h", Payload: payload}
	p.ops.Take()
	p.cap.takeCalls()
	res, err := p.table.Claim(context.Background(), ev, time.Hour)
	if err != nil || res.Outcome != store.Claimed {
		t.Fatalf("claim %s: %v, %v", key, res.Outcome, err)
	}
	for _, cl := range p.cap.takeCalls() {
		if cl.read() { // a large payload's claim reads the record first
			c.rcu += cl.table
		} else {
			c.claim += cl.table
		}
		c.gsi += cl.index["sweep"]
		c.claimCalls++
	}
	env := res.Record.Envelope()
	body, err := queue.EncodeMessage(&env)
	if err != nil {
		t.Fatal(err)
	}
	if r := p.d.Handle(context.Background(), dispatch.Message{MessageID: key, ReceiptHandle: "rh", Body: body}); r.Verdict != dispatch.Succeeded {
		t.Fatalf("%s: got verdict %v (%v)", key, r.Verdict, r.Err)
	}
	// The first UpdateItem acquires, the last completes; writes between
	// them journal steps (UpdateItem of the record, or TransactWriteItems
	// of a journal item).
	calls := p.cap.takeCalls()
	last := -1
	for i, cl := range calls {
		if cl.op == "UpdateItem" {
			last = i
		}
	}
	updates := 0
	for i, cl := range calls {
		c.gsi += cl.index["sweep"]
		switch {
		case cl.read():
			c.rcu += cl.table
		case cl.op == "UpdateItem" && updates == 0:
			c.acquire += cl.table
			updates++
		case cl.op == "UpdateItem" && i == last:
			c.complete += cl.table
		case cl.op == "UpdateItem" || cl.op == "TransactWriteItems":
			c.step += cl.table
		default:
			t.Errorf("%s: unexpected call %s while processing", key, cl.op)
		}
	}
	out, err := p.db.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(p.table.Name()),
		Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: key}, "sk": &types.AttributeValueMemberS{Value: store.SKEvent}}})
	if err != nil {
		t.Fatal(err)
	}
	c.recordBytes = store.ItemSize(out.Item)
	p.cap.takeCalls() // the read above is the test's, not the event's
	res, err = p.table.Claim(context.Background(), ev, time.Hour)
	if err != nil || res.Outcome != store.Duplicate {
		t.Fatalf("claim %s again: %v, %v", key, res.Outcome, err)
	}
	if got := res.Record.Envelope(); !bytes.Equal(got.Payload, payload) && !got.PayloadInRecord {
		t.Errorf("%s: a duplicate's record has payload %d bytes, want %d (or a reference)", key, len(got.Payload), len(payload))
	}
	if c.dupCounted = res.Counted; !res.Counted {
		if ok, err := p.table.CountDelivery(context.Background(), res.Record); !ok || err != nil {
			t.Fatalf("count delivery %s: %v, %v", key, ok, err)
		}
	}
	for _, cl := range p.cap.takeCalls() {
		if cl.read() {
			c.dupRCU += cl.table
		} else {
			c.dupWCU += cl.table
		}
		c.dupCalls++
	}
	// A heartbeat, on another event of the same payload.
	hb := ev
	hb.Key += "-hb"
	if res, err := p.table.Claim(context.Background(), hb, time.Hour); err != nil || res.Outcome != store.Claimed {
		t.Fatalf("claim %s: %v, %v", hb.Key, res.Outcome, err)
	}
	l := p.lease(t, hb.Key)
	p.cap.takeCalls()
	if ok, err := p.table.Heartbeat(context.Background(), l, time.Now().Add(2*time.Minute)); !ok || err != nil {
		t.Fatalf("heartbeat %s: %v, %v", hb.Key, ok, err)
	}
	for _, cl := range p.cap.takeCalls() {
		c.heartbeat += cl.table
	}
	p.ops.Take()
	return c
}

func capacityTable(title string, figures map[int]eventCost) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\n", title)
	b.WriteString("| payload | claim | acquire | step | complete | total table WCU | GSI WCU | RCU | claim calls | duplicate claim WCU (calls) | record bytes when SUCCEEDED | heartbeat WCU |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, size := range capacitySizes {
		c := figures[size]
		rb, hb := "n/m", "n/m"
		if c.recordBytes > 0 {
			rb = strconv.Itoa(c.recordBytes)
		}
		if c.heartbeat > 0 {
			hb = strconv.FormatFloat(c.heartbeat, 'f', 1, 64)
		}
		dup := fmt.Sprintf("%.1f (%d)", c.dupWCU, c.dupCalls)
		if c.dupRCU > 0 {
			dup = fmt.Sprintf("%.1f + %.1f RCU (%d)", c.dupWCU, c.dupRCU, c.dupCalls)
		}
		fmt.Fprintf(&b, "| %s | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %d | %s | %s | %s |\n", sizeName(size),
			c.claim, c.acquire, c.step, c.complete, c.total(), c.gsi, c.rcu, c.claimCalls, dup, rb, hb)
	}
	return b.String()
}

// wruTable compares the write units per unique event, duplicates
// included, before and after issue 20, as docs/PERFORMANCE.md prices them.
func wruTable(after map[int]eventCost) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Write units per unique event (table + sweep index + %.0f%% duplicates reaching DynamoDB)\n\n", duplicateShare*100)
	b.WriteString("| payload | before issue 20: table + index | with duplicates | after: table + index | with duplicates |\n|---|---|---|---|---|\n")
	for _, size := range capacitySizes {
		bf, af := capacityBeforeIssue20[size], after[size]
		fmt.Fprintf(&b, "| %s | %.1f | %.2f | %.1f | %.2f |\n", sizeName(size), bf.total()+bf.gsi, bf.wruPerUnique(), af.total()+af.gsi, af.wruPerUnique())
	}
	return b.String()
}

func sizeName(n int) string {
	if n < 1024 {
		return fmt.Sprintf("%.1f KB", float64(n)/1024)
	}
	return fmt.Sprintf("%d KB", n/1024)
}

// TestCapacityPerUniqueEvent measures, for payloads of 0.5, 4 and 64 KB, the
// capacity units one unique event consumes through the receiver's claim and
// the processor (acquire, one journaled step, complete): write units on the
// table per phase, on the sweep index, and the read units of the
// processor's reads; and prints them next to the figures of the designs
// before issue 11 and before issue 20, with the write units per unique
// event that docs/PERFORMANCE.md prices. It checks issue 20's floor: the
// step costs no write of its own, and a 0.5 KB event at most 5 WCU on the
// table and index, and 1 WCU on the sweep index (the claim's put: the
// completion leaves the entry). With HOOKWALL_CAPACITY_TABLE set it also writes the
// table to that file.
func TestCapacityPerUniqueEvent(t *testing.T) {
	p := newOneStepPipeline(t)
	after := map[int]eventCost{}
	for _, size := range capacitySizes {
		after[size] = measureEvent(t, p, fmt.Sprintf("line#t1#cap-%d", size), textPayload(size))
	}
	for _, size := range capacitySizes {
		c := after[size]
		// Issue 20: the one step's entry rides on the completion, in the record.
		if c.step != 0 {
			t.Errorf("payload %s: the step costs %.1f WCU of its own, want 0 (carried by the completion)", sizeName(size), c.step)
		}
		if size <= 512 && c.total()+c.gsi > 5 {
			t.Errorf("payload %s: %.1f WCU on the table and index, want at most 5", sizeName(size), c.total()+c.gsi)
		}
		// Issue 20's sweep lever: the claim puts the sweep entry, the
		// completion leaves it (the sweeper passes it), so the index is
		// written once per unique event.
		if c.gsi != 1 {
			t.Errorf("payload %s: %.1f WCU on the sweep index, want 1 (the claim's put; the completion leaves the entry)", sizeName(size), c.gsi)
		}
		if c.acquire != 1 || c.complete != 1 || c.heartbeat != 1 {
			t.Errorf("payload %s: acquire %.1f WCU, complete %.1f WCU, heartbeat %.1f WCU; want 1 each",
				sizeName(size), c.acquire, c.complete, c.heartbeat)
		}
		// Issue 33: a duplicate is its claim's failed PutItem and the
		// count (CountDelivery, inside the claim), whatever the record holds.
		if wantDup := 2.0; size <= 512 && (!c.dupCounted || c.dupWCU != wantDup || c.dupCalls != int(wantDup)) {
			t.Errorf("payload %s: a duplicate costs %.1f WCU in %d calls (counted by its claim: %v); want %.0f in %.0f",
				sizeName(size), c.dupWCU, c.dupCalls, c.dupCounted, wantDup, wantDup)
		}
		if size <= 512 && (c.claimCalls != 1 || c.recordBytes > store.InlineRecordBytes) {
			t.Errorf("payload %s: claim in %d calls, record %d bytes when SUCCEEDED; want 1 call, at most %d bytes",
				sizeName(size), c.claimCalls, c.recordBytes, store.InlineRecordBytes)
		}
	}
	out := "Capacity units per unique event: receiver claim, processor acquire + 1 journaled step + complete\n" +
		"(payload: JSON around base64 of random bytes, gzip keeps ~3/4; DynamoDB Local; RCU: strongly consistent reads)\n" +
		"go test -tags integration -count=1 -run TestCapacityPerUniqueEvent -v ./shared/state/store/\n\n" +
		capacityTable("Before issue 11 (payload in the event record)", capacityBefore) + "\n" +
		capacityTable("Before issue 20 (93643ab: payload inline while the record stays within 1 KB, else in its own item; "+
			"the step a transaction)", capacityBeforeIssue20) + "\n" +
		capacityTable("After issue 33 (as after issue 20: the step journal in the record, the last step carried by the completion; the completion keeps the sweep entry; a large payload's duplicate reads the record instead of rewriting the payload item; but the claim a PutItem, a duplicate its failed condition and the count)", after) + "\n" +
		wruTable(after) + "\n" +
		"Duplicate: as the receiver makes it (after issue 33: its claim's failed PutItem, then the count;\n" +
		"issue 20 to 33: one UpdateItem that counted it); before issue 20 the claim alone (no count then).\n" +
		"A failed conditional write is counted as 1 WCU, as DynamoDB Local returns no consumed capacity with\n" +
		"the error; DynamoDB charges it by the size of the item already there (at least 1).\n"
	for _, line := range strings.Split(out, "\n") {
		t.Log(line)
	}
	if path := os.Getenv("HOOKWALL_CAPACITY_TABLE"); path != "" {
		if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// newOneStepPipeline is a pipeline whose handler journals one step.
func newOneStepPipeline(t *testing.T) *pipeline {
	t.Helper()
	p := &pipeline{ops: &awstest.OpCounter{}, cap: &capacity{}}
	db := awstest.DynamoDB(t, p.ops.DynamoDBOption, p.cap.option)
	p.db = db
	var err error
	if p.table, err = store.New(store.Config{Client: db, TableName: awstest.NewTable(t, db), Function: "processor"}); err != nil {
		t.Fatal(err)
	}
	reg := process.NewRegistry()
	process.Handle(reg, "shop.order", orderType, func(ctx context.Context, ev *process.Event[order]) error {
		if ev.Data.ID != "o-1" { // the payload, from the message or, when too large for it, from the table
			return process.Permanent(errors.New("the handler got no payload"))
		}
		return ev.Step(ctx, "reserve", func(context.Context, string) error { return nil })
	})
	if p.d, err = dispatch.New(dispatch.Config{Registry: reg, Store: p.table, DLQ: nopQueue{},
		Kernel: dispatch.Kernel{Queue: nopQueue{}}}); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestPeerEventStaysOneCall claims LINE events like the peer workload's (a
// text message event of 0.3 to 0.5 KB, a 64-hex payload hash, a trace id of
// API Gateway's form) and checks that each claim is one PutItem and that
// the record, through a happy path, stays within one write unit.
func TestPeerEventStaysOneCall(t *testing.T) {
	p := newOneStepPipeline(t)
	for i, text := range []string{"peer-bench", strings.Repeat("こんにちは、", 8), strings.Repeat("hello there ", 14)} {
		id := fmt.Sprintf("01HQXYZABCDEFGHJKMNPQRS%03d", i)
		payload := []byte(fmt.Sprintf(`{"type":"message","message":{"type":"text","id":"468789577898262530","text":%q},`+
			`"webhookEventId":%q,"deliveryContext":{"isRedelivery":false},"timestamp":1700000000000,`+
			`"source":{"type":"user","userId":"U1f31c2a4c885ab0273b18b8b6a799b72"},`+
			`"replyToken":"fe435e8eee6cf9a3513f95ee23341731","mode":"active"}`, text, id))
		key := "line#tenant-01#" + id
		ev := store.NewEvent{Key: key, Provider: "line", Tenant: "tenant-01", EventType: "message", OccurredAt: time.Now(),
			PayloadHash: strings.Repeat("0123456789abcdef", 4), Payload: payload,
			TraceID: "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"}
		p.cap.takeCalls()
		res, err := p.table.Claim(context.Background(), ev, time.Hour)
		if err != nil || res.Outcome != store.Claimed {
			t.Fatalf("claim: %v, %v", res.Outcome, err)
		}
		calls := p.cap.takeCalls()
		l := p.lease(t, key)
		if ok, err := p.table.Complete(context.Background(), l, time.Now().Add(time.Hour)); !ok || err != nil {
			t.Fatalf("complete: %v, %v", ok, err)
		}
		size := p.recordBytes(t, key)
		t.Logf("LINE event of %d B: claim in %d call(s), record %d bytes when SUCCEEDED", len(payload), len(calls), size)
		if len(calls) != 1 || size > store.InlineRecordBytes {
			t.Errorf("LINE event of %d B: claim in %d calls, record %d bytes; want 1 call, at most %d bytes",
				len(payload), len(calls), size, store.InlineRecordBytes)
		}
	}
}

func (p *pipeline) lease(t *testing.T, key string) webhook.Lease {
	t.Helper()
	acq, err := p.table.Acquire(context.Background(), key, "TESTOWNERTESTOWNERTESTOWNE", time.Now().Add(time.Minute))
	if err != nil || acq.Outcome != webhook.Acquired {
		t.Fatalf("acquire %s: %v, %v", key, acq.Outcome, err)
	}
	return acq.Lease
}

func (p *pipeline) recordBytes(t *testing.T, key string) int {
	t.Helper()
	out, err := p.db.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(p.table.Name()),
		Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: key}, "sk": &types.AttributeValueMemberS{Value: store.SKEvent}}})
	if err != nil {
		t.Fatal(err)
	}
	p.cap.takeCalls()
	return store.ItemSize(out.Item)
}

// prosePayload returns a JSON payload of n bytes around English chat prose
// (testdata/chat-message.txt, a long customer message written for this
// test), which gzip keeps about half of: the compressible case beside
// textPayload's worst one.
func prosePayload(t *testing.T, n int) []byte {
	t.Helper()
	text, err := os.ReadFile("testdata/chat-message.txt")
	if err != nil {
		t.Fatal(err)
	}
	for cut := len(text); cut > 0; cut-- {
		b, err := json.Marshal(order{ID: "o-1", Note: string(text[:cut])})
		if err != nil {
			t.Fatal(err)
		}
		if len(b) <= n {
			return b
		}
	}
	t.Fatalf("no prose payload of %d bytes", n)
	return nil
}

// TestCapacityProsePayload measures a 4 KB event whose payload is chat
// prose (JSON around English text, gzip keeps ~1/2) beside the capacity
// table's incompressible one, and checks that its payload item is charged
// by its compressed size: the claim costs the record's one write unit plus
// the payload item's, read back from the table.
func TestCapacityProsePayload(t *testing.T) {
	p := newOneStepPipeline(t)
	const size = 4 << 10
	key := "line#t1#cap-prose"
	payload := prosePayload(t, size)
	c := measureEvent(t, p, key, payload)
	out, err := p.db.Query(context.Background(), &dynamodb.QueryInput{TableName: aws.String(p.table.Name()),
		KeyConditionExpression:    aws.String("pk = :pk AND begins_with(sk, :p)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: key}, ":p": &types.AttributeValueMemberS{Value: store.SKPayloadPrefix}}})
	if err != nil || len(out.Items) != 1 {
		t.Fatalf("payload item of %s: %d items, %v", key, len(out.Items), err)
	}
	itemBytes := store.ItemSize(out.Items[0])
	itemWCU := float64((itemBytes + 1023) / 1024)
	t.Logf("prose payload %d B: payload item %d B (%.0f WCU); claim %.1f WCU, acquire %.1f, step %.1f, complete %.1f, index %.1f, RCU %.1f; "+
		"duplicate %.1f WCU + %.1f RCU; write units per unique event with %.0f%% duplicates: %.2f",
		len(payload), itemBytes, itemWCU, c.claim, c.acquire, c.step, c.complete, c.gsi, c.rcu, c.dupWCU, c.dupRCU, duplicateShare*100, c.wruPerUnique())
	if _, gz := out.Items[0][store.AttrPayload].(*types.AttributeValueMemberB); !gz || itemBytes >= len(payload) {
		t.Errorf("prose payload %d B: payload item %d B, gzip binary %v; want it compressed", len(payload), itemBytes, gz)
	}
	if c.claim != 1+itemWCU || c.gsi != 1 || c.acquire != 1 || c.complete != 1 || c.step != 0 {
		t.Errorf("prose payload: claim %.1f WCU (want 1 + the payload item's %.0f), index %.1f, acquire %.1f, complete %.1f, step %.1f; want 1, 1, 1, 0",
			c.claim, itemWCU, c.gsi, c.acquire, c.complete, c.step)
	}
}

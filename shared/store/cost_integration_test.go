//go:build integration

package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"

	"github.com/hookwall/hookwall/shared/awstest"
	"github.com/hookwall/hookwall/shared/process"
	"github.com/hookwall/hookwall/shared/store"
	"github.com/hookwall/hookwall/shared/webhook"
)

// capacity asks DynamoDB for the capacity every write consumes
// (ReturnConsumedCapacity INDEXES) and adds it up, for the table and for
// its indexes. DynamoDB Local reports it as DynamoDB does.
type capacity struct {
	mu    sync.Mutex
	table float64
	index map[string]float64
}

func (c *capacity) option(o *dynamodb.Options) {
	o.APIOptions = append(o.APIOptions, func(stack *middleware.Stack) error {
		return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("test-capacity",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				switch p := in.Parameters.(type) {
				case *dynamodb.PutItemInput:
					p.ReturnConsumedCapacity = types.ReturnConsumedCapacityIndexes
				case *dynamodb.UpdateItemInput:
					p.ReturnConsumedCapacity = types.ReturnConsumedCapacityIndexes
				case *dynamodb.TransactWriteItemsInput:
					p.ReturnConsumedCapacity = types.ReturnConsumedCapacityIndexes
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
				case *dynamodb.TransactWriteItemsOutput:
					ccs = r.ConsumedCapacity
				}
				c.add(ccs)
				return out, md, err
			}), middleware.After)
	})
}

func (c *capacity) add(ccs []types.ConsumedCapacity) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.index == nil {
		c.index = map[string]float64{}
	}
	for _, cc := range ccs {
		if cc.Table != nil {
			c.table += aws.ToFloat64(cc.Table.CapacityUnits)
		} else {
			c.table += aws.ToFloat64(cc.CapacityUnits)
		}
		for name, ic := range cc.GlobalSecondaryIndexes {
			c.index[name] += aws.ToFloat64(ic.CapacityUnits)
		}
	}
}

// take returns the capacity consumed since the last take, table and indexes.
func (c *capacity) take() (float64, map[string]float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, i := c.table, c.index
	c.table, c.index = 0, map[string]float64{}
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
	d     *process.Dispatcher
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
		if err := process.Step(ctx, ev, "reserve", func(context.Context, string) error { return nil }); err != nil {
			return err
		}
		return process.Step(ctx, ev, "charge", func(context.Context, string) error {
			if p.fail.Load() {
				return errors.New("payment service down")
			}
			return nil
		})
	})
	if p.d, err = process.New(process.Config{Registry: reg, Store: p.table, Queue: nopQueue{}, DLQ: nopQueue{}}); err != nil {
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
func (p *pipeline) process(t *testing.T, env webhook.Envelope, want process.Verdict) usage {
	t.Helper()
	b, err := json.Marshal(env)
	if err != nil {
		t.Fatal(err)
	}
	if r := p.d.Process(context.Background(), process.Message{MessageID: env.Key, ReceiptHandle: "rh", Body: b}); r.Verdict != want {
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
// and checks the calls: one PutItem for the claim; one UpdateItem to
// acquire, one TransactWriteItems per step and one UpdateItem to complete.
func TestCallsAndCapacityPerEvent(t *testing.T) {
	p := newPipeline(t, store.Config{Function: "processor"})
	for _, size := range []int{200, 2048} {
		env, claim := p.claim(t, fmt.Sprintf("line#t1#ok-%d", size), payloadOf(size))
		happy := p.process(t, env, process.Succeeded)
		env2, claim2 := p.claim(t, fmt.Sprintf("line#t1#retry-%d", size), payloadOf(size))
		p.fail.Store(true)
		first := p.process(t, env2, process.Retried)
		p.fail.Store(false)
		second := p.process(t, env2, process.Succeeded)
		for _, c := range []struct {
			name string
			got  usage
			want map[string]int
		}{
			{"claim", claim, map[string]int{"PutItem": 1}},
			{"processing, two steps", happy, map[string]int{"UpdateItem": 2, "TransactWriteItems": 2}},
			{"claim of the retried event", claim2, map[string]int{"PutItem": 1}},
			{"attempt 1: step one done, step two fails", first, map[string]int{"UpdateItem": 2, "TransactWriteItems": 1}},
			{"attempt 2: journal read, step two run", second, map[string]int{"UpdateItem": 2, "Query": 1, "TransactWriteItems": 1}},
		} {
			t.Logf("payload %d B, %s: calls %v, write capacity: table %.1f, sweep index %.1f", size, c.name, c.got.ops, c.got.table, c.got.index)
			if !reflect.DeepEqual(c.got.ops, c.want) {
				t.Errorf("payload %d B, %s: got calls %v, want %v", size, c.name, c.got.ops, c.want)
			}
		}
		t.Logf("payload %d B, happy path total: table %.1f WCU, sweep index %.1f WCU", size, claim.table+happy.table, claim.index+happy.index)
		out, err := p.db.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(p.table.Name()),
			Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: env2.Key}, "sk": &types.AttributeValueMemberS{Value: store.SKEvent}}})
		if err != nil {
			t.Fatal(err)
		}
		item := out.Item
		p.take() // the read above is the test's, not the event's
		t.Logf("payload %d B, the retried event's item: %d bytes, of which history (%d entries) %d bytes",
			size, itemBytes(item), historyEntries(item), attrBytes(item["history"]))
	}
}

// itemBytes estimates an item's size by DynamoDB's rules: names and values,
// numbers at about one byte per two digits, maps and lists 3 bytes plus 1
// per element.
func itemBytes(item map[string]types.AttributeValue) int {
	n := 0
	for k, v := range item {
		n += len(k) + attrBytes(v)
	}
	return n
}

func attrBytes(av types.AttributeValue) int {
	switch v := av.(type) {
	case *types.AttributeValueMemberS:
		return len(v.Value)
	case *types.AttributeValueMemberB:
		return len(v.Value)
	case *types.AttributeValueMemberN:
		return (len(strings.TrimLeft(v.Value, "-0"))+1)/2 + 1
	case *types.AttributeValueMemberM:
		n := 3
		for k, e := range v.Value {
			n += 1 + len(k) + attrBytes(e)
		}
		return n
	case *types.AttributeValueMemberBOOL, *types.AttributeValueMemberNULL:
		return 1
	}
	return 0
}

func historyEntries(item map[string]types.AttributeValue) int {
	if m, ok := item["history"].(*types.AttributeValueMemberM); ok {
		return len(m.Value)
	}
	return 0
}

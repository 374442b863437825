//go:build integration

package targetsdb_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"

	"github.com/hookwall/hookwall/shared/aws/awstest"
	"github.com/hookwall/hookwall/shared/base/webhook/webhooktest"
	"github.com/hookwall/hookwall/shared/state/targets"
	"github.com/hookwall/hookwall/shared/state/targets/targetsdb"
	"github.com/hookwall/hookwall/shared/state/targets/targetstest"
)

// writeOps are the DynamoDB operations that consume write units.
var writeOps = []string{"PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems"}

// TestTableContract runs the contract suite on DynamoDB Local, each case
// on its own table, counting the write requests of every instance.
func TestTableContract(t *testing.T) {
	targetstest.Run(t, func(t *testing.T) targetstest.Env {
		var ops awstest.OpCounter
		db := awstest.DynamoDB(t, ops.DynamoDBOption)
		name := awstest.NewTable(t, db)
		var mu sync.Mutex
		writes := 0
		return targetstest.Env{
			Gate: func(t *testing.T, cfg targets.Config) targets.Gate {
				g, err := targetsdb.New(targetsdb.TableConfig{Client: db, TableName: name, Config: cfg})
				if err != nil {
					t.Fatal(err)
				}
				return g
			},
			Writes: func() int {
				mu.Lock()
				defer mu.Unlock()
				n := ops.Take()
				for _, op := range writeOps {
					writes += n[op]
				}
				return writes
			},
		}
	})
}

// TestTableWriteCost counts the write units (ReturnConsumedCapacity, as
// DynamoDB charges them; a failed condition costs one too) of healthy
// traffic and of a storm on a dead target, and logs them (go test -v).
func TestTableWriteCost(t *testing.T) {
	var units capacity
	db := awstest.DynamoDB(t, units.option)
	name := awstest.NewTable(t, db)
	clock := webhooktest.NewClock(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))
	cfg := targets.Config{Now: clock.Now}
	cfg, err := cfg.WithDefaults()
	if err != nil {
		t.Fatal(err)
	}
	gate := func() *targetsdb.Table {
		g, err := targetsdb.New(targetsdb.TableConfig{Client: db, TableName: name, Config: cfg})
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	ctx := context.Background()
	sub := targets.Subject{Handler: "forward.all", Tenant: "acme", Target: "forward/acme"}

	// Healthy: 4 instances, 600 calls per window (10/s), 5 windows.
	gates := []*targetsdb.Table{gate(), gate(), gate(), gate()}
	const windows, perWindow = 5, 600
	for range windows {
		for i := range perWindow {
			g := gates[i%len(gates)]
			a, err := g.Admit(ctx, sub)
			if err != nil || a.Verdict != targets.Allow {
				t.Fatalf("healthy call: %+v, %v", a, err)
			}
			if _, err := g.Report(ctx, a, sub, false); err != nil {
				t.Fatal(err)
			}
			clock.Advance(cfg.Window / perWindow)
		}
	}
	w := units.take()
	t.Logf("healthy: %d calls over %d windows by %d instances: %.0f write units (%.1f per window; %.4f per call)",
		windows*perWindow, windows, len(gates), w, w/windows, w/(windows*perWindow))
	if most := float64(windows*2*cfg.MinCalls + 2); w > most {
		t.Errorf("healthy traffic: %.0f write units; want at most %.0f", w, most)
	}

	// Dead: 20 concurrent callers on 2 instances, 3 tries each, every call failing.
	dead := targets.Subject{Handler: "forward.all", Tenant: "globex", Target: "forward/globex"}
	a, b := gate(), gate()
	var wg sync.WaitGroup
	var calls atomic.Int64
	for i := range 20 {
		g := []*targetsdb.Table{a, b}[i%2]
		wg.Go(func() {
			for range 3 {
				adm, err := g.Admit(ctx, dead)
				if err != nil {
					t.Error(err)
					return
				}
				if adm.Verdict != targets.Hold {
					calls.Add(1)
					time.Sleep(20 * time.Millisecond)
					if _, err := g.Report(ctx, adm, dead, true); err != nil {
						t.Error(err)
					}
				}
			}
		})
	}
	wg.Wait()
	w = units.take()
	t.Logf("dead target: 60 admissions by 20 callers on 2 instances: %d calls, %.0f write units (failed conditions included)", calls.Load(), w)
	if calls.Load() > int64(cfg.MinCalls) {
		t.Errorf("dead target: %d calls; want at most %d", calls.Load(), cfg.MinCalls)
	}

	// Take: 100 grants of 1 at 10/s.
	for range 100 {
		clock.Advance(100 * time.Millisecond)
		if n, _, err := a.Take(ctx, "forward/acme", 1); err != nil || n != 1 {
			t.Fatalf("take: %d, %v", n, err)
		}
	}
	t.Logf("take: 100 grants: %.0f write units", units.take())
}

// capacity adds up the write units every write consumed.
type capacity struct {
	mu    sync.Mutex
	units float64
}

func (c *capacity) option(o *dynamodb.Options) {
	o.APIOptions = append(o.APIOptions, func(stack *middleware.Stack) error {
		return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("test-capacity",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				switch p := in.Parameters.(type) {
				case *dynamodb.PutItemInput:
					p.ReturnConsumedCapacity = types.ReturnConsumedCapacityTotal
				case *dynamodb.UpdateItemInput:
					p.ReturnConsumedCapacity = types.ReturnConsumedCapacityTotal
				case *dynamodb.DeleteItemInput:
					p.ReturnConsumedCapacity = types.ReturnConsumedCapacityTotal
				}
				out, md, err := next.HandleInitialize(ctx, in)
				var cc *types.ConsumedCapacity
				switch r := out.Result.(type) {
				case *dynamodb.PutItemOutput:
					cc = r.ConsumedCapacity
				case *dynamodb.UpdateItemOutput:
					cc = r.ConsumedCapacity
				case *dynamodb.DeleteItemOutput:
					cc = r.ConsumedCapacity
				}
				var ccf *types.ConditionalCheckFailedException
				if cc == nil && errors.As(err, &ccf) {
					cc = &types.ConsumedCapacity{CapacityUnits: aws.Float64(1)} // DynamoDB charges a failed condition; the error carries no figure
				}
				if cc != nil {
					c.mu.Lock()
					c.units += aws.ToFloat64(cc.CapacityUnits)
					c.mu.Unlock()
				}
				return out, md, err
			}), middleware.After)
	})
}

func (c *capacity) take() float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	u := c.units
	c.units = 0
	return u
}

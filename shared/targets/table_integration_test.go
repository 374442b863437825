//go:build integration

package targets_test

import (
	"sync"
	"testing"

	"github.com/hookwall/hookwall/shared/awstest"
	"github.com/hookwall/hookwall/shared/targets"
	"github.com/hookwall/hookwall/shared/targets/targetstest"
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
				g, err := targets.New(targets.TableConfig{Client: db, TableName: name, Config: cfg})
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

//go:build integration

package store_test

import (
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/aws/awstest"
	"github.com/hookwall/hookwall/shared/state/store"
	"github.com/hookwall/hookwall/shared/state/store/storetest"
)

var _ storetest.Store = (*store.Table)(nil)

// countedTable is the table with the DynamoDB calls it made, so the suite
// checks that each transition is one write.
type countedTable struct {
	*store.Table
	ops *awstest.OpCounter
}

func (c countedTable) TakeOps() map[string]int { return c.ops.Take() }

// TestContract runs the contract suite against DynamoDB Local, one fresh
// table per subtest; memstore runs the same suite in its unit tests.
func TestContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T, now func() time.Time) storetest.Store {
		ops := &awstest.OpCounter{}
		db := awstest.DynamoDB(t, ops.DynamoDBOption)
		table, err := store.New(store.Config{Client: db, TableName: awstest.NewTable(t, db), Now: now,
			Function: storetest.Function, HistoryKeep: storetest.HistoryKeep, SweepAfter: storetest.SweepAfter})
		if err != nil {
			t.Fatal(err)
		}
		ops.Take()
		return countedTable{Table: table, ops: ops}
	}, storetest.Transitions(func(t *testing.T) (storetest.TransitionDB, string) {
		db := awstest.DynamoDB(t)
		return db, awstest.NewTable(t, db)
	}))
}

//go:build integration

package store_test

import (
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/awstest"
	"github.com/hookwall/hookwall/shared/store"
	"github.com/hookwall/hookwall/shared/store/storetest"
)

var _ storetest.Store = (*store.Table)(nil)

// TestContract runs the contract suite against DynamoDB Local, one fresh
// table per subtest; memstore runs the same suite in its unit tests.
func TestContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T, now func() time.Time) storetest.Store {
		db := awstest.DynamoDB(t)
		table, err := store.New(store.Config{Client: db, TableName: awstest.NewTable(t, db), Now: now})
		if err != nil {
			t.Fatal(err)
		}
		return table
	}, storetest.Transitions(func(t *testing.T) (storetest.TransitionDB, string) {
		db := awstest.DynamoDB(t)
		return db, awstest.NewTable(t, db)
	}))
}

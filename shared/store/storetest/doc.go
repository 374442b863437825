// Package storetest is the contract suite of the events table: the claim,
// take-over, lease, fence and journal semantics that every implementation
// of it (store.Table on DynamoDB, memstore.Store in memory) must share, and
// those of store.ApplyTransition on a business table. [Run] runs it as
// subtests that read as sentences, like watermill's TestPubSub.
//
//	storetest.Run(t, func(t *testing.T, now func() time.Time) storetest.Store {
//		return memstore.New(memstore.Config{Now: now})
//	}, storetest.Transitions(func(t *testing.T) (storetest.TransitionDB, string) {
//		return memstore.NewTable("rows", "pk", "sk"), "rows"
//	}))
package storetest

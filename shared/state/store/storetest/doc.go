// Package storetest is the contract suite of the events table: the claim,
// take-over, lease, fence, journal, history, sweep index, compensation and
// replay semantics that every implementation of it (store.Table on
// DynamoDB, memstore.Store in memory) must share, and those of
// store.ApplyTransition on a business table. [Run] runs it as subtests that
// read as sentences, like watermill's TestPubSub. The stores it is given
// are configured with the suite's [Function], [HistoryKeep] and
// [SweepAfter]; one that implements [Ops] also has each transition checked
// to be one write.
//
//	storetest.Run(t, func(t *testing.T, now func() time.Time) storetest.Store {
//		return memstore.New(memstore.Config{Now: now, Function: storetest.Function,
//			HistoryKeep: storetest.HistoryKeep, SweepAfter: storetest.SweepAfter})
//	}, storetest.Transitions(func(t *testing.T) (storetest.TransitionDB, string) {
//		return memstore.NewTable("rows", "pk", "sk"), "rows"
//	}))
package storetest

// Package processtest is the test kit for business handlers, named like
// httptest: it proves in a few lines that a handler survives what the
// processor does to it in production (duplicate deliveries, concurrent
// deliveries, a crash after any step) and that each external effect happens
// once per idempotency key.
//
//	srv := processtest.NewEffectServer(t, nil)
//	reg := processtest.NewRegistry(t, crm.Team, processtest.Env{"CRM_LEADS_URL": srv.URL}, platform.Deps{})
//	rep := processtest.Run(t, reg, line.Follow, payload,
//		processtest.Redeliver(3), processtest.CrashAfterEachStep())
//	srv.AssertOnce(t) // every request keyed, every replay the same request
//	if got, want := srv.Keys(), rep.StepKeys(); !slices.Equal(got, want) { ... }
//
// [Run] drives the real [dispatch.Dispatcher] (its Handle, the kernel's)
// against a fresh events table: by default the in-memory
// shared/state/store/memstore, which has the conditional semantics of
// [store.Table] (the contract suite shared/state/store/storetest runs against
// both), so a plain `go test ./...` needs no services; with the environment
// variable HOOKWALL_TEST_STORE=dynamodb ([EnvStore]) the same test runs
// against a store.Table on a fresh table in DynamoDB Local (see
// shared/aws/awstest; a missing local stack fails the test with a hint, it never
// skips). `make test` runs the kit's users both ways. The queue side is an
// in-memory recorder: the kit delivers the envelope itself, so retry
// visibility and backoff are recorded and not waited for, and dead letters
// are kept in the [Report].
//
// Crashes ([CrashAfterEachStep]) are injected by a wrapper around the events
// table, not by the dispatcher: at the crash point the attempt's journal
// write fails, and every later write of that attempt is dropped, which is
// what a dead worker looks like from the table; the lease then runs out and
// a redelivery takes over.
//
// Handlers that write their own DynamoDB tables (store.ApplyTransition) get
// theirs from [NewTable]: a memstore.Table by default, a fresh table in
// DynamoDB Local with HOOKWALL_TEST_STORE=dynamodb.
package processtest

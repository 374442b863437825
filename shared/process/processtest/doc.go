// Package processtest is the test kit for business handlers, named like
// httptest: it proves in a few lines that a handler survives what the
// processor does to it in production (duplicate deliveries, concurrent
// deliveries, a crash after any step) and that each external effect happens
// once per idempotency key.
//
//	srv := processtest.NewEffectServer(t, nil)
//	reg := process.NewRegistry()
//	crm.Register(reg, crm.New(srv.URL))
//	rep := processtest.Run(t, reg, line.Follow, payload,
//		processtest.Redeliver(3), processtest.CrashAfterEachStep())
//	srv.AssertOnce(t) // every request keyed, every replay the same request
//	if got, want := srv.Keys(), rep.StepKeys(); !slices.Equal(got, want) { ... }
//
// [Run] drives the real [process.Dispatcher] with [process.Dispatcher.Process]
// against the real events table ([store.Table]) on a fresh table in DynamoDB
// Local (see shared/awstest; a missing local stack fails the test with a
// hint, it never skips). The queue side is an in-memory recorder: the kit
// delivers the envelope itself, so retry visibility and backoff are recorded
// and not waited for, and dead letters are kept in the [Report]. Tests that
// use the kit therefore carry the integration build tag.
//
// Handlers that write their own DynamoDB tables (store.ApplyTransition) run
// unchanged: create the team's table in the test with awstest.DynamoDB and
// pass the client to the team's Register.
package processtest

// Package memstore is an in-memory events table with exactly the conditional
// semantics of [store.Table]: the same claims, take-overs, leases, fences,
// journal, history, sweep index, compensation leases and replays, decided
// under one lock instead of by DynamoDB's conditions. Unit
// tests use it where they would otherwise need DynamoDB Local (the intake's
// tests, shared/engine/processtest by default); the contract suite in
// shared/state/store/storetest runs against both and keeps them alike.
//
// As in the table, a record whose expiresAt (TTL, epoch seconds) is before
// now counts as absent wherever [store.Table] treats it so, a lost race is a
// result and never an error, and what a lost race reports is the record as it
// was (ReturnValuesOnConditionCheckFailure=ALL_OLD).
//
// [Table] is an in-memory business table for [store.ApplyTransition]: it
// answers UpdateItem, PutItem and GetItem for the expressions the transition
// helper writes, so that handlers with their own DynamoDB table can be
// tested without services.
package memstore

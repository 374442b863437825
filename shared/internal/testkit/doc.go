// Package testkit is what the test kits processtest and compensatetest
// share: the crash injection (a scenario that crashes an attempt at one of
// the journal points it sees), the gate that makes a round's deliveries
// contend for the lease at once, and a new event claimed as the receiver
// claims it.
package testkit

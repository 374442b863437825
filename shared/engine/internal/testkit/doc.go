// Package testkit is the one driver behind the test kits processtest and
// compensatetest: a run's options, the plain run and one run per crash
// point ([Drive]), the rounds of concurrent deliveries of one message to an
// engine until its record is done ([Deliveries]), the events table with its
// crash injection ([FaultStore]: a scenario that crashes an attempt at one
// of the journal points it sees, and drops every later write of the dead
// attempt), the gate that makes a round's deliveries contend for the lease
// at once, the in-memory queues and bus, and a new event claimed as the
// receiver claims it. A kit supplies what is its own: which engine it
// drives, which journal writes are crash points, and the guarantees a crash
// run must keep.
package testkit

// Package kernel is the leased-attempt kernel both engines run on: the
// processor (shared/engine/dispatch, a phase that runs the handlers) and the
// compensator (shared/engine/compensate, a phase that plans and runs the undos and
// the requeue).
//
// Per queue message ([Engine.Handle], or a batch with bounded concurrency
// with [Engine.Batch]) the kernel decodes the envelope, takes the event's
// lease through the phase's store call and switches on the acquisition (a
// terminal record is a [Duplicate], a live lease elsewhere [Busy], a missing
// record [Absent]), then runs the phase's work under the heartbeat (which
// cancels the work when the lease is lost), each handler or undo inside
// [Attempt.Guard] (its time limit, a panic turned into an error). It settles
// the attempt with the phase's fenced write on a context that outlives the
// invocation's by FinishReserve, backs a retry off with full jitter, treats
// a lost lease the same way for every phase ([LeaseLost], Err =
// ErrLeaseLost, the outcome discarded) and publishes the outcome events.
//
// One [Config] holds what every engine shares (the queue, the publisher,
// the lease, retry and clock settings); its defaults and the bounds the
// deployed settings are held to are stated here once, for every binary.
// One [Verdict] vocabulary and one [Result] serve both engines.
//
// The package imports no AWS SDK and no Lambda library.
package kernel

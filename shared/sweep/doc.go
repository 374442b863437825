// Package sweep finds event records that nothing will move on any more and
// hands them back to the pipeline: the sweeper, run by the compensator in
// sweep mode on an EventBridge schedule (default every 5 minutes).
//
// It never scans the table. Every non-terminal record carries the sparse
// attributes sweepShard and sweepAt (set at claim to claim time plus the
// store's SweepAfter, removed by the write that makes the record terminal),
// indexed by the GSI `sweep`; [Sweeper.Run] queries each shard for the
// records with sweepAt at or before now, oldest first, and reads each one
// with a strongly consistent Get. A record is stuck when:
//
//   - RECEIVED, and its last enqueue (enqueuedAt) is older than Grace: the
//     receiver crashed (or its send failed) between claim and send;
//   - RETRY, and its last transition (updatedAt) is older than RetryCap plus
//     StuckAfter: the retry's message should have come back long ago;
//   - PROCESSING, and its lease ran out more than StuckAfter ago: the worker
//     died and no redelivery took the lease over;
//   - FAILED, last changed more than StuckAfter ago: the dead-letter message
//     never reached (or never resolved) the compensator;
//   - COMPENSATING, with a lease that ran out more than StuckAfter ago, or no
//     lease (a compensation retry) and last changed more than RetryCap plus
//     StuckAfter ago.
//
// A stuck RECEIVED, RETRY or PROCESSING record is re-enqueued on the main
// queue from the payload stored in the record (its [store.Record.Envelope];
// the queue leaves a large payload in the record, as the receiver does); a
// stuck FAILED or COMPENSATING record is sent to the dead-letter queue, so
// the compensator sees it again. Before sending, the sweeper marks the
// record (store MarkRequeued: enqueuedAt = now, sweepAt = now + SweepAfter),
// fenced on the version, status and enqueuedAt it read: a record that moved
// on meanwhile is left alone, and among concurrent sweepers only one sends.
// A record that is due but not stuck yet is re-swept: its sweepAt moves to
// the time it would become stuck. Terminal or vanished records (the GSI is
// eventually consistent) are ignored.
//
// A record is looked at again no sooner than its sweepAt, which
// MarkRequeued moves to now + SweepAfter: a record re-enqueued (or
// dead-lettered) is given that long to move before it is sent again.
//
// Nothing is lost when a send fails after MarkRequeued: the record stays in
// the GSI and stuck, and the sweeper moves its sweepAt back (Resweep) to
// when it counts as stuck again (now, or for RECEIVED the grace after the
// enqueuedAt MarkRequeued wrote), so the next run sends it again; if even
// that fails (or the run is cut off), the sweepAt MarkRequeued wrote, now +
// SweepAfter, brings it back one SweepAfter later.
// A duplicate message is harmless: the processor's lease and the
// compensator's fence decide, and a terminal record acknowledges it.
//
// Work per run is bounded: at most Limit records are read, shard after
// shard, starting one shard after the last one the previous run of the same
// Sweeper read from (so no shard starves the others), and the run stops
// early when its context is about to end. A run that stops
// early loses nothing: whatever it did not handle is still due and the next
// run finds it.
//
// With a gate, each run also writes every breaker's EMF metric CircuitOpen
// (targets.WriteCircuitOpen, dimension Target) to MetricsOut. After its own
// work a run continues the detached recovery jobs (Config.Jobs,
// shared/recovery's Jobs.Continue) for at most JobBudget, never within
// Reserve of its deadline, so that the sweep's own work always comes first.
package sweep

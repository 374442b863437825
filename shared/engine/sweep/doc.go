// Package sweep finds event records that nothing will move on any more and
// hands them back to the pipeline: the sweeper, run by the compensator in
// sweep mode on an EventBridge schedule (default every 5 minutes).
//
// It never scans the table. Every record carries the sparse attributes
// sweepShard and sweepAt (set at claim to claim time plus the store's
// SweepAfter, kept by the write that makes the record terminal: a KEYS_ONLY
// index is written only when its keys change, so a completion costs the
// index nothing), indexed by the GSI `sweep` until TTL deletes the record.
// [Sweeper.Run] reads each shard from its cursor (one item per shard,
// store SweepCursor): the entries with cursor < sweepAt <= now, oldest
// first, a page at a time; it reads a page's records with one eventually
// consistent batch read (store GetMany), passes those terminal or gone
// (Report.Passed), and reads each other one with a strongly consistent
// Get. A record is stuck when:
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
// the time it would become stuck. Terminal or vanished records are passed.
//
// # The cursor
//
// After a shard, the run advances its cursor (conditionally, only forward,
// so concurrent sweepers are safe) to the largest T such that every entry
// with sweepAt <= T was handled, and never past now - SweepLag: up to the
// first entry not handled (a failed read or write, a record that moved on
// between the read and the fenced write, an unknown status, a drain that
// stopped early, or the run stopping there), less 1 ms since entries may
// share a sweepAt. An entry is handled when its record is terminal or gone,
// or when a write of the run moved its sweepAt (MarkRequeued, Resweep,
// Recheck, or a Release by a drain that went to the end).
//
// Why nothing due is ever passed. The store keeps one rule: every write
// that sets sweepAt sets it at or after its own now (a claim, MarkRequeued
// and Replay to now + SweepAfter; Resweep, Hold, Recheck and Release to the
// time asked for but never earlier than now). Take an entry (k, s) the
// cursor passes, at a run whose clock read n, to T >= s with T <= n -
// SweepLag. (1) No entry with sweepAt <= T is missing from the index when
// the run queries it: the write that put it happened at or before its
// sweepAt <= T <= n - SweepLag, so at least SweepLag before the query,
// longer than the index's propagation (and the clocks' skew). (2) No later
// write puts an entry at or below T: it would be made at a time after n,
// so its sweepAt is after n > T. (3) What the run saw of each entry is
// true enough: a batch read shows a record at least as new as the write
// behind its entry (that write is at least SweepLag old); a terminal
// status is final for its claim, and a record becomes non-terminal again
// only by a new claim or a Replay, which write a new sweepAt after n; an
// entry whose record the run moved (a fenced write that succeeded) lies now
// after n. So every record that needs the sweeper keeps an entry above the
// cursor. The first run after an upgrade has no cursor and reads each
// shard from the start, where the index then holds only records that were
// not terminal: a small catch-up.
//
// Entries in (now - SweepLag, now] are read and handled as they come due
// (a record is swept at its sweepAt, not SweepLag later); the cursor stays
// below them, so the terminal ones among them are read once more by the
// next run. A shard whose head keeps failing holds its cursor: its terminal
// entries after it are read again each run, up to MaxPassed per run, and
// SweepCursorLagSeconds grows.
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
// Work per run is bounded: at most Limit records are handled (read with a
// Get) and MaxPassed entries passed, shard after shard, starting one shard
// after the last one the previous run of the same Sweeper read from (so no
// shard starves the others), and the run stops early when its context is
// about to end. Each run records SweepPassed and SweepCursorLagSeconds (the
// largest now - cursor over the shards it read). A run that stops
// early loses nothing: whatever it did not handle is still due and the next
// run finds it.
//
// With a gate, each run also writes every breaker's EMF metric CircuitOpen
// (targets.WriteCircuitOpen, dimension Target) to MetricsOut. After its own
// work a run continues the detached recovery jobs (Config.Jobs,
// shared/ops/recovery's Jobs.Continue) for at most JobBudget, never within
// Reserve of its deadline, so that the sweep's own work always comes first.
package sweep

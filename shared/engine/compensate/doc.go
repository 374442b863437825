// Package compensate is the compensator's engine, a phase on the
// leased-attempt kernel (shared/internal/kernel): what the dead-letter path
// does with an event the processor gave up on (FAILED) or that SQS redrove
// after maxReceiveCount deliveries (RECEIVED, RETRY or PROCESSING).
//
// Per dead-letter message (the Compensator's Handle, or a batch with bounded
// concurrency with its Batch, both the kernel's):
//
//   - a record that is SUCCEEDED, COMPENSATED or DEAD is left alone and the
//     message acknowledged; so is a message whose record is gone;
//   - a record under a live lease (a processor or another compensator at
//     work) is left alone and the message comes back after the lease;
//   - a body that is not an envelope (it has no key, so no record) is kept
//     on the queue for an operator, hidden for the longest visibility
//     timeout, and counted (Malformed);
//   - otherwise the record is taken to COMPENSATING under a lease (one
//     conditional write, the processor's fence), heartbeated while the
//     compensation runs. Every journaled forward step of a handler that
//     registered a compensation ([process.Compensate]) is
//     undone, newest first, each in a compensation step journaled as
//     "$undo:<step>" (registry.UndoStep) with its own idempotency key, so a
//     crash mid-compensation resumes where it stopped and no undo is sent
//     twice. A step's undo counts for its run (webhook.JournalEntry.Run): a
//     step run again after a replay of the compensated event is undone
//     again, under the undo key of that run. Then the record is COMPENSATED; with nothing to compensate, a
//     [process.Permanent] undo error or the attempts exhausted, DEAD with the
//     reason. Any other undo error is tried again with backoff (the
//     message's visibility, full jitter, as the processor's retries).
//
// The kernel takes the lease, keeps it, guards each undo, backs a retry off,
// settles the attempt with the compensator's fenced write and treats a lost
// lease as it does for the processor. Every COMPENSATED and DEAD outcome is
// published (the [Kernel]'s Publisher: hookwall.event.compensated,
// hookwall.event.dead) and counted in EMF.
//
// The package imports no AWS SDK. It declares the ports it needs ([Store],
// [Requeuer]; the kernel's queue visibility and publisher), which
// store.Table, memstore.Store, queue.Queue and bus.Publisher satisfy.
package compensate

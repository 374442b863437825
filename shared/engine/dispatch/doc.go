// Package dispatch is the processor engine, a phase on the leased-attempt
// kernel (shared/internal/kernel): it runs the handlers of a
// [process.Registry] on queue deliveries, as the leased, versioned state
// machine of architecture.md ("States") with a step journal.
//
// The [Dispatcher] processes one queue delivery at a time (its Handle) or a
// batch with bounded concurrency (its Batch; both are the kernel's): acquire the
// lease (one conditional write), heartbeat it while the handlers run, then
// complete, retry or fail the record with writes fenced on the lease owner and
// version, so a stale worker never overwrites the new owner. The kernel
// takes and keeps the lease, guards each handler (its timeout, a panic),
// backs a retry off, treats a lost lease as it does for the compensator and
// publishes the outcomes; this package supplies the store calls, runs the
// handlers with their journal and decides how an attempt settles.
//
// The package imports no AWS SDK. It declares the small interfaces it needs
// ([Store], [DeadLetters]; the kernel's queue visibility and publisher);
// store.Table, queue.Queue and bus.Publisher satisfy them, and tests use
// hand-written fakes. shared/aws/sqsbatch adapts a Dispatcher to the Lambda SQS
// event.
package dispatch

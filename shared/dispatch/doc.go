// Package dispatch is the processor engine: it runs the handlers of a
// [process.Registry] on queue deliveries, as the leased, versioned state
// machine of architecture.md ("States") with a step journal.
//
// The [Dispatcher] processes one queue delivery at a time ([Dispatcher.Process])
// or a batch with bounded concurrency ([Dispatcher.ProcessBatch]): acquire the
// lease (one conditional write), heartbeat it while the handlers run, then
// complete, retry or fail the record with writes fenced on the lease owner and
// version, so a stale worker never overwrites the new owner.
//
// The package imports no AWS SDK. It declares the small interfaces it needs
// ([Store], [Visibility], [DeadLetters], [Publisher]); store.Table, queue.Queue
// and bus.Publisher satisfy them, and tests use hand-written fakes.
// shared/dispatch/sqsbatch adapts a Dispatcher to the Lambda SQS event.
package dispatch

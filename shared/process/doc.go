// Package process is the processor's business-handler API and the dispatcher
// that runs it: the leased, versioned state machine of architecture.md
// ("States"), the step journal and the idempotency keys that travel to the
// outside world.
//
// A business team registers typed handlers on a [Registry] with [Handle]:
//
//	process.Handle(r, "crm.lead-from-follow", line.Follow, c.createLead,
//		process.MaxAttempts(5), process.Timeout(20*time.Second))
//
// [HandleAll] registers a catch-all handler, run for every event type (the
// built-in forwarding handler), and [ForTenants] restricts a handler to some
// tenants.
//
// A handler receives an [Event] and wraps each external effect in
// [Step] (or [StepResult]): a journaled step is never run again for
// the same event, and a step that ran but was not journaled is run again with
// the same idempotency key ([IdempotencyKey]), which [Event.HTTPClient] sends
// as the Idempotency-Key header. Returning nil means done, an error means
// retry with backoff, [Permanent] means the dead-letter queue at once; a
// panic is recovered and retried.
//
// [Registration.Compensate] registers a handler's compensation, an
// [UndoFunc] the compensator (shared/compensate) calls once per journaled
// step of the handler, newest first, when the event ends on the dead-letter
// path. Each call gets an [Undo] with the step's journaled result
// ([UndoResult]) and its own idempotency key, which [Undo.HTTPClient] sends.
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
package process

// Package process is the business teams' handler API: the registry, the
// typed event, the journaled steps and the idempotency keys that travel to
// the outside world, and the compensations.
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
// the same idempotency key, which [Event.HTTPClient] sends
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
// The processor engine that runs the handlers lives in shared/dispatch, the
// compensator in shared/compensate; this package is what a team needs.
package process

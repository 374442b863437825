// Package crm is an example team package, the pattern teams copy: a LINE
// follow records a lead in the CRM through its HTTP API, then tags it.
//
// Each external call is a step ([process.Event.Step], [process.StepResult]):
// a journaled step is never called again for the event, and a step that ran
// but was not journaled is called again with the same idempotency key, which
// [process.Event.HTTPClient] sends as the Idempotency-Key header, so the CRM
// applies it once. A 4xx answer other than 408 and 429 is permanent (the
// event goes to the dead-letter queue at once); 408, 429, 5xx and transport
// errors are retried with backoff.
//
// Its compensation deletes the lead (DELETE /leads/{id}) when the event ends
// on the dead-letter path, with the undo's own idempotency key; a lead
// already gone counts as deleted. The tests prove both with
// shared/engine/processtest and shared/engine/compensate.
package crm

// Package process is the business teams' handler API: the registry, the
// typed event, the journaled steps and the idempotency keys that travel to
// the outside world, the compensations, and the settings and dependencies a
// team's handlers get from the platform.
//
// A team owns one package with one value, its platform.Team, listed in
// functions/processor/handlers/handlers.go: its package (Owner), the
// settings it declares as data (shared/config/setting's Setting: `make generate`
// reads them without running any code) and its Register, which reads those
// settings, takes the platform's clients from its platform.Deps argument and
// registers typed handlers with [Handle]:
//
//	var LeadsURL = setting.Setting{Name: "CRM_LEADS_URL", Kind: setting.KindURL, Doc: "the CRM's leads API (empty: off)"}
//
//	var Team = platform.Team{Owner: "functions/processor/handlers/crm", Settings: []setting.Setting{LeadsURL}, Register: Register}
//
//	func Register(r *process.Registry, d platform.Deps) {
//		base := r.String(LeadsURL)
//		if base == "" {
//			return
//		}
//		c := New(base)
//		process.Handle(r, "crm.lead-from-follow", line.Follow, c.createLead,
//			process.MaxAttempts(5), process.Timeout(20*time.Second), process.Compensate(c.deleteLead))
//	}
//
// [HandleAll] registers a catch-all handler, run for every event type (the
// built-in forwarding handler), and [ForTenants] restricts a handler to some
// tenants.
//
// A handler receives an [Event] and wraps each external effect in
// [Event.Step] (or [StepResult]): a journaled step is never run again for
// the same event, and a step that ran but was not journaled is run again with
// the same idempotency key, which [Event.HTTPClient] sends as the
// Idempotency-Key header. Returning nil means done, an error means retry
// with backoff, [Permanent] means the dead-letter queue at once; a panic is
// recovered and retried. [HTTPStatus] maps an HTTP answer to those outcomes.
//
// [Compensate] registers a handler's compensation, an [UndoFunc] the
// compensator (shared/engine/compensate) calls once per journaled step of the
// handler, newest first, when the event ends on the dead-letter path. Each
// call gets an [Undo] with the step's journaled result ([UndoResult]) and
// its own idempotency key, which [Undo.HTTPClient] sends.
//
// The processor and the compensator build the registry with platform.Build at
// their cold start. The engines live elsewhere: shared/engine/dispatch runs the
// handlers, shared/engine/compensate runs the compensations;
// shared/engine/processtest and shared/engine/compensatetest are the
// test kits.
package process

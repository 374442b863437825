// Package handlers lists the business handlers the processor runs and the
// compensator compensates. Each team owns a package under
// functions/processor/handlers/ with one function,
//
//	func Register(r *process.Registry)
//
// which declares the team's settings (process.Setting) and registers its
// handlers; [Register] calls each one explicitly, in order: no init()
// self-registration, no blank imports. Adding a team is its package plus
// one line (and its import) here, then `make generate` for the settings.
package handlers

import (
	"github.com/hookwall/hookwall/functions/processor/handlers/approvals"
	"github.com/hookwall/hookwall/functions/processor/handlers/crm"
	"github.com/hookwall/hookwall/functions/processor/handlers/forward"
	"github.com/hookwall/hookwall/shared/process"
)

// Register adds every team's handlers to r. A team whose settings are not
// set registers nothing. It panics on a duplicate handler name or a
// malformed setting declaration, so the test that calls it turns either
// into a CI failure (and the processor's cold start reports it).
func Register(r *process.Registry) {
	crm.Register(r)
	approvals.Register(r)

	// Built in, always, and last: it forwards every event of the tenants
	// with forward configured. Handlers run in registration order and the
	// first error ends the attempt, so a tenant's failing endpoint (a 404 is
	// permanent) never keeps the teams' handlers from running.
	forward.Register(r)
}

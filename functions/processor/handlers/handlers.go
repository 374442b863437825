// Package handlers lists the business handlers the processor runs. Each team
// owns a package under functions/processor/handlers/ exposing
// Register(r *process.Registry, ...) and is added to [Register] explicitly:
// no init() self-registration, no blank imports.
package handlers

import (
	"github.com/hookwall/hookwall/functions/processor/handlers/approvals"
	"github.com/hookwall/hookwall/functions/processor/handlers/crm"
	"github.com/hookwall/hookwall/functions/processor/handlers/forward"
	"github.com/hookwall/hookwall/shared/process"
	"github.com/hookwall/hookwall/shared/store"
	"github.com/hookwall/hookwall/shared/tenants"
)

// Deps are the dependencies the teams' handlers share, built once per cold
// start in main. A team whose settings are empty is not registered.
type Deps struct {
	// Tenants is the tenants document; the forwarding handler acts for the
	// tenants that have forward configured (nil: none).
	Tenants *tenants.Tenants
	// DynamoDB is the client for the teams' own tables.
	DynamoDB store.UpdateItemAPI
	// CRMLeadsURL is the CRM's leads API (CRM_LEADS_URL; empty: crm off).
	CRMLeadsURL string
	// ApprovalsTable is the approvals team's table (APPROVALS_TABLE; empty: approvals off).
	ApprovalsTable string
}

// Register adds every team's handlers to r. It panics on a duplicate handler
// name or a missing dependency, so a test that calls it turns either into a
// CI failure.
func Register(r *process.Registry, deps Deps) {
	if deps.CRMLeadsURL != "" {
		crm.Register(r, crm.New(deps.CRMLeadsURL))
	}
	if deps.ApprovalsTable != "" {
		approvals.Register(r, approvals.Config{DB: deps.DynamoDB, Table: deps.ApprovalsTable})
	}

	// Built in, always, and last: it forwards every event of the tenants
	// with forward configured. Handlers run in registration order and the
	// first error ends the attempt, so a tenant's failing endpoint (a 404 is
	// permanent) never keeps the teams' handlers from running.
	var tenants forward.Tenants
	if deps.Tenants != nil { // a nil *tenants.Tenants in the interface would not be nil
		tenants = deps.Tenants
	}
	forward.Register(r, forward.Config{Tenants: tenants})
}

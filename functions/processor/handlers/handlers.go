// Package handlers lists the business handlers the processor runs and the
// compensator compensates. Each team owns a package under
// functions/processor/handlers/ with one value, its platform.Team: its
// owner, the settings it declares (setting.Setting) and its
//
//	func Register(r *process.Registry, d platform.Deps)
//
// which registers its handlers; [Teams] lists each one explicitly, in
// order: no init() self-registration, no blank imports. Adding a team is
// its package plus one line (and its import) here, then `make generate`
// for the settings.
package handlers

import (
	"github.com/hookwall/hookwall/functions/processor/handlers/approvals"
	"github.com/hookwall/hookwall/functions/processor/handlers/crm"
	"github.com/hookwall/hookwall/functions/processor/handlers/forward"
	"github.com/hookwall/hookwall/shared/config/setting"
	"github.com/hookwall/hookwall/shared/engine/platform"
)

// Teams are every team, in registration order: the processor and the
// compensator build their registry from it (platform.Build), `make
// generate` reads its settings (platform.Settings). A team whose settings
// are not set registers nothing. A duplicate handler name or a malformed
// setting declaration fails the build, so the test that builds it turns
// either into a CI failure (and the processor's cold start reports it).
var Teams = []platform.Team{
	crm.Team,
	approvals.Team,

	// Built in, always, and last: it forwards every event of the tenants
	// with forward configured. Handlers run in registration order and the
	// first error ends the attempt, so a tenant's failing endpoint (a 404 is
	// permanent) never keeps the teams' handlers from running.
	forward.Team,
}

// CheckSettings validates, before anything is started, the values getenv
// (nil: os.Getenv) gives the settings of [Teams]: the error names every
// invalid one, as platform.Build's would at the processor's cold start.
func CheckSettings(getenv func(string) string) error {
	settings, err := platform.Settings(Teams...)
	if err != nil {
		return err
	}
	_, err = setting.Values(settings, getenv)
	return err
}

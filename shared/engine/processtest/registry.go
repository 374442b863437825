package processtest

import (
	"testing"

	"github.com/hookwall/hookwall/shared/engine/platform"
	"github.com/hookwall/hookwall/shared/engine/process"
)

// Env is the environment of the handler settings in a test: variable →
// value; an absent variable is unset (the setting's default applies).
type Env map[string]string

// NewRegistry builds a registry as the processor does at cold start
// (platform.Build): team's settings read from env, its Register run with
// deps (the dependencies it uses; the others are their zero value). It
// fails t on an invalid setting value or a failed registration.
//
//	reg := processtest.NewRegistry(t, crm.Team, processtest.Env{"CRM_LEADS_URL": srv.URL}, platform.Deps{})
func NewRegistry(t testing.TB, team platform.Team, env Env, deps platform.Deps) *process.Registry {
	t.Helper()
	reg, err := platform.Build(func(name string) string { return env[name] }, deps, team)
	if err != nil {
		t.Fatalf("processtest: %v", err)
	}
	return reg
}

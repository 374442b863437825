package processtest

import (
	"testing"

	"github.com/hookwall/hookwall/shared/dispatch"
	"github.com/hookwall/hookwall/shared/process"
)

// Env is the environment of the handler settings in a test: variable →
// value; an absent variable is unset (the setting's default applies).
type Env map[string]string

// NewRegistry builds a registry as the processor does at cold start
// (dispatch.BuildRegistry): register (a team's Register, or
// handlers.Register for every team) runs with the settings read from env
// and the dependencies deps (what process.Use finds). It fails t on an
// invalid setting value or a panic of the registration.
//
//	reg := processtest.NewRegistry(t, crm.Register, processtest.Env{"CRM_LEADS_URL": srv.URL})
func NewRegistry(t testing.TB, register func(*process.Registry), env Env, deps ...any) *process.Registry {
	t.Helper()
	reg, err := dispatch.BuildRegistry(register, func(name string) string { return env[name] }, deps...)
	if err != nil {
		t.Fatalf("processtest: %v", err)
	}
	return reg
}

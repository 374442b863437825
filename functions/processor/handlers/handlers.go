// Package handlers lists the business handlers the processor runs. Each team
// owns a package under functions/processor/handlers/ exposing
// Register(r *process.Registry, ...) and is added to [Register] explicitly:
// no init() self-registration, no blank imports.
package handlers

import (
	"log/slog"
	"net/http"

	"github.com/hookwall/hookwall/shared/process"
)

// Deps are the dependencies the teams' handlers share, built once per cold
// start in main.
type Deps struct {
	// Logger is the function's logger.
	Logger *slog.Logger
	// HTTPClient is for calls outside steps (inside a step use Event.HTTPClient).
	HTTPClient *http.Client
}

// Register adds every team's handlers to r. It panics on a duplicate handler
// name, so a test that calls it turns that into a CI failure.
func Register(r *process.Registry, deps Deps) {
	_ = deps
	// Teams add their Register calls here, one line each, e.g.
	//   crm.Register(r, crm.New(deps.HTTPClient))
}

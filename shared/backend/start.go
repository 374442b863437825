package backend

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/aws/aws-sdk-go-v2/config"

	"github.com/hookwall/hookwall/shared/dispatch"
	"github.com/hookwall/hookwall/shared/obs"
	"github.com/hookwall/hookwall/shared/process"
)

// MetricsNamespace is the EMF namespace of the engines' metrics.
const MetricsNamespace = "Hookwall"

// Engine is what the cold start of either engine builds before its engine:
// the backend, the function's EMF metrics and the teams' handler registry.
type Engine struct {
	*Backend
	// Metrics writes the function's EMF metrics (namespace MetricsNamespace,
	// dimension Function = Config.Function).
	Metrics *obs.Metrics
	// Registry holds the teams' handlers, with their settings read.
	Registry *process.Registry
}

// Start is the cold start the processor and the compensator share: it loads
// the backend of c (see [Load]), opens the EMF metrics of c.Function on
// metricsOut and builds the handler registry (dispatch.BuildRegistry: register
// run with the settings the teams declare read through getenv and with
// [Backend.TeamDeps]; an invalid setting fails the start, naming it).
// Errors name c.Function.
func Start(ctx context.Context, c Config, register func(*process.Registry), getenv func(string) string,
	logger *slog.Logger, metricsOut io.Writer, optFns ...func(*config.LoadOptions) error) (*Engine, error) {
	b, err := Load(ctx, c, logger, optFns...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.Function, err)
	}
	reg, err := dispatch.BuildRegistry(register, getenv, b.TeamDeps()...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.Function, err)
	}
	metrics := obs.NewMetrics(metricsOut, MetricsNamespace, map[string]string{"Function": c.Function})
	return &Engine{Backend: b, Metrics: metrics, Registry: reg}, nil
}

package backend

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"

	"github.com/aws/aws-sdk-go-v2/config"

	"github.com/hookwall/hookwall/shared/aws/awsconf"
	"github.com/hookwall/hookwall/shared/base/obs"
	"github.com/hookwall/hookwall/shared/config/setting"
	"github.com/hookwall/hookwall/shared/engine/platform"
	"github.com/hookwall/hookwall/shared/engine/process"
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
// metricsOut and builds the handler registry (platform.Build: the teams'
// settings read through getenv, their Register run with [Backend.TeamDeps];
// an invalid setting fails the start, naming it).
// When awsconf.RecordEnv is set, the runtime records name the teams'
// resources too ([TeamResources]). Errors name c.Function.
func Start(ctx context.Context, c Config, teams []platform.Team, getenv func(string) string,
	logger *slog.Logger, metricsOut io.Writer, optFns ...func(*config.LoadOptions) error) (*Engine, error) {
	if awsconf.RecordTo() != "" {
		teams, err := TeamResources(teams, getenv)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.Function, err)
		}
		maps.Copy(teams, c.Resources)
		c.Resources = teams
	}
	b, err := Load(ctx, c, logger, optFns...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.Function, err)
	}
	reg, err := platform.Build(getenv, b.TeamDeps(), teams...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.Function, err)
	}
	metrics := obs.NewMetrics(metricsOut, MetricsNamespace, map[string]string{"Function": c.Function})
	return &Engine{Backend: b, Metrics: metrics, Registry: reg}, nil
}

// TeamResources returns the logical names of the resources the teams'
// settings name, for the runtime records: every handler setting the teams
// declare (platform.Settings, as cmd/hookwall-gen reads them), valued
// through getenv (nil: os.Getenv) or its default, maps its value to its
// template parameter (APPROVALS_TABLE=approvals → "approvals":
// "ApprovalsTable", setting.ParameterName), the name
// iam/README.md gives a team's resource. A value that names no AWS
// resource (a URL) is never met in a call, so it does no harm.
func TeamResources(teams []platform.Team, getenv func(string) string) (map[string]string, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	settings, err := platform.Settings(teams...)
	if err != nil {
		return nil, err
	}
	names := map[string]string{}
	for _, s := range settings {
		v := getenv(s.Name)
		if v == "" {
			v = s.Default
		}
		if v != "" {
			names[v] = setting.ParameterName(s.Name)
		}
	}
	return names, nil
}

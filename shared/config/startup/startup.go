package startup

import (
	"context"
	"io"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/config"

	"github.com/hookwall/hookwall/shared/base/obs"
	"github.com/hookwall/hookwall/shared/base/release"
	"github.com/hookwall/hookwall/shared/config/settings"
)

// Settings are the functions' settings types; each embeds
// [settings.Common], whose log level Run uses.
type Settings interface {
	settings.Receiver | settings.Processor | settings.Compensator | settings.PreTraffic
}

// Load reads a function's settings from getenv (settings.LoadProcessor; see
// [WithDefaults] for the loaders that take the function's defaults).
type Load[S Settings] func(getenv func(string) string) (S, settings.Warnings, error)

// WithDefaults returns the Load of a loader that takes the function's
// defaults (settings.LoadReceiver, settings.LoadCompensator) with def.
func WithDefaults[S Settings, D any](load func(getenv func(string) string, def D) (S, settings.Warnings, error), def D) Load[S] {
	return func(getenv func(string) string) (S, settings.Warnings, error) { return load(getenv, def) }
}

// Build builds a function's handler from its settings: it logs to logger
// and writes EMF metrics to metricsOut (intake.Build and the wirings' Build).
type Build[S Settings, H any] func(ctx context.Context, s S, logger *slog.Logger, metricsOut io.Writer,
	optFns ...func(*config.LoadOptions) error) (H, error)

// Run is the main function of the Lambda function name: load from the
// process environment, a logger at the settings' level, the warnings
// logged, build, the start-up line "<name>: started" with the release's
// version logged, then lambda.Start with handler(h) (the handler's method
// for the function's event source, such as h.Handle). It does not return:
// a failure to load or build is logged as "<name>: start" and exits 1.
func Run[S Settings, H any](name string, load Load[S], build Build[S, H], handler func(H) any) {
	s, warnings, err := load(os.Getenv)
	log := obs.NewLogger(os.Stdout, common(s).LogLevel)
	warnings.Log(log)
	var h H
	if err == nil {
		// Run is main's body: the cold start's context is the process's.
		h, err = build(context.Background(), s, log, os.Stdout)
	}
	if err != nil {
		log.Error(name+": start", slog.Any("error", err))
		os.Exit(1)
	}
	logStarted(log, name)
	lambda.Start(handler(h))
}

// logStarted logs the start-up line of the function name: "<name>: started"
// with the release it runs (release.Version), so that the logs of two
// releases running at once (a gradual deployment, a rollback) tell them apart.
func logStarted(log *slog.Logger, name string) {
	log.Info(name+": started", slog.String("version", release.Version))
}

// common returns the settings every function reads, embedded in s.
func common[S Settings](s S) settings.Common {
	switch s := any(s).(type) {
	case settings.Receiver:
		return s.Common
	case settings.Processor:
		return s.Common
	case settings.Compensator:
		return s.Common
	case settings.PreTraffic:
		return s.Common
	}
	panic("startup: unreachable: Settings lists every settings type") // the constraint allows no other
}

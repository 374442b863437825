package wiring

import (
	"context"
	"io"
	"log/slog"

	"github.com/aws/aws-sdk-go-v2/config"

	"github.com/hookwall/hookwall/functions/processor/handlers"
	"github.com/hookwall/hookwall/shared/aws/sqsbatch"
	"github.com/hookwall/hookwall/shared/config/settings"
	"github.com/hookwall/hookwall/shared/engine/dispatch"
	"github.com/hookwall/hookwall/shared/ops/backend"
)

// Build wires the processor from s: it loads the AWS configuration once
// (config.LoadDefaultConfig with optFns; endpoints come from the SDK's own
// AWS_ENDPOINT_URL_* variables) with the SDK's log lines sent to logger, then
// the tenants document, the table, the queues, the outcome bus, the
// targets' gate (breakers and pauses, from s.Targets), the teams' handlers
// (functions/processor/handlers, with the settings they declare read
// through s.Getenv: an invalid one fails the build, naming it), all through
// backend.Start as the compensator's, and the dispatcher. The handler logs
// to logger and writes EMF metrics to metricsOut.
func Build(ctx context.Context, s settings.Processor, logger *slog.Logger, metricsOut io.Writer,
	optFns ...func(*config.LoadOptions) error) (*Handler, error) {
	e, err := backend.Start(ctx, backend.EngineConfig("processor", s.Common, s.DLQURL, s.EventBusName, s.Targets), handlers.Teams, s.Getenv, logger, metricsOut, optFns...)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, h := range dispatch.Handlers(e.Registry) {
		names = append(names, h.Name)
	}
	logger.Info("handlers registered", slog.Any("handlers", names))
	d, err := dispatch.New(dispatch.Config{Registry: e.Registry, Store: e.Table, DLQ: e.DLQ, UnhandledToDLQ: s.UnhandledToDLQ,
		Gate: e.Gate, Ops: backend.Ops(e.Bus),
		Kernel: dispatch.Kernel{Queue: e.Queue, Publisher: e.Publisher, Outcomes: s.OutcomeEvents, Logger: logger, Metrics: e.Metrics,
			LeaseDuration: s.Lease, MaxAttempts: s.MaxAttempts, RetryBase: s.RetryBase, RetryCap: s.RetryCap,
			Retention: s.Retention}})
	if err != nil {
		return nil, err
	}
	// A message of a newer format goes back to the queue, delayed, for the newer release.
	return &Handler{batch: sqsbatch.New(d, s.Concurrency).DeferNewer(e.Queue, logger, e.Metrics), metrics: e.Metrics, log: logger}, nil
}

package wiring

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/aws/aws-sdk-go-v2/config"

	"github.com/hookwall/hookwall/functions/processor/handlers"
	"github.com/hookwall/hookwall/shared/backend"
	"github.com/hookwall/hookwall/shared/dispatch"
	"github.com/hookwall/hookwall/shared/obs"
	"github.com/hookwall/hookwall/shared/settings"
	"github.com/hookwall/hookwall/shared/sqsbatch"
	"github.com/hookwall/hookwall/shared/targets"
)

// Build wires the processor from s: it loads the AWS configuration once
// (config.LoadDefaultConfig with optFns; endpoints come from the SDK's own
// AWS_ENDPOINT_URL_* variables) with the SDK's log lines sent to logger, then
// the tenants document, the table, the queues, the outcome bus, the
// targets' gate (breakers and pauses, HOOKWALL_BREAKER_* and
// HOOKWALL_TARGET_RATE read through s.Getenv), the teams' handlers (functions/processor/handlers, with the settings they declare
// read through s.Getenv: an invalid one fails the build, naming it) and the
// dispatcher. The handler logs to logger and writes EMF
// metrics to metricsOut.
func Build(ctx context.Context, s settings.Processor, logger *slog.Logger, metricsOut io.Writer,
	optFns ...func(*config.LoadOptions) error) (*Handler, error) {
	ts, err := settings.LoadTargets(s.Getenv)
	if err != nil {
		return nil, fmt.Errorf("processor: %w", err)
	}
	b, err := backend.Load(ctx, backend.Config{Function: "processor", TenantsFile: s.TenantsFile, TenantsSecretARN: s.TenantsSecretARN,
		TableName: s.TableName, QueueURL: s.QueueURL, DLQURL: s.DLQURL, EventBusName: s.EventBusName,
		Targets: targets.Config{}.With(ts)}, logger, optFns...)
	if err != nil {
		return nil, err
	}
	metrics := obs.NewMetrics(metricsOut, "Hookwall", map[string]string{"Function": "processor"})
	reg, err := dispatch.BuildRegistry(handlers.Register, s.Getenv, b.TeamDeps()...)
	if err != nil {
		return nil, fmt.Errorf("processor: %w", err)
	}
	var names []string
	for _, h := range dispatch.Handlers(reg) {
		names = append(names, h.Name)
	}
	logger.Info("handlers registered", slog.Any("handlers", names))
	d, err := dispatch.New(dispatch.Config{Registry: reg, Store: b.Table, DLQ: b.DLQ, UnhandledToDLQ: s.UnhandledToDLQ,
		Gate: backend.Gate(b.Gate), Ops: backend.Ops(b.Bus),
		Kernel: dispatch.Kernel{Queue: b.Queue, Publisher: b.Publisher, Logger: logger, Metrics: metrics,
			LeaseDuration: s.Lease, MaxAttempts: s.MaxAttempts, RetryBase: s.RetryBase, RetryCap: s.RetryCap,
			Retention: s.Retention}})
	if err != nil {
		return nil, err
	}
	return &Handler{batch: sqsbatch.New(d, s.Concurrency), metrics: metrics, log: logger}, nil
}

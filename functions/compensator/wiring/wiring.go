package wiring

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/aws/aws-sdk-go-v2/config"

	"github.com/hookwall/hookwall/functions/processor/handlers"
	"github.com/hookwall/hookwall/shared/backend"
	"github.com/hookwall/hookwall/shared/compensate"
	"github.com/hookwall/hookwall/shared/dispatch"
	"github.com/hookwall/hookwall/shared/drain"
	"github.com/hookwall/hookwall/shared/obs"
	"github.com/hookwall/hookwall/shared/settings"
	"github.com/hookwall/hookwall/shared/sweep"
	"github.com/hookwall/hookwall/shared/targets"
)

// Defaults returns the sweeper's defaults for [settings.LoadCompensator],
// from shared/sweep's constants (settings reads the engines' own from the
// kernel).
func Defaults() settings.CompensatorDefaults {
	sd := sweep.Defaults()
	return settings.CompensatorDefaults{SweepLimit: sd.Limit, ReenqueueGrace: sd.Grace, SweepStuckAfter: sd.StuckAfter}
}

// Build wires the compensator from s: it loads the AWS configuration once
// (config.LoadDefaultConfig with optFns; endpoints come from the SDK's own
// AWS_ENDPOINT_URL_* variables) with the SDK's log lines sent to logger, then
// the tenants document, the table, the queues, the outcome bus, the
// processor's handler registry (functions/processor/handlers, the same
// teams with the same settings, read through s.Getenv, for their
// compensations), the compensator
// and the sweeper with the targets' gate and the drain of held events. The handler logs to logger and writes EMF metrics to
// metricsOut.
func Build(ctx context.Context, s settings.Compensator, logger *slog.Logger, metricsOut io.Writer,
	optFns ...func(*config.LoadOptions) error) (*Handler, error) {
	ts, err := settings.LoadTargets(s.Getenv)
	if err != nil {
		return nil, fmt.Errorf("compensator: %w", err)
	}
	b, err := backend.Load(ctx, backend.Config{Function: "compensator", TenantsFile: s.TenantsFile, TenantsSecretARN: s.TenantsSecretARN,
		TableName: s.TableName, QueueURL: s.QueueURL, DLQURL: s.DLQURL, EventBusName: s.EventBusName,
		Targets: targets.Config{}.With(ts)}, logger, optFns...)
	if err != nil {
		return nil, err
	}
	sweepTable, err := b.NewTable("sweeper")
	if err != nil {
		return nil, err
	}
	metrics := obs.NewMetrics(metricsOut, "Hookwall", map[string]string{"Function": "compensator"})
	reg, err := dispatch.BuildRegistry(handlers.Register, s.Getenv, b.TeamDeps()...)
	if err != nil {
		return nil, fmt.Errorf("compensator: %w", err)
	}
	comp, err := compensate.New(compensate.Config{
		Registry: reg, Store: b.Table, Requeue: b.Queue,
		Kernel: compensate.Kernel{Queue: b.DLQ, Publisher: b.Publisher, Logger: logger, Metrics: metrics,
			LeaseDuration: s.Lease, MaxAttempts: s.CompensationAttempts, RetryBase: s.RetryBase, RetryCap: s.RetryCap,
			Retention: s.Retention},
	})
	if err != nil {
		return nil, err
	}
	drainer, err := drain.New(drain.Config{Store: sweepTable, Gate: b.Gate, Queue: b.Queue, Logger: logger})
	if err != nil {
		return nil, err
	}
	sw, err := sweep.New(sweep.Config{
		Store: sweepTable, Queue: b.Queue, DLQ: b.DLQ, Logger: logger, Metrics: metrics,
		Grace: s.ReenqueueGrace, StuckAfter: s.SweepStuckAfter, RetryCap: s.RetryCap, Limit: s.SweepLimit,
		Gate: b.Gate, Drain: drainer, Retention: s.Retention,
	})
	if err != nil {
		return nil, err
	}
	return New(comp, sw, 0, metrics, logger), nil
}

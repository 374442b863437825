package wiring

import (
	"context"
	"io"
	"log/slog"

	"github.com/aws/aws-sdk-go-v2/config"

	"github.com/hookwall/hookwall/functions/processor/handlers"
	"github.com/hookwall/hookwall/shared/config/settings"
	"github.com/hookwall/hookwall/shared/engine/compensate"
	"github.com/hookwall/hookwall/shared/engine/drain"
	"github.com/hookwall/hookwall/shared/engine/sweep"
	"github.com/hookwall/hookwall/shared/ops/backend"
	"github.com/hookwall/hookwall/shared/ops/recovery"
)

// Defaults returns the sweeper's defaults for [settings.LoadCompensator],
// from shared/engine/sweep's constants (settings reads the engines' own from the
// kernel).
func Defaults() settings.CompensatorDefaults {
	sd := sweep.Defaults()
	return settings.CompensatorDefaults{SweepLimit: sd.Limit, SweepLag: sd.SweepLag, SweepMaxPassed: sd.MaxPassed,
		ReenqueueGrace: sd.Grace, SweepStuckAfter: sd.StuckAfter}
}

// Build wires the compensator from s: it loads the AWS configuration once
// (config.LoadDefaultConfig with optFns; endpoints come from the SDK's own
// AWS_ENDPOINT_URL_* variables) with the SDK's log lines sent to logger, then
// the tenants document, the table, the queues, the outcome bus, the
// targets' gate (from s.Targets), the processor's handler registry
// (functions/processor/handlers, the same teams with the same settings,
// read through s.Getenv, for their compensations), all through
// backend.Start as the processor's, then the compensator and the sweeper
// with the targets' gate, the drain of held events and the detached
// recovery jobs. The handler logs to logger and writes EMF metrics (the
// sweeper's circuit metric too) to metricsOut.
func Build(ctx context.Context, s settings.Compensator, logger *slog.Logger, metricsOut io.Writer,
	optFns ...func(*config.LoadOptions) error) (*Handler, error) {
	e, err := backend.Start(ctx, backend.EngineConfig("compensator", s.Common, s.DLQURL, s.EventBusName, s.Targets), handlers.Teams, s.Getenv, logger, metricsOut, optFns...)
	if err != nil {
		return nil, err
	}
	sweepTable, err := e.NewTable("sweeper")
	if err != nil {
		return nil, err
	}
	comp, err := compensate.New(compensate.Config{
		Registry: e.Registry, Store: e.Table, Requeue: e.Queue,
		Kernel: compensate.Kernel{Queue: e.DLQ, Publisher: e.Publisher, Outcomes: s.OutcomeEvents, Logger: logger, Metrics: e.Metrics,
			LeaseDuration: s.Lease, MaxAttempts: s.CompensationAttempts, RetryBase: s.RetryBase, RetryCap: s.RetryCap,
			Retention: s.Retention},
	})
	if err != nil {
		return nil, err
	}
	drainer, err := drain.New(drain.Config{Store: sweepTable, Gate: e.Gate, Queue: e.Queue, Logger: logger})
	if err != nil {
		return nil, err
	}
	// The detached recovery jobs: their replays are kept at least the
	// retention (the CLI's foreground runs keep them the dedup window).
	jobs, err := recovery.New(recovery.Config{DB: e.DynamoDB, TableName: s.TableName, Store: sweepTable, Queue: e.Queue,
		Limiter: e.Gate, Ops: e.Bus, Window: s.Retention})
	if err != nil {
		return nil, err
	}
	sw, err := sweep.New(sweep.Config{
		Store: sweepTable, Queue: e.Queue, DLQ: e.DLQ, Logger: logger, Metrics: e.Metrics,
		Grace: s.ReenqueueGrace, StuckAfter: s.SweepStuckAfter, RetryCap: s.RetryCap, Limit: s.SweepLimit,
		SweepLag: s.SweepLag, MaxPassed: s.SweepMaxPassed,
		Gate: e.Gate, Drain: drainer, Retention: s.Retention,
		Jobs: jobs, MetricsOut: metricsOut, Namespace: backend.MetricsNamespace,
	})
	if err != nil {
		return nil, err
	}
	h := New(comp, sw, 0, e.Metrics, logger)
	h.batch.DeferNewer(e.DLQ, logger, e.Metrics) // a dead letter of a newer format goes back to the DLQ, delayed, for the newer release
	return h, nil
}

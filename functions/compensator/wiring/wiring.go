package wiring

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/hookwall/hookwall/functions/processor/handlers"
	"github.com/hookwall/hookwall/shared/awslog"
	"github.com/hookwall/hookwall/shared/bus"
	"github.com/hookwall/hookwall/shared/compensate"
	"github.com/hookwall/hookwall/shared/obs"
	"github.com/hookwall/hookwall/shared/process"
	"github.com/hookwall/hookwall/shared/queue"
	"github.com/hookwall/hookwall/shared/settings"
	"github.com/hookwall/hookwall/shared/store"
	"github.com/hookwall/hookwall/shared/sweep"
	"github.com/hookwall/hookwall/shared/tenants"
)

// Defaults returns the compensator's defaults for
// [settings.LoadCompensator], from the engines' constants.
func Defaults() settings.CompensatorDefaults {
	sd := sweep.Defaults()
	return settings.CompensatorDefaults{
		Lease:                compensate.DefaultLeaseDuration,
		CompensationAttempts: compensate.DefaultMaxAttempts,
		RetryBase:            compensate.DefaultRetryBase,
		RetryCap:             compensate.DefaultRetryCap,
		Retention:            compensate.DefaultRetention,
		SweepLimit:           sd.Limit,
		ReenqueueGrace:       sd.Grace,
		SweepStuckAfter:      sd.StuckAfter,
	}
}

// Build wires the compensator from s: it loads the AWS configuration once
// (config.LoadDefaultConfig with optFns; endpoints come from the SDK's own
// AWS_ENDPOINT_URL_* variables) with the SDK's log lines sent to logger, then
// the tenants document, the table, the queues, the outcome bus, the
// processor's handler registry (functions/processor/handlers, the same
// teams with the same settings, for their compensations), the compensator
// and the sweeper. The handler logs to logger and writes EMF metrics to
// metricsOut.
func Build(ctx context.Context, s settings.Compensator, logger *slog.Logger, metricsOut io.Writer,
	optFns ...func(*config.LoadOptions) error) (*Handler, error) {
	awsCfg, err := config.LoadDefaultConfig(ctx, append([]func(*config.LoadOptions) error{
		config.WithLogger(awslog.New(logger)),
	}, optFns...)...)
	if err != nil {
		return nil, fmt.Errorf("load AWS config: %w", err)
	}
	doc, err := tenants.Load(ctx, tenants.Source{File: s.TenantsFile, SecretARN: s.TenantsSecretARN,
		Secrets: tenants.SecretsManager{Client: secretsmanager.NewFromConfig(awsCfg)}})
	if err != nil {
		return nil, err
	}
	db := dynamodb.NewFromConfig(awsCfg)
	table, err := store.New(store.Config{Client: db, TableName: s.TableName, Function: "compensator"})
	if err != nil {
		return nil, err
	}
	sweepTable, err := store.New(store.Config{Client: db, TableName: s.TableName, Function: "sweeper"})
	if err != nil {
		return nil, err
	}
	sqsClient := sqs.NewFromConfig(awsCfg)
	mainQueue, err := queue.New(queue.Config{Client: sqsClient, URL: s.QueueURL})
	if err != nil {
		return nil, err
	}
	dlq, err := queue.New(queue.Config{Client: sqsClient, URL: s.DLQURL})
	if err != nil {
		return nil, err
	}
	pub, err := bus.New(bus.Config{Client: eventbridge.NewFromConfig(awsCfg), BusName: s.EventBusName})
	if err != nil {
		return nil, err
	}
	var publisher process.Publisher
	if pub != nil { // a nil *bus.Publisher in the interface would not be nil
		publisher = pub
	}
	metrics := obs.NewMetrics(metricsOut, "Hookwall", map[string]string{"Function": "compensator"})
	reg := process.NewRegistry()
	handlers.Register(reg, handlers.Deps{
		Tenants: doc, DynamoDB: db, CRMLeadsURL: s.CRMLeadsURL, ApprovalsTable: s.ApprovalsTable})
	comp, err := compensate.New(compensate.Config{
		Registry: reg, Store: table, Queue: dlq, Publisher: publisher, Logger: logger, Metrics: metrics,
		LeaseDuration: s.Lease, MaxAttempts: s.CompensationAttempts, RetryBase: s.RetryBase, RetryCap: s.RetryCap,
		Retention: s.Retention,
	})
	if err != nil {
		return nil, err
	}
	sw, err := sweep.New(sweep.Config{
		Store: sweepTable, Queue: mainQueue, DLQ: dlq, Logger: logger, Metrics: metrics,
		Grace: s.ReenqueueGrace, StuckAfter: s.SweepStuckAfter, RetryCap: s.RetryCap, Limit: s.SweepLimit,
	})
	if err != nil {
		return nil, err
	}
	return New(comp, sw, 0, metrics, logger), nil
}

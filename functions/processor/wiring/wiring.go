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
	"github.com/hookwall/hookwall/shared/obs"
	"github.com/hookwall/hookwall/shared/process"
	"github.com/hookwall/hookwall/shared/process/sqsbatch"
	"github.com/hookwall/hookwall/shared/queue"
	"github.com/hookwall/hookwall/shared/settings"
	"github.com/hookwall/hookwall/shared/store"
	"github.com/hookwall/hookwall/shared/tenants"
)

// Defaults returns the processor's defaults for [settings.LoadProcessor],
// from the engine's constants.
func Defaults() settings.ProcessorDefaults {
	return settings.ProcessorDefaults{
		Concurrency: sqsbatch.DefaultConcurrency,
		Lease:       process.DefaultLeaseDuration,
		RetryBase:   process.DefaultRetryBase,
		RetryCap:    process.DefaultRetryCap,
		MaxAttempts: process.DefaultMaxAttempts,
		Retention:   process.DefaultRetention,
	}
}

// Build wires the processor from s: it loads the AWS configuration once
// (config.LoadDefaultConfig with optFns; endpoints come from the SDK's own
// AWS_ENDPOINT_URL_* variables) with the SDK's log lines sent to logger, then
// the tenants document, the table, the queues, the outcome bus, the teams'
// handlers and the dispatcher. The handler logs to logger and writes EMF
// metrics to metricsOut.
func Build(ctx context.Context, s settings.Processor, logger *slog.Logger, metricsOut io.Writer,
	optFns ...func(*config.LoadOptions) error) (*Handler, error) {
	awsCfg, err := config.LoadDefaultConfig(ctx, append([]func(*config.LoadOptions) error{
		config.WithLogger(awslog.New(logger)), // the SDK's own lines as JSON, with the request's attributes
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
	table, err := store.New(store.Config{Client: db, TableName: s.TableName, Function: "processor"})
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
	metrics := obs.NewMetrics(metricsOut, "Hookwall", map[string]string{"Function": "processor"})
	reg := process.NewRegistry()
	handlers.Register(reg, handlers.Deps{
		Tenants: doc, DynamoDB: db, CRMLeadsURL: s.CRMLeadsURL, ApprovalsTable: s.ApprovalsTable})
	d, err := process.New(process.Config{
		Registry: reg, Store: table, Queue: mainQueue, DLQ: dlq, Publisher: publisher,
		Logger: logger, Metrics: metrics,
		LeaseDuration: s.Lease, MaxAttempts: s.MaxAttempts, RetryBase: s.RetryBase, RetryCap: s.RetryCap,
		Retention: s.Retention, UnhandledToDLQ: s.UnhandledToDLQ,
	})
	if err != nil {
		return nil, err
	}
	return &Handler{batch: sqsbatch.New(d, s.Concurrency), metrics: metrics, log: logger}, nil
}

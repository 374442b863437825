// Command processor is the processor Lambda: it consumes the events queue in
// batches and runs the registered business handlers under a lease (see
// shared/process). main reads the environment into a Config and wires; the
// work is in shared/.
//
// Environment:
//
//	TABLE_NAME             events table (required)
//	QUEUE_URL              main queue, for retry visibility (required)
//	DLQ_URL                dead-letter queue (required)
//	EVENT_BUS_NAME         EventBridge bus for outcome events (optional; empty: off)
//	LOG_LEVEL              debug, info (default), warn, error
//	PROCESSOR_CONCURRENCY  messages of one batch processed at once (default 10)
//	LEASE_SECONDS          lease length; heartbeat every third (default 60)
//	RETRY_BASE_SECONDS     retry backoff base (default 2)
//	RETRY_CAP_SECONDS      retry backoff cap, at most 43200 (default 900)
//	MAX_ATTEMPTS           attempts before FAILED, for handlers without their own (default 5);
//	                       keep the queue's maxReceiveCount above it
//	RETENTION_DAYS         days a SUCCEEDED record is kept (default 7)
//	UNHANDLED_TO_DLQ       true: events without a handler go to the DLQ (default false: acknowledged)
//	HOOKWALL_TENANTS_FILE  tenants document, a local path; or
//	TENANTS_SECRET_ARN     tenants document, a Secrets Manager secret (exactly one of the
//	                       two is required: the forwarding handler forwards the events of
//	                       the tenants that have "forward" configured)
//	CRM_LEADS_URL          the CRM's leads API for the crm handlers (optional; empty: crm off)
//	APPROVALS_TABLE        the approvals team's DynamoDB table (optional; empty: approvals off)
//
// AWS endpoints come from the SDK's own AWS_ENDPOINT_URL_DYNAMODB,
// AWS_ENDPOINT_URL_SQS and AWS_ENDPOINT_URL_EVENTBRIDGE.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/hookwall/hookwall/functions/processor/handlers"
	"github.com/hookwall/hookwall/shared/awslog"
	"github.com/hookwall/hookwall/shared/bus"
	hwconfig "github.com/hookwall/hookwall/shared/config"
	"github.com/hookwall/hookwall/shared/obs"
	"github.com/hookwall/hookwall/shared/process"
	"github.com/hookwall/hookwall/shared/process/sqsbatch"
	"github.com/hookwall/hookwall/shared/queue"
	"github.com/hookwall/hookwall/shared/store"
)

// Config is the processor's configuration, read from the environment.
type Config struct {
	TableName      string        // TABLE_NAME (required)
	QueueURL       string        // QUEUE_URL (required)
	DLQURL         string        // DLQ_URL (required)
	EventBusName   string        // EVENT_BUS_NAME (optional; empty: publishing off)
	LogLevel       slog.Level    // LOG_LEVEL (optional; default info)
	Concurrency    int           // PROCESSOR_CONCURRENCY (optional; default 10)
	Lease          time.Duration // LEASE_SECONDS (optional; default 60)
	RetryBase      time.Duration // RETRY_BASE_SECONDS (optional; default 2)
	RetryCap       time.Duration // RETRY_CAP_SECONDS (optional; default 900)
	MaxAttempts    int           // MAX_ATTEMPTS (optional; default 5)
	Retention      time.Duration // RETENTION_DAYS (optional; default 7)
	UnhandledToDLQ bool          // UNHANDLED_TO_DLQ (optional; default false)
	// TenantsFile (HOOKWALL_TENANTS_FILE) or TenantsSecretARN
	// (TENANTS_SECRET_ARN): exactly one is required, checked by config.Load
	// at start-up.
	TenantsFile      string
	TenantsSecretARN string
	CRMLeadsURL      string // CRM_LEADS_URL (optional; empty: crm handlers off)
	ApprovalsTable   string // APPROVALS_TABLE (optional; empty: approvals handlers off)
}

// configFromEnv reads the Config through getenv and validates it.
func configFromEnv(getenv func(string) string) (Config, error) {
	c := Config{
		TableName:    getenv("TABLE_NAME"),
		QueueURL:     getenv("QUEUE_URL"),
		DLQURL:       getenv("DLQ_URL"),
		EventBusName: getenv("EVENT_BUS_NAME"),
		LogLevel:     obs.ParseLevel(getenv("LOG_LEVEL")),

		TenantsFile:      getenv("HOOKWALL_TENANTS_FILE"),
		TenantsSecretARN: getenv("TENANTS_SECRET_ARN"),
		CRMLeadsURL:      getenv("CRM_LEADS_URL"),
		ApprovalsTable:   getenv("APPROVALS_TABLE"),
	}
	var errs []error
	need := func(name, v string) {
		if v == "" {
			errs = append(errs, fmt.Errorf("%s is required", name))
		}
	}
	need("TABLE_NAME", c.TableName)
	need("QUEUE_URL", c.QueueURL)
	need("DLQ_URL", c.DLQURL)
	intVar := func(name string, def, lo, hi int) int {
		s := getenv(name)
		if s == "" {
			return def
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < lo || n > hi {
			errs = append(errs, fmt.Errorf("%s=%q: want an integer in [%d, %d]", name, s, lo, hi))
			return def
		}
		return n
	}
	c.Concurrency = intVar("PROCESSOR_CONCURRENCY", 10, 1, 100)
	c.Lease = time.Duration(intVar("LEASE_SECONDS", 60, 3, 900)) * time.Second
	c.RetryBase = time.Duration(intVar("RETRY_BASE_SECONDS", 2, 1, 43200)) * time.Second
	c.RetryCap = time.Duration(intVar("RETRY_CAP_SECONDS", 900, 1, 43200)) * time.Second
	c.MaxAttempts = intVar("MAX_ATTEMPTS", 5, 1, 100)
	c.Retention = time.Duration(intVar("RETENTION_DAYS", 7, 1, 365)) * 24 * time.Hour
	switch s := getenv("UNHANDLED_TO_DLQ"); s {
	case "", "false", "0":
	case "true", "1":
		c.UnhandledToDLQ = true
	default:
		errs = append(errs, fmt.Errorf("UNHANDLED_TO_DLQ=%q: want true or false", s))
	}
	if c.CRMLeadsURL != "" {
		if u, err := url.Parse(c.CRMLeadsURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, errors.New("CRM_LEADS_URL: want an absolute http(s) URL"))
		}
	}
	if c.RetryBase > c.RetryCap {
		errs = append(errs, errors.New("RETRY_BASE_SECONDS is above RETRY_CAP_SECONDS"))
	}
	return c, errors.Join(errs...)
}

func main() {
	cfg, err := configFromEnv(os.Getenv)
	log := obs.NewLogger(os.Stdout, cfg.LogLevel)
	if err != nil {
		log.Error("processor: configuration", slog.Any("error", err))
		os.Exit(1)
	}
	h, err := newHandler(context.Background(), cfg, log)
	if err != nil {
		log.Error("processor: start", slog.Any("error", err))
		os.Exit(1)
	}
	lambda.Start(h.Handle)
}

// newHandler wires the processor.
func newHandler(ctx context.Context, cfg Config, log *slog.Logger) (*Handler, error) {
	awsCfg, err := config.LoadDefaultConfig(ctx, config.WithLogger(awslog.New(log)))
	if err != nil {
		return nil, fmt.Errorf("load AWS config: %w", err)
	}
	tenants, err := hwconfig.Load(ctx, hwconfig.Source{File: cfg.TenantsFile, SecretARN: cfg.TenantsSecretARN,
		Secrets: hwconfig.SecretsManager{Client: secretsmanager.NewFromConfig(awsCfg)}})
	if err != nil {
		return nil, err
	}
	db := dynamodb.NewFromConfig(awsCfg)
	table, err := store.New(store.Config{Client: db, TableName: cfg.TableName})
	if err != nil {
		return nil, err
	}
	sqsClient := sqs.NewFromConfig(awsCfg)
	mainQueue, err := queue.New(queue.Config{Client: sqsClient, URL: cfg.QueueURL})
	if err != nil {
		return nil, err
	}
	dlq, err := queue.New(queue.Config{Client: sqsClient, URL: cfg.DLQURL})
	if err != nil {
		return nil, err
	}
	pub, err := bus.New(bus.Config{Client: eventbridge.NewFromConfig(awsCfg), BusName: cfg.EventBusName})
	if err != nil {
		return nil, err
	}
	var publisher process.Publisher
	if pub != nil {
		publisher = pub
	}
	metrics := obs.NewMetrics(os.Stdout, "Hookwall", map[string]string{"Function": "processor"})
	reg := process.NewRegistry()
	handlers.Register(reg, handlers.Deps{Logger: log, HTTPClient: &http.Client{Timeout: 10 * time.Second},
		Tenants: tenants, DynamoDB: db, CRMLeadsURL: cfg.CRMLeadsURL, ApprovalsTable: cfg.ApprovalsTable})
	d, err := process.New(process.Config{
		Registry: reg, Store: table, Queue: mainQueue, DLQ: dlq, Publisher: publisher,
		Logger: log, Metrics: metrics,
		LeaseDuration: cfg.Lease, MaxAttempts: cfg.MaxAttempts, RetryBase: cfg.RetryBase, RetryCap: cfg.RetryCap,
		Retention: cfg.Retention, UnhandledToDLQ: cfg.UnhandledToDLQ,
	})
	if err != nil {
		return nil, err
	}
	return &Handler{batch: sqsbatch.New(d, cfg.Concurrency), metrics: metrics, log: log}, nil
}

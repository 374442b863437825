package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	dbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/hookwall/hookwall/shared/aws/awsconf"
	"github.com/hookwall/hookwall/shared/aws/bus"
	"github.com/hookwall/hookwall/shared/aws/queue"
	"github.com/hookwall/hookwall/shared/aws/stamp"
	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/config/settings"
	"github.com/hookwall/hookwall/shared/config/tenants"
	"github.com/hookwall/hookwall/shared/engine/drain"
	"github.com/hookwall/hookwall/shared/ops/control"
	"github.com/hookwall/hookwall/shared/ops/recovery"
	"github.com/hookwall/hookwall/shared/state/audit"
	"github.com/hookwall/hookwall/shared/state/store"
	"github.com/hookwall/hookwall/shared/state/targets"
	"github.com/hookwall/hookwall/shared/state/targets/targetsdb"
)

// eventStore is what the commands need of the events table (store.Table).
type eventStore interface {
	audit.Reader
	// Replay sends a record back to RECEIVED (see store.Table.Replay).
	Replay(ctx context.Context, key string, opts store.ReplayOptions) (store.ReplayResult, error)
	// Stuck pages through one shard of the sweep index (every record, terminal
	// ones included, until TTL deletes it).
	Stuck(ctx context.Context, shard int, after, before time.Time, limit int32,
		cursor map[string]dbtypes.AttributeValue) ([]store.StuckRecord, map[string]dbtypes.AttributeValue, error)
}

// scanner lists records by a bounded Scan: terminal records are in no index.
type scanner interface {
	scanStatus(ctx context.Context, q scanQuery) (scanResult, error)
}

// sender sends envelopes to the main queue (queue.Queue): batched, large
// payloads left in the record as the receiver does.
type sender interface {
	Send(ctx context.Context, envs []webhook.Envelope) error
}

// sqsAPI is what the dlq commands need of SQS.
type sqsAPI interface {
	ReceiveMessage(ctx context.Context, in *sqs.ReceiveMessageInput, optFns ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error)
	SendMessageBatch(ctx context.Context, in *sqs.SendMessageBatchInput, optFns ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error)
	DeleteMessageBatch(ctx context.Context, in *sqs.DeleteMessageBatchInput, optFns ...func(*sqs.Options)) (*sqs.DeleteMessageBatchOutput, error)
	ChangeMessageVisibilityBatch(ctx context.Context, in *sqs.ChangeMessageVisibilityBatchInput, optFns ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityBatchOutput, error)
	GetQueueAttributes(ctx context.Context, in *sqs.GetQueueAttributesInput, optFns ...func(*sqs.Options)) (*sqs.GetQueueAttributesOutput, error)
	StartMessageMoveTask(ctx context.Context, in *sqs.StartMessageMoveTaskInput, optFns ...func(*sqs.Options)) (*sqs.StartMessageMoveTaskOutput, error)
	ListMessageMoveTasks(ctx context.Context, in *sqs.ListMessageMoveTasksInput, optFns ...func(*sqs.Options)) (*sqs.ListMessageMoveTasksOutput, error)
}

// backend holds the clients a command uses; a field is nil when the
// variable it needs is unset.
type backend struct {
	events  eventStore           // TABLE_NAME
	scan    scanner              // TABLE_NAME
	queue   sender               // QUEUE_URL
	sqs     sqsAPI               // any queue
	secrets tenants.SecretGetter // TENANTS_SECRET_ARN
	gate    controller           // TABLE_NAME: the targets' breakers, buckets and pauses
	held    control.HeldCounter  // TABLE_NAME
	drain   control.Drainer      // TABLE_NAME and QUEUE_URL: resume's drain
	jobs    recoverer            // TABLE_NAME and QUEUE_URL: recovery jobs
	ops     control.Publisher    // EVENT_BUS_NAME (nil: none)
}

// openAWS connects to AWS as the functions do: the SDK's default
// configuration (AWS_REGION, credentials, AWS_ENDPOINT_URL_*), with
// override's values (the local runner's, for variables the environment
// leaves unset) in place of those variables. The SDK's own log lines are
// dropped: every failure comes back as an error.
func openAWS(ctx context.Context, s settings.CLI, override map[string]string) (*backend, error) {
	opts := []func(*config.LoadOptions) error{config.WithLogger(awsconf.NewSDKLogger(slog.New(slog.DiscardHandler)))}
	if r := override["AWS_REGION"]; r != "" {
		opts = append(opts, config.WithRegion(r))
	}
	if id, secret := override["AWS_ACCESS_KEY_ID"], override["AWS_SECRET_ACCESS_KEY"]; id != "" && secret != "" {
		opts = append(opts, config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider(id, secret, override["AWS_SESSION_TOKEN"])))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, &configError{problems: []string{fmt.Sprintf("load the AWS configuration: %v", err)}}
	}
	cfg.APIOptions = append(cfg.APIOptions, stamp.Install) // format version and release on every item written
	if cfg.Region == "" {
		return nil, &configError{problems: []string{"no AWS region: set AWS_REGION (locally: us-east-1) or use a profile with a region"}}
	}
	dbEndpoint := func(o *dynamodb.Options) {
		if u := override["AWS_ENDPOINT_URL_DYNAMODB"]; u != "" {
			o.BaseEndpoint = aws.String(u)
		}
	}
	sqsEndpoint := func(o *sqs.Options) {
		if u := override["AWS_ENDPOINT_URL_SQS"]; u != "" {
			o.BaseEndpoint = aws.String(u)
		}
	}
	b := &backend{sqs: sqs.NewFromConfig(cfg, sqsEndpoint), secrets: tenants.SecretsManager{Client: secretsmanager.NewFromConfig(cfg)}}
	if s.TableName != "" {
		db := dynamodb.NewFromConfig(cfg, dbEndpoint)
		t, err := store.New(store.Config{Client: db, TableName: s.TableName, Function: "cli"})
		if err != nil {
			return nil, err
		}
		b.events = t
		b.scan = &tableScan{db: db, name: s.TableName}
	}
	var q *queue.Queue
	if s.QueueURL != "" {
		if q, err = queue.New(queue.Config{Client: sqs.NewFromConfig(cfg, sqsEndpoint), URL: s.QueueURL}); err != nil {
			return nil, err
		}
		b.queue = q
	}
	ebEndpoint := func(o *eventbridge.Options) {
		if u := override["AWS_ENDPOINT_URL_EVENTBRIDGE"]; u != "" {
			o.BaseEndpoint = aws.String(u)
		}
	}
	ops, err := bus.New(bus.Config{Client: eventbridge.NewFromConfig(cfg, ebEndpoint), BusName: s.EventBusName})
	if err != nil {
		return nil, err
	}
	if ops != nil {
		b.ops = ops
	}
	if s.TableName != "" && q != nil {
		if err := b.openControl(cfg, dbEndpoint, s, q, ops); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// openControl opens the targets' state, the drain and the recovery jobs
// on the table and queue of s.
func (b *backend) openControl(cfg aws.Config, dbEndpoint func(*dynamodb.Options), s settings.CLI, q *queue.Queue, ops *bus.Publisher) error {
	db := dynamodb.NewFromConfig(cfg, dbEndpoint)
	t, err := store.New(store.Config{Client: db, TableName: s.TableName, Function: "cli"})
	if err != nil {
		return err
	}
	b.held = t
	gate, err := targetsdb.New(targetsdb.TableConfig{Client: db, TableName: s.TableName, Config: targets.Config{}.With(s.Targets)})
	if err != nil {
		return &configError{problems: []string{fmt.Sprintf("the targets' settings: %v", err)}}
	}
	b.gate = gate
	d, err := drain.New(drain.Config{Store: t, Gate: gate, Queue: q})
	if err != nil {
		return err
	}
	b.drain = d
	jc := recovery.Config{DB: db, TableName: s.TableName, Store: t, Queue: q, Limiter: gate, Window: s.DedupWindow}
	if ops != nil {
		jc.Ops = ops
	}
	jobs, err := recovery.New(jc)
	if err != nil {
		return err
	}
	b.jobs = jobs
	return nil
}

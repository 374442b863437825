package backend

import (
	"context"
	"log/slog"
	"maps"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/hookwall/hookwall/shared/aws/awsconf"
	"github.com/hookwall/hookwall/shared/aws/bus"
	"github.com/hookwall/hookwall/shared/aws/queue"
	"github.com/hookwall/hookwall/shared/config/settings"
	"github.com/hookwall/hookwall/shared/config/tenants"
	"github.com/hookwall/hookwall/shared/engine/platform"
	"github.com/hookwall/hookwall/shared/internal/kernel"
	"github.com/hookwall/hookwall/shared/state/store"
	"github.com/hookwall/hookwall/shared/state/targets"
	"github.com/hookwall/hookwall/shared/state/targets/targetsdb"
)

// Config names what [Load] connects to.
type Config struct {
	// Function names the writer in the table's history entries ("processor", "compensator").
	Function string
	// TenantsFile or TenantsSecretARN locate the tenants document.
	TenantsFile, TenantsSecretARN string
	// TableName is the events table; QueueURL and DLQURL are the main and
	// dead-letter queues (all required).
	TableName, QueueURL, DLQURL string
	// EventBusName is the outcome bus (optional; empty: publishing off).
	EventBusName string
	// Targets is the behaviour of the targets' breakers and buckets, kept
	// in the events table (zero fields: targets.Config's defaults).
	Targets targets.Config
	// Resources names, for the runtime records (awsconf.Recorder.Names),
	// the resources the function acts on besides the ones above, physical
	// name → logical name: the teams' ([Start] adds them from the handler
	// settings). Optional; unused unless awsconf.RecordEnv is set.
	Resources map[string]string
}

// EngineConfig is the Config of an engine, the processor or the compensator
// (named by function), from the settings both read: c's tenants document,
// table and main queue, the dead-letter queue, the outcome bus and the
// targets' settings t (over targets.Config's defaults).
func EngineConfig(function string, c settings.Common, dlqURL, eventBusName string, t settings.Targets) Config {
	return Config{Function: function, TenantsFile: c.TenantsFile, TenantsSecretARN: c.TenantsSecretARN,
		TableName: c.TableName, QueueURL: c.QueueURL, DLQURL: dlqURL, EventBusName: eventBusName,
		Targets: targets.Config{}.With(t)}
}

// Recorder is the awsconf.Recorder of c: c.Function, with its resources
// under their logical names (c.Resources first, so that the platform's
// names win over a team's setting naming the same resource).
func (c Config) Recorder() awsconf.Recorder {
	names := maps.Clone(c.Resources)
	if names == nil {
		names = map[string]string{}
	}
	maps.Copy(names, map[string]string{c.TableName: awsconf.EventsTable, c.QueueURL: awsconf.EventsQueue,
		c.DLQURL: awsconf.EventsDeadLetterQueue, c.EventBusName: awsconf.OutcomesBus, c.TenantsSecretARN: awsconf.TenantsSecret})
	delete(names, "")
	return awsconf.Recorder{Function: c.Function, Names: names}
}

// Backend is the AWS side of an engine.
type Backend struct {
	// AWS is the AWS configuration the clients were built from.
	AWS      aws.Config
	Tenants  *tenants.Tenants
	DynamoDB *dynamodb.Client
	// Table is the events table, writing as Config.Function.
	Table      *store.Table
	Queue, DLQ *queue.Queue
	// Publisher publishes outcome events (nil: publishing off).
	Publisher kernel.Publisher
	// Bus is the same publisher, for the operational events (nil:
	// publishing off).
	Bus *bus.Publisher
	// Gate is the targets' shared state (breakers, buckets, pauses) in the
	// events table.
	Gate *targetsdb.Table

	tableName string
}

// Load loads the AWS configuration once (config.LoadDefaultConfig with
// optFns; endpoints come from the SDK's own AWS_ENDPOINT_URL_* variables)
// with the SDK's log lines sent to logger and the calls recorded as
// c.Recorder() says when awsconf.RecordEnv is set, then the tenants
// document, the table, the queues, the outcome bus and the targets' gate
// of c.
func Load(ctx context.Context, c Config, logger *slog.Logger, optFns ...func(*config.LoadOptions) error) (*Backend, error) {
	awsCfg, err := awsconf.Load(ctx, logger, c.Recorder(), optFns...)
	if err != nil {
		return nil, err
	}
	b := &Backend{AWS: awsCfg, tableName: c.TableName}
	b.Tenants, err = tenants.Load(ctx, tenants.Source{File: c.TenantsFile, SecretARN: c.TenantsSecretARN,
		Secrets: tenants.SecretsManager{Client: secretsmanager.NewFromConfig(awsCfg)}})
	if err != nil {
		return nil, err
	}
	b.DynamoDB = dynamodb.NewFromConfig(awsCfg)
	if b.Table, err = b.NewTable(c.Function); err != nil {
		return nil, err
	}
	sqsClient := sqs.NewFromConfig(awsCfg)
	if b.Queue, err = queue.New(queue.Config{Client: sqsClient, URL: c.QueueURL}); err != nil {
		return nil, err
	}
	if b.DLQ, err = queue.New(queue.Config{Client: sqsClient, URL: c.DLQURL}); err != nil {
		return nil, err
	}
	pub, err := bus.New(bus.Config{Client: eventbridge.NewFromConfig(awsCfg), BusName: c.EventBusName})
	if err != nil {
		return nil, err
	}
	if pub != nil { // a nil *bus.Publisher in the interface would not be nil
		b.Publisher, b.Bus = pub, pub
	}
	if b.Gate, err = targetsdb.New(targetsdb.TableConfig{Client: b.DynamoDB, TableName: c.TableName, Config: c.Targets}); err != nil {
		return nil, err
	}
	return b, nil
}

// NewTable returns another handle on the events table, writing as function
// in the history entries.
func (b *Backend) NewTable(function string) (*store.Table, error) {
	return store.New(store.Config{Client: b.DynamoDB, TableName: b.tableName, Function: function})
}

// TeamDeps returns the dependencies the platform gives every team's
// Register (platform.Deps): the tenants document, the AWS configuration and
// the DynamoDB client.
func (b *Backend) TeamDeps() platform.Deps {
	d := platform.Deps{AWS: b.AWS}
	if b.Tenants != nil { // a nil *tenants.Tenants in the interface would not be nil
		d.Tenants = b.Tenants
	}
	if b.DynamoDB != nil {
		d.DynamoDB = b.DynamoDB
	}
	return d
}

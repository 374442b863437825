package intake

import (
	"context"
	"io"
	"log/slog"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/hookwall/hookwall/shared/aws/awsconf"
	"github.com/hookwall/hookwall/shared/aws/queue"
	"github.com/hookwall/hookwall/shared/base/obs"
	"github.com/hookwall/hookwall/shared/config/settings"
	"github.com/hookwall/hookwall/shared/config/tenants"
	"github.com/hookwall/hookwall/shared/engine/handoff"
	"github.com/hookwall/hookwall/shared/protocol/provider/wxmsg"
	"github.com/hookwall/hookwall/shared/state/store"
)

// Defaults returns the receiver's defaults for [settings.LoadReceiver], from
// this package's constants (the timestamp tolerance is the WeCom/WeChat
// window, which Standard Webhooks' default equals).
func Defaults() settings.ReceiverDefaults {
	return settings.ReceiverDefaults{
		DedupWindow:     DefaultDedupWindow,
		Budget:          DefaultBudget,
		MaxBody:         DefaultMaxBody,
		Tolerance:       wxmsg.DefaultTolerance,
		GraceMargin:     DefaultGraceMargin,
		EventAgeMargin:  DefaultEventAgeMargin,
		HandedOffBytes:  DefaultHandedOffBytes,
		HandedOffMargin: DefaultHandedOffMargin,
	}
}

// Build wires the receiver's Handler from s: it loads the AWS configuration
// once (config.LoadDefaultConfig with optFns; endpoints come from the SDK's
// own AWS_ENDPOINT_URL_* variables) with the SDK's log lines sent to logger
// (and the calls recorded as the receiver's when awsconf.RecordEnv is set),
// then the tenants document, the DynamoDB table and the SQS queue. The
// handler logs to logger and writes EMF metrics to metricsOut.
func Build(ctx context.Context, s settings.Receiver, logger *slog.Logger, metricsOut io.Writer,
	optFns ...func(*config.LoadOptions) error) (*Handler, error) {
	awsCfg, err := awsconf.Load(ctx, logger, awsconf.Recorder{Function: "receiver", Names: map[string]string{
		s.TableName: awsconf.EventsTable, s.QueueURL: awsconf.EventsQueue, s.TenantsSecretARN: awsconf.TenantsSecret}}, optFns...)
	if err != nil {
		return nil, err
	}
	doc, err := tenants.Load(ctx, tenants.Source{
		File: s.TenantsFile, SecretARN: s.TenantsSecretARN,
		Secrets: tenants.SecretsManager{Client: secretsmanager.NewFromConfig(awsCfg)},
	})
	if err != nil {
		return nil, err
	}
	parsers, err := BuildParsers(doc, ParserOptions{Tolerance: s.Tolerance})
	if err != nil {
		return nil, err
	}
	table, err := store.New(store.Config{Client: dynamodb.NewFromConfig(awsCfg), TableName: s.TableName, Function: "receiver"})
	if err != nil {
		return nil, err
	}
	q, err := queue.New(queue.Config{Client: sqs.NewFromConfig(awsCfg), URL: s.QueueURL})
	if err != nil {
		return nil, err
	}
	return New(Config{
		Parsers:        parsers,
		Store:          table,
		Queue:          q,
		Logger:         logger,
		Metrics:        obs.NewMetrics(metricsOut, "Hookwall", map[string]string{"Function": "receiver"}),
		DedupWindow:    s.DedupWindow,
		ReenqueueGrace: s.ReenqueueGrace,
		MaxEventAge:    s.MaxEventAge,
		MaxBody:        s.MaxBody,
		Budget:         s.Budget,
		Events:         table,
		HandedOff:      handoff.New(int(s.HandedOffBytes)),
		HandedOffTTL:   s.HandedOffTTL,
	})
}

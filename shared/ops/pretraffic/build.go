package pretraffic

import (
	"context"
	"io"
	"log/slog"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/codedeploy"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/hookwall/hookwall/shared/aws/awsconf"
	"github.com/hookwall/hookwall/shared/config/settings"
	"github.com/hookwall/hookwall/shared/config/tenants"
)

// Build builds the hook from its settings (functions/pretraffic's
// startup.Run). It writes no metrics (metricsOut is unused): its log lines
// say what each run checked.
func Build(ctx context.Context, s settings.PreTraffic, logger *slog.Logger, _ io.Writer,
	optFns ...func(*config.LoadOptions) error) (*Handler, error) {
	awsCfg, err := awsconf.Load(ctx, logger, awsconf.Recorder{Function: "pretraffic", Names: map[string]string{
		s.TenantsSecretARN: awsconf.TenantsSecret,
		s.ReceiverVersion:  "ReceiverFunction.Version",
		s.ProcessorVersion: "ProcessorFunction.Version",
	}}, optFns...)
	if err != nil {
		return nil, err
	}
	secrets := tenants.SecretsManager{Client: secretsmanager.NewFromConfig(awsCfg)}
	return New(Config{
		Lambda:     lambda.NewFromConfig(awsCfg),
		CodeDeploy: codedeploy.NewFromConfig(awsCfg),
		LoadTenants: func(ctx context.Context) (*tenants.Tenants, error) {
			return tenants.Load(ctx, tenants.Source{File: s.TenantsFile, SecretARN: s.TenantsSecretARN, Secrets: secrets})
		},
		ReceiverVersion:  s.ReceiverVersion,
		ProcessorVersion: s.ProcessorVersion,
		Logger:           logger,
	})
}

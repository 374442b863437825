// Command receiver is the Lambda function behind API Gateway (HTTP API,
// payload 2.0, route /webhooks/{provider}/{tenant}). It only wires: the
// environment → intake.Settings → intake.Handler. See shared/intake.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"

	"github.com/hookwall/hookwall/shared/intake"
	"github.com/hookwall/hookwall/shared/obs"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "receiver:", err)
		os.Exit(1)
	}
}

func run() error {
	ctx := context.Background()
	settings, err := intake.LoadSettings(os.Getenv)
	if err != nil {
		return err
	}
	logger := obs.NewLogger(os.Stdout, settings.LogLevel)
	awsCfg, err := awsconfig.LoadDefaultConfig(ctx)
	if err != nil {
		return fmt.Errorf("load AWS config: %w", err)
	}
	h, err := intake.Build(ctx, settings, awsCfg, logger, os.Stdout)
	if err != nil {
		return err
	}
	lambda.Start(h.HandleAPIGateway)
	return nil
}

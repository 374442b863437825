// Command receiver is the webhook Lambda behind API Gateway: env → settings.Receiver → intake.Build.
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/hookwall/hookwall/shared/intake"
	"github.com/hookwall/hookwall/shared/obs"
	"github.com/hookwall/hookwall/shared/settings"
)

func main() {
	s, warnings, err := settings.LoadReceiver(os.Getenv, intake.Defaults())
	log := obs.NewLogger(os.Stdout, s.LogLevel)
	warnings.Log(log)
	var h *intake.Handler
	if err == nil {
		h, err = intake.Build(context.Background(), s, log, os.Stdout)
	}
	if err != nil {
		log.Error("receiver: start", slog.Any("error", err))
		os.Exit(1)
	}
	lambda.Start(h.HandleAPIGateway)
}

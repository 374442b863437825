// Command processor is the Lambda on the events queue: env → settings.Processor → wiring.Build.
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/hookwall/hookwall/functions/processor/wiring"
	"github.com/hookwall/hookwall/shared/obs"
	"github.com/hookwall/hookwall/shared/settings"
)

func main() {
	s, warnings, err := settings.LoadProcessor(os.Getenv)
	log := obs.NewLogger(os.Stdout, s.LogLevel)
	warnings.Log(log)
	var h *wiring.Handler
	if err == nil {
		h, err = wiring.Build(context.Background(), s, log, os.Stdout)
	}
	if err != nil {
		log.Error("processor: start", slog.Any("error", err))
		os.Exit(1)
	}
	lambda.Start(h.Handle)
}

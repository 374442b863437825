// Command compensator is the Lambda on the dead-letter queue and the sweep schedule: env → settings.Compensator → wiring.Build.
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/hookwall/hookwall/functions/compensator/wiring"
	"github.com/hookwall/hookwall/shared/obs"
	"github.com/hookwall/hookwall/shared/settings"
)

func main() {
	s, warnings, err := settings.LoadCompensator(os.Getenv, wiring.Defaults())
	log := obs.NewLogger(os.Stdout, s.LogLevel)
	warnings.Log(log)
	var h *wiring.Handler
	if err == nil {
		h, err = wiring.Build(context.Background(), s, log, os.Stdout)
	}
	if err != nil {
		log.Error("compensator: start", slog.Any("error", err))
		os.Exit(1)
	}
	lambda.Start(h.Handle)
}

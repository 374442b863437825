// Command hookwall is the operator's tool for Hookwall: it signs and sends
// test webhooks, shows an event's record, steps and history, lists events by
// status, replays them, recovers a window of failed events as a resumable
// job, pauses and resumes handlers, tenants and targets (and shows their
// breakers and held events), and peeks at and redrives the dead-letter
// queue. It
// reads the functions' own environment (TABLE_NAME, QUEUE_URL, DLQ_URL,
// HOOKWALL_TENANTS_FILE or TENANTS_SECRET_ARN, AWS_ENDPOINT_URL_*), so it
// works against the local stack and AWS alike; what the environment leaves
// unset it takes from the running local runner's runner.json (make run).
// `hookwall help` lists the commands, `hookwall version` the build; exit
// codes: 0 ok, 1 operation failed, 2 usage or configuration error, 3 not
// found or refused.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr, os.Getenv)
	stop()
	os.Exit(code)
}

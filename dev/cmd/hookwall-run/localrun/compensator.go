package localrun

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/aws/aws-lambda-go/events"

	compwiring "github.com/hookwall/hookwall/functions/compensator/wiring"
	"github.com/hookwall/hookwall/shared/config/settings"
)

// functionsEnv is what wiring the functions beyond the receiver and the
// processor needs.
type functionsEnv struct {
	getenv     func(string) string
	log        *slog.Logger
	metrics    io.Writer
	sqs        SQSAPI
	region     string
	dlqURL     string
	dlqARN     string
	sweepEvery time.Duration
}

// compensatorAndSweeper wires functions/compensator as its Lambda main does
// and drives its one handler from both of its event sources: the
// dead-letter queue (a [Poller], as the processor's) and the sweep schedule
// (a [Schedule] every sweepEvery, with the EventBridge "Scheduled Event" the
// rule would send). Each invocation goes through the handler's JSON entry
// point (Handle), as the Lambda runtime delivers it.
func (f functionsEnv) compensatorAndSweeper(ctx context.Context) ([]*Poller, []*Schedule, error) {
	cs, warn, err := settings.LoadCompensator(f.getenv, compwiring.Defaults())
	if err != nil {
		return nil, nil, fmt.Errorf("localrun: compensator configuration: %w", err)
	}
	log := f.log.With(slog.String("function", "compensator"))
	warn.Log(log)
	comp, err := compwiring.Build(ctx, cs, log, f.metrics, ObserveSends(log, cs.DLQURL))
	if err != nil {
		return nil, nil, fmt.Errorf("localrun: build the compensator: %w", err)
	}
	poller := &Poller{
		Name: "compensator", Client: f.sqs, QueueURL: cs.DLQURL, QueueARN: f.dlqARN, Region: f.region,
		Handle: JSONHandler(comp.Handle), Timeout: cs.Lease, Concurrency: 1, Log: log,
		OnBatch: logBatch(log, "compensator", StageCompensating),
	}
	sweepLog := f.log.With(slog.String("function", "sweeper"))
	schedule := &Schedule{Name: "sweeper", Every: f.sweepEvery, Run: func(ctx context.Context) error {
		raw, err := ScheduledEvent(time.Now(), f.region, "hookwall-local-sweep")
		if err != nil {
			return err
		}
		rep, err := comp.Handle(ctx, raw)
		if err != nil {
			return err
		}
		b, _ := json.Marshal(rep)
		sweepLog.DebugContext(ctx, "sweep run", slog.String("report", string(b)))
		return nil
	}}
	return []*Poller{poller}, []*Schedule{schedule}, nil
}

// JSONHandler adapts a Lambda handler that takes the raw event (as
// lambda.Start would call it) to a [BatchHandler]: the SQS event is encoded
// as the runtime delivers it and the answer decoded as the event source
// reads it.
func JSONHandler(h func(context.Context, json.RawMessage) (any, error)) BatchHandler {
	return func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		raw, err := json.Marshal(ev)
		if err != nil {
			return events.SQSEventResponse{}, fmt.Errorf("encode the SQS event: %w", err)
		}
		out, err := h(ctx, raw)
		if err != nil {
			return events.SQSEventResponse{}, err
		}
		b, err := json.Marshal(out)
		if err != nil {
			return events.SQSEventResponse{}, fmt.Errorf("encode the answer: %w", err)
		}
		var resp events.SQSEventResponse
		if err := json.Unmarshal(b, &resp); err != nil {
			return events.SQSEventResponse{}, fmt.Errorf("the answer is not a partial batch response: %w", err)
		}
		return resp, nil
	}
}

// ScheduledEvent returns the event an EventBridge schedule rule sends.
func ScheduledEvent(at time.Time, region, rule string) (json.RawMessage, error) {
	b, err := json.Marshal(events.EventBridgeEvent{
		Version: "0", ID: newEventID(), DetailType: "Scheduled Event", Source: "aws.events",
		AccountID: "000000000000", Time: at.UTC().Truncate(time.Second), Region: region,
		Resources: []string{"arn:aws:events:" + region + ":000000000000:rule/" + rule}, Detail: json.RawMessage("{}"),
	})
	if err != nil {
		return nil, fmt.Errorf("localrun: scheduled event: %w", err)
	}
	return b, nil
}

package wiring

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/aws/aws-lambda-go/events"

	"github.com/hookwall/hookwall/shared/aws/sqsbatch"
	"github.com/hookwall/hookwall/shared/base/obs"
	"github.com/hookwall/hookwall/shared/engine/compensate"
	"github.com/hookwall/hookwall/shared/engine/sweep"
)

// Sweeper is what sweep mode runs; *sweep.Sweeper satisfies it.
type Sweeper interface {
	Run(ctx context.Context) (sweep.Report, error)
}

// Handler is the compensator Lambda: an SQS batch from the dead-letter
// queue in, a partial batch response out; or a scheduled EventBridge event
// in, one sweep run.
type Handler struct {
	batch   *sqsbatch.Handler
	sweeper Sweeper
	metrics *obs.Metrics
	log     *slog.Logger
}

// New returns a Handler compensating with comp (at most concurrency messages
// of a batch at once; below 1: sqsbatch.DefaultConcurrency) and sweeping
// with sweeper, logging to log and flushing metrics after every invocation
// (nil: none).
func New(comp *compensate.Compensator, sweeper Sweeper, concurrency int, metrics *obs.Metrics, log *slog.Logger) *Handler {
	if comp == nil || sweeper == nil || log == nil {
		panic("wiring: New: nil Compensator, Sweeper or logger")
	}
	return &Handler{batch: sqsbatch.New(comp, concurrency), sweeper: sweeper, metrics: metrics, log: log}
}

// ErrUnknownEvent is returned for an invocation that is neither an SQS
// batch nor an EventBridge event.
var ErrUnknownEvent = errors.New("compensator: neither an SQS batch nor an EventBridge event")

// eventShape is what tells the two event sources apart.
type eventShape struct {
	Records []struct {
		EventSource string `json:"eventSource"`
	} `json:"Records"`
	Source     string `json:"source"`
	DetailType string `json:"detail-type"`
}

// Handle dispatches one invocation by its shape. An SQS batch (records
// from aws:sqs) is compensated and answered with an
// events.SQSEventResponse, never an error: a message that is to come back
// is a batch item failure. An EventBridge event (source aws.events, the
// schedule's "Scheduled Event") runs one sweep and answers its
// sweep.Report; a failed sweep is logged and counted, not returned (the
// asynchronous invocation would be retried, and the next scheduled run
// continues anyway). Anything else is ErrUnknownEvent.
func (h *Handler) Handle(ctx context.Context, raw json.RawMessage) (any, error) {
	defer func() {
		if err := h.metrics.Flush(); err != nil {
			h.log.WarnContext(ctx, "flush metrics", slog.Any("error", err))
		}
	}()
	var shape eventShape
	if err := json.Unmarshal(raw, &shape); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnknownEvent, err)
	}
	switch {
	case len(shape.Records) > 0 && shape.Records[0].EventSource == "aws:sqs":
		var ev events.SQSEvent
		if err := json.Unmarshal(raw, &ev); err != nil {
			return nil, fmt.Errorf("compensator: decode SQS event: %w", err)
		}
		return h.HandleSQS(ctx, ev), nil
	case shape.Source == "aws.events":
		return h.HandleSchedule(ctx), nil
	}
	h.log.ErrorContext(ctx, "unknown invocation", slog.String("source", shape.Source), slog.Int("records", len(shape.Records)))
	return nil, ErrUnknownEvent
}

// HandleSQS compensates one dead-letter batch and builds its partial batch
// response.
func (h *Handler) HandleSQS(ctx context.Context, ev events.SQSEvent) events.SQSEventResponse {
	resp, _ := h.batch.Handle(ctx, ev) // never an error
	return resp
}

// HandleSchedule runs one sweep and returns its report.
func (h *Handler) HandleSchedule(ctx context.Context) sweep.Report {
	rep, err := h.sweeper.Run(ctx)
	if err != nil {
		h.log.ErrorContext(ctx, "sweep", slog.Any("error", err))
	}
	return rep
}

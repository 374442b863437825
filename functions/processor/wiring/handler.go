package wiring

import (
	"context"
	"log/slog"

	"github.com/aws/aws-lambda-go/events"

	"github.com/hookwall/hookwall/shared/aws/sqsbatch"
	"github.com/hookwall/hookwall/shared/base/obs"
)

// Handler is the processor Lambda: an SQS batch in, a partial batch response out.
type Handler struct {
	batch   *sqsbatch.Handler
	metrics *obs.Metrics
	log     *slog.Logger
}

// Handle processes the batch. It never returns an error: a message that is
// to come back is reported in BatchItemFailures, and a malformed body is sent
// to the dead-letter queue and acknowledged.
func (h *Handler) Handle(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	resp, _ := h.batch.Handle(ctx, ev)
	if err := h.metrics.Flush(); err != nil {
		h.log.WarnContext(ctx, "flush metrics", slog.Any("error", err))
	}
	return resp, nil
}

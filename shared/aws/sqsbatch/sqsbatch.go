package sqsbatch

import (
	"context"

	"github.com/aws/aws-lambda-go/events"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/internal/kernel"
)

// DefaultConcurrency is the number of messages of one batch handled at once
// when the configured concurrency is below 1.
const DefaultConcurrency = kernel.DefaultConcurrency

// Engine handles batches of messages: an engine on the leased-attempt
// kernel (*dispatch.Dispatcher, *compensate.Compensator).
type Engine interface {
	// Batch handles ms with at most concurrency at a time and returns
	// their results in order.
	Batch(ctx context.Context, ms []kernel.Message, concurrency int) []kernel.Result
}

// Handler handles SQS batches with an engine.
type Handler struct {
	engine      Engine
	concurrency int
	newer       newer
}

// New returns a Handler handling at most concurrency messages of a batch at
// once (below 1: DefaultConcurrency) with engine.
func New(engine Engine, concurrency int) *Handler {
	if engine == nil {
		panic("sqsbatch: New: nil engine")
	}
	if concurrency < 1 {
		concurrency = DefaultConcurrency
	}
	return &Handler{engine: engine, concurrency: concurrency}
}

// Handle handles the batch and reports the messages that are to come back
// (retries, busy leases, failed calls) as batch item failures. It never
// returns an error: that would make SQS redeliver the whole batch.
func (h *Handler) Handle(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	ev, left := h.newer.split(ctx, ev)
	resp := Response(h.engine.Batch(ctx, Messages(ev), h.concurrency))
	resp.BatchItemFailures = append(resp.BatchItemFailures, left...)
	return resp, nil
}

// Messages converts the records of ev to the engines' messages, each with
// its group ([webhook.MessageGroup]): the record's MessageGroupId, else the
// tenant of its event-key attribute.
func Messages(ev events.SQSEvent) []kernel.Message {
	ms := make([]kernel.Message, len(ev.Records))
	for i, r := range ev.Records {
		key := ""
		if a, ok := r.MessageAttributes[webhook.AttrEventKey]; ok && a.StringValue != nil {
			key = *a.StringValue
		}
		ms[i] = kernel.Message{MessageID: r.MessageId, ReceiptHandle: r.ReceiptHandle, Body: []byte(r.Body),
			Group: webhook.MessageGroup(r.Attributes["MessageGroupId"], key)}
	}
	return ms
}

// Response builds the partial batch response: every result not
// acknowledged is a batch item failure. The list is empty, never nil, when
// all are.
func Response(results []kernel.Result) events.SQSEventResponse {
	resp := events.SQSEventResponse{BatchItemFailures: []events.SQSBatchItemFailure{}}
	for _, r := range results {
		if !r.Ack {
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: r.MessageID})
		}
	}
	return resp
}

package sqsbatch

import (
	"context"

	"github.com/aws/aws-lambda-go/events"

	"github.com/hookwall/hookwall/shared/dispatch"
)

// DefaultConcurrency is the number of messages of one batch processed at once
// when the configured concurrency is below 1.
const DefaultConcurrency = 10

// Handler handles SQS batches with a dispatcher.
type Handler struct {
	d           *dispatch.Dispatcher
	concurrency int
}

// New returns a Handler processing at most concurrency messages of a batch at
// once (below 1: DefaultConcurrency).
func New(d *dispatch.Dispatcher, concurrency int) *Handler {
	if concurrency < 1 {
		concurrency = DefaultConcurrency
	}
	return &Handler{d: d, concurrency: concurrency}
}

// Handle processes the batch and reports the messages that are to come back
// (retries, busy leases, failed calls) as batch item failures. It never
// returns an error: that would make SQS redeliver the whole batch.
func (h *Handler) Handle(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	results := h.d.ProcessBatch(ctx, Deliveries(ev), h.concurrency)
	return Response(results), nil
}

// Deliveries converts the records of ev to dispatcher deliveries (the
// compensator takes them too).
func Deliveries(ev events.SQSEvent) []dispatch.Message {
	ds := make([]dispatch.Message, len(ev.Records))
	for i, r := range ev.Records {
		ds[i] = dispatch.Message{MessageID: r.MessageId, ReceiptHandle: r.ReceiptHandle, Body: []byte(r.Body)}
	}
	return ds
}

// Response builds the partial batch response: every result not acknowledged
// is a batch item failure.
func Response(results []dispatch.Result) events.SQSEventResponse {
	return ResponseOf(results, func(r dispatch.Result) (string, bool) { return r.MessageID, r.Ack })
}

// ResponseOf builds the partial batch response from results of any engine
// (the processor's, the compensator's): ack returns a result's message id
// and whether the message is acknowledged; every result not acknowledged is
// a batch item failure. The list is empty, never nil, when all are.
func ResponseOf[R any](results []R, ack func(R) (messageID string, acked bool)) events.SQSEventResponse {
	resp := events.SQSEventResponse{BatchItemFailures: []events.SQSBatchItemFailure{}}
	for _, r := range results {
		if id, ok := ack(r); !ok {
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: id})
		}
	}
	return resp
}

package wiring

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/hookwall/hookwall/shared/aws/sqsbatch"
	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/engine/dispatch"
	"github.com/hookwall/hookwall/shared/engine/process"
	"github.com/hookwall/hookwall/shared/state/store"
	"github.com/hookwall/hookwall/shared/state/store/memstore"
)

// The sample SQS batch for `sam local invoke ProcessorFunction`
// (events/processor/sqs-batch.json) is what the processor accepts: each
// message an envelope the receiver would send, processed once and
// acknowledged. The records are claimed first, as the receiver claims them.
const sampleBatch = "../../../events/processor/sqs-batch.json"

type noVisibility struct{}

func (noVisibility) ChangeVisibility(context.Context, string, time.Duration) error { return nil }

type deadLetters struct {
	mu   sync.Mutex
	keys []string
}

func (d *deadLetters) SendDeadLetter(_ context.Context, key string, _ []byte, _ string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.keys = append(d.keys, key)
	return nil
}

func TestSampleBatchIsProcessed(t *testing.T) {
	b, err := os.ReadFile(sampleBatch)
	if err != nil {
		t.Fatal(err)
	}
	var ev events.SQSEvent
	if err := json.Unmarshal(b, &ev); err != nil {
		t.Fatalf("%s: %v", sampleBatch, err)
	}
	if len(ev.Records) == 0 {
		t.Fatalf("%s has no records", sampleBatch)
	}
	ctx := context.Background()
	st := memstore.New(memstore.Config{})
	var keys []string
	for _, m := range ev.Records {
		if m.EventSource != "aws:sqs" || m.ReceiptHandle == "" || m.MessageId == "" {
			t.Errorf("%s: not an SQS record as the event source delivers it", m.MessageId)
		}
		var env webhook.Envelope
		if err := json.Unmarshal([]byte(m.Body), &env); err != nil {
			t.Fatalf("%s: body is not an envelope: %v", m.MessageId, err)
		}
		ne := store.NewEvent{Key: env.Key, Provider: env.Provider, Tenant: env.Tenant, EventType: env.Type,
			PayloadHash: "sample", Payload: env.Payload}
		if env.OccurredAt != nil {
			ne.OccurredAt = *env.OccurredAt
		}
		if res, err := st.Claim(ctx, ne, 24*time.Hour); err != nil || res.Outcome != store.Claimed {
			t.Fatalf("claim %s: %v, %v", env.Key, res.Outcome, err)
		}
		keys = append(keys, env.Key)
	}
	reg := process.NewRegistry()
	ran := map[string]int{}
	var mu sync.Mutex // the batch's messages run concurrently
	process.HandleAll(reg, "sample.count", func(_ context.Context, e *process.Event[webhook.Envelope]) error {
		mu.Lock()
		ran[e.Data.Key]++
		mu.Unlock()
		return nil
	})
	dlq := &deadLetters{}
	d, err := dispatch.New(dispatch.Config{Registry: reg, Store: st, DLQ: dlq, Kernel: dispatch.Kernel{Queue: noVisibility{}}})
	if err != nil {
		t.Fatal(err)
	}
	h := &Handler{batch: sqsbatch.New(d, 10), log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	tctx, cancel := context.WithTimeout(ctx, 60*time.Second) // the function's timeout, a Lambda deadline
	defer cancel()
	resp, err := h.Handle(tctx, ev)
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("got %+v, %v; want every message acknowledged", resp, err)
	}
	dlq.mu.Lock()
	defer dlq.mu.Unlock()
	if len(dlq.keys) != 0 {
		t.Errorf("dead-lettered %v", dlq.keys)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, k := range keys {
		rec, err := st.Get(ctx, k)
		if err != nil || rec == nil || rec.Status != webhook.StatusSucceeded || ran[k] != 1 {
			t.Errorf("%s: record %+v (%v), handler ran %d times; want SUCCEEDED, once", k, rec, err, ran[k])
		}
	}
}

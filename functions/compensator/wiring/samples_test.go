package wiring

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/engine/compensate"
	"github.com/hookwall/hookwall/shared/engine/process"
	"github.com/hookwall/hookwall/shared/engine/sweep"
	"github.com/hookwall/hookwall/shared/state/store"
	"github.com/hookwall/hookwall/shared/state/store/memstore"
)

// The samples for `sam local invoke CompensatorFunction`: a batch from the
// dead-letter queue (events/compensator/dlq-batch.json) and the sweep
// schedule's event (events/compensator/sweep-schedule.json) are what the
// compensator accepts.
const (
	sampleDLQBatch = "../../../events/compensator/dlq-batch.json"
	sampleSchedule = "../../../events/compensator/sweep-schedule.json"
)

func TestSampleDeadLetterBatchIsCompensated(t *testing.T) {
	raw, err := os.ReadFile(sampleDLQBatch)
	if err != nil {
		t.Fatal(err)
	}
	var ev events.SQSEvent
	if err := json.Unmarshal(raw, &ev); err != nil || len(ev.Records) == 0 {
		t.Fatalf("%s: %v (%d records)", sampleDLQBatch, err, len(ev.Records))
	}
	ctx := context.Background()
	st := memstore.New(memstore.Config{})
	var keys []string
	for _, m := range ev.Records {
		var env webhook.Envelope
		if err := json.Unmarshal([]byte(m.Body), &env); err != nil {
			t.Fatalf("%s: body is not an envelope: %v", m.MessageId, err)
		}
		if m.MessageAttributes["hookwall-event-key"].StringValue == nil ||
			*m.MessageAttributes["hookwall-event-key"].StringValue != env.Key {
			t.Errorf("%s: the hookwall-event-key attribute is not the envelope's key %s", m.MessageId, env.Key)
		}
		// The record as the processor leaves an event it gave up on: FAILED.
		ne := store.NewEvent{Key: env.Key, Provider: env.Provider, Tenant: env.Tenant, EventType: env.Type,
			PayloadHash: "sample", Payload: env.Payload}
		if _, err := st.Claim(ctx, ne, 24*time.Hour); err != nil {
			t.Fatal(err)
		}
		acq, err := st.Acquire(ctx, env.Key, "processor-sample", time.Now().Add(time.Minute))
		if err != nil || acq.Outcome != webhook.Acquired {
			t.Fatalf("acquire %s: %+v, %v", env.Key, acq, err)
		}
		if ok, err := st.Fail(ctx, acq.Lease, "sample: permanent"); !ok || err != nil {
			t.Fatalf("fail %s: %v, %v", env.Key, ok, err)
		}
		keys = append(keys, env.Key)
	}
	c, err := compensate.New(compensate.Config{Registry: process.NewRegistry(), Store: st, Kernel: compensate.Kernel{Queue: noVisibility{}}})
	if err != nil {
		t.Fatal(err)
	}
	sw := &fakeSweeper{}
	h := New(c, sw, 0, nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	tctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	out, err := h.Handle(tctx, json.RawMessage(raw))
	if err != nil {
		t.Fatal(err)
	}
	resp, ok := out.(events.SQSEventResponse)
	if !ok || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("got %#v; want every message acknowledged", out)
	}
	for _, k := range keys {
		// No handler journaled a step with a compensation: "nothing to
		// compensate", DEAD; either terminal status means it was taken.
		rec, err := st.Get(ctx, k)
		if err != nil || rec == nil || (rec.Status != webhook.StatusDead && rec.Status != webhook.StatusCompensated) {
			t.Errorf("%s: record %+v (%v); want DEAD or COMPENSATED", k, rec, err)
		}
	}
	if sw.runs != 0 {
		t.Error("the DLQ batch ran the sweeper")
	}
}

func TestSampleScheduleRunsTheSweeper(t *testing.T) {
	raw, err := os.ReadFile(sampleSchedule)
	if err != nil {
		t.Fatal(err)
	}
	sw := &fakeSweeper{}
	h := newHandler(t, sw)
	out, err := h.Handle(context.Background(), json.RawMessage(raw))
	if err != nil || sw.runs != 1 {
		t.Fatalf("got %v after %d sweeps; want one sweep", err, sw.runs)
	}
	if _, ok := out.(sweep.Report); !ok {
		t.Errorf("got %#v, want a sweep.Report", out)
	}
}

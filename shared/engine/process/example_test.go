package process_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/engine/dispatch"
	"github.com/hookwall/hookwall/shared/engine/process"
	"github.com/hookwall/hookwall/shared/state/store"
	"github.com/hookwall/hookwall/shared/state/store/memstore"
)

// queueStub stands in for the SQS queue and the dead-letter queue.
type queueStub struct{}

func (queueStub) ChangeVisibility(context.Context, string, time.Duration) error { return nil }
func (queueStub) SendDeadLetter(context.Context, string, []byte, string) error  { return nil }

// A team's handler: one external effect in a step, with its idempotency key.
// The event is delivered three times and its first attempt fails after the
// step: the step runs once, and the last delivery is acknowledged as a
// duplicate. The store is the in-memory one ([memstore.Store]), which passes
// the same contract suite as the DynamoDB table.
func ExampleHandle() {
	type follow struct {
		UserID string `json:"userId"`
	}
	followType := webhook.NewType[follow]("line", "follow")

	reg := process.NewRegistry()
	var calls int
	process.Handle(reg, "crm.lead-from-follow", followType, func(ctx context.Context, ev *process.Event[follow]) error {
		err := ev.Step(ctx, "create-lead", func(ctx context.Context, idemKey string) error {
			calls++ // e.g. api.CreateLead(ctx, idemKey, ev.Data.UserID)
			return nil
		})
		if err != nil {
			return err
		}
		if ev.Attempt == 1 {
			return errors.New("crm: 503") // retried with backoff
		}
		return nil
	}, process.MaxAttempts(5), process.Timeout(20*time.Second))

	st := memstore.New(memstore.Config{})
	d, err := dispatch.New(dispatch.Config{Registry: reg, Store: st, DLQ: queueStub{},
		Kernel: dispatch.Kernel{Queue: queueStub{}}})
	if err != nil {
		panic(err)
	}
	// The receiver's claim: the record is RECEIVED.
	const key = "line#t1#ev-1"
	st.Put(&store.Record{Key: key, SK: store.SKEvent, Status: webhook.StatusReceived, Version: 1,
		Provider: "line", Tenant: "t1", EventType: "follow", ExpiresAt: time.Now().Add(time.Hour).Unix()})
	body, _ := json.Marshal(webhook.Envelope{Key: key, Provider: "line", Tenant: "t1", Type: "follow",
		ReceivedAt: time.Now(), Payload: json.RawMessage(`{"userId":"U1"}`)})
	msg := dispatch.Message{MessageID: "m-1", ReceiptHandle: "rh-1", Body: body}
	for range 3 {
		res := d.Handle(context.Background(), msg)
		fmt.Println(res.Verdict, res.Ack)
	}
	fmt.Println("lead created", calls, "time")
	// Output:
	// retried false
	// succeeded true
	// duplicate true
	// lead created 1 time
}

// A handler that calls a tenant's own endpoint names its target per tenant,
// so that one tenant's outage opens only that tenant's circuit breaker: the
// events bound for it are held (not failed, no attempt spent) and drain at
// the target's rate once it is back.
func ExampleTarget() {
	reg := process.NewRegistry()
	process.HandleAll(reg, "forward", func(ctx context.Context, ev *process.Event[webhook.Envelope]) error {
		return nil // POST ev.Data to the tenant's URL
	}, process.Target("forward/{tenant}"))
	fmt.Println("registered")
	// Output: registered
}

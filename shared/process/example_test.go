package process

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hookwall/hookwall/shared/webhook"
)

// A team's handler: one external effect in a step, with its idempotency key.
// The event is delivered twice and its first attempt fails after the step:
// the step runs once, and the duplicate delivery is acknowledged.
func ExampleHandle() {
	type follow struct {
		UserID string `json:"userId"`
	}
	followType := webhook.NewType[follow]("line", "follow")

	reg := NewRegistry()
	var calls int
	Handle(reg, "crm.lead-from-follow", followType, func(ctx context.Context, ev *Event[follow]) error {
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
	}, MaxAttempts(5), Timeout(20*time.Second))

	st, q := newFakeStore(), newFakeQueue() // in-memory stand-ins for store.Table and queue.Queue
	d, _ := New(Config{Registry: reg, Store: st, Queue: q, DLQ: q})
	st.put("line#t1#ev-1", webhook.StatusReceived)
	msg := delivery("line#t1#ev-1", "line", "follow", follow{UserID: "U1"})
	for range 3 {
		res := d.Process(context.Background(), msg)
		fmt.Println(res.Verdict, res.Ack)
	}
	fmt.Println("lead created", calls, "time")
	// Output:
	// retried false
	// succeeded true
	// duplicate true
	// lead created 1 time
}

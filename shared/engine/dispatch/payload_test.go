package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/engine/process"
	"github.com/hookwall/hookwall/shared/state/store"
	"github.com/hookwall/hookwall/shared/state/store/memstore/memtest"
)

// loadingStore is a memtest.Table that keeps payloads apart from its records,
// as store.Table does for large ones: its leases carry none, and
// LoadPayload reads them.
type loadingStore struct {
	*memtest.Table
	payload []byte
	err     error
	loads   int
}

func (s *loadingStore) LoadPayload(_ context.Context, _ string) ([]byte, error) {
	s.loads++
	return s.payload, s.err
}

// leanDelivery is a message sent without its payload (PayloadInRecord).
func leanDelivery(key string) Message {
	env := webhook.Envelope{Key: key, Provider: "line", Tenant: "t1", Type: "follow", ReceivedAt: time.Now().Add(-time.Second),
		PayloadInRecord: true}
	body, _ := json.Marshal(env)
	return Message{MessageID: "m-" + key, ReceiptHandle: "rh-" + key, Body: body}
}

func TestLeanMessageReadsThePayloadFromTheStore(t *testing.T) {
	ls := &loadingStore{payload: []byte(`{"userId":"U1"}`)}
	var got string
	rg := newRig(t, func(c *Config) { ls.Table = c.Store.(*memtest.Table); c.Store = ls }, func(r *process.Registry) {
		process.Handle(r, "h", followType, func(_ context.Context, ev *process.Event[follow]) error {
			got = ev.Data.UserID
			return nil
		})
	})
	rg.store.Seed(store.Record{Key: "k1", Status: webhook.StatusReceived})
	if res := rg.d.Handle(context.Background(), leanDelivery("k1")); res.Verdict != Succeeded {
		t.Fatalf("got %v (%v), want succeeded", res.Verdict, res.Err)
	}
	if got != "U1" || ls.loads != 1 {
		t.Errorf("handler saw user %q after %d loads; want U1 after 1", got, ls.loads)
	}
	// A message with its payload is not read from the store.
	rg.store.Seed(store.Record{Key: "k2", Status: webhook.StatusReceived})
	if res := rg.d.Handle(context.Background(), delivery("k2", "line", "follow", follow{UserID: "U2"})); res.Verdict != Succeeded {
		t.Fatalf("got %v (%v), want succeeded", res.Verdict, res.Err)
	}
	if got != "U2" || ls.loads != 1 {
		t.Errorf("handler saw user %q after %d loads; want U2 after 1", got, ls.loads)
	}
}

func TestPayloadThatCannotBeReadIsRetried(t *testing.T) {
	ls := &loadingStore{err: errors.New("throttled")}
	ran := false
	rg := newRig(t, func(c *Config) { ls.Table = c.Store.(*memtest.Table); c.Store = ls }, func(r *process.Registry) {
		process.Handle(r, "h", followType, func(context.Context, *process.Event[follow]) error { ran = true; return nil })
	})
	rg.store.Seed(store.Record{Key: "k1", Status: webhook.StatusReceived})
	res := rg.d.Handle(context.Background(), leanDelivery("k1"))
	if res.Verdict != Retried || ran {
		t.Errorf("got %v (%v), handler ran %v; want retried, not run", res.Verdict, res.Err, ran)
	}
	if st := rg.store.Record("k1").Status; st != webhook.StatusRetry {
		t.Errorf("record %s, want RETRY", st)
	}
}

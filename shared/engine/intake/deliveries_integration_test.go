//go:build integration

package intake

import (
	"context"
	"net/http"
	"testing"
	"time"
)

// TestIntegrationThreeDeliveriesCountThree delivers one event three times
// over HTTP to a receiver on DynamoDB Local and SQS (no hand-off cache:
// every delivery reaches the table) and reads the record: deliveries 3, the
// last one's time.
func TestIntegrationThreeDeliveriesCountThree(t *testing.T) {
	s := newStack(t)
	body := lineBody("01JDELIVERIES0000000000001")
	sig := lineSign(body)
	if code := s.post(t, body, sig); code != http.StatusOK {
		t.Fatalf("delivery 1: status %d", code)
	}
	s.process(t) // the record moves past RECEIVED: the duplicates are answered 200
	var before time.Time
	for i := 2; i <= 3; i++ {
		before = time.Now()
		if code := s.post(t, body, sig); code != http.StatusOK {
			t.Fatalf("delivery %d: status %d", i, code)
		}
	}
	rec, err := s.table.Get(context.Background(), "line#acme#01JDELIVERIES0000000000001")
	if err != nil || rec == nil {
		t.Fatalf("get: %v, %v", rec, err)
	}
	if rec.Deliveries != 3 || rec.LastDeliveryAt < before.UnixMilli() || rec.LastDeliveryAt > time.Now().UnixMilli() {
		t.Errorf("got deliveries %d, last at %d; want 3, at or after %d", rec.Deliveries, rec.LastDeliveryAt, before.UnixMilli())
	}
	if msgs := s.messages(t); len(msgs) != 0 {
		t.Errorf("the duplicates enqueued %d messages", len(msgs))
	}
}

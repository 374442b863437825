package intake

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/store"
	"github.com/hookwall/hookwall/shared/webhook"
)

func (m *memStore) record(t *testing.T, key string) *store.Record {
	t.Helper()
	rec, err := m.Get(context.Background(), key)
	if err != nil || rec == nil {
		t.Fatalf("get %s: %v, %v", key, rec, err)
	}
	return rec
}

func TestDuplicatesThatReachTheTableAreCountedOnTheRecord(t *testing.T) {
	st, q := newMemStore(), &memQueue{}
	h := newTestHandler(t, st, q)
	body := lineBody("E1")
	if got := deliver(t, h, body); got != http.StatusOK {
		t.Fatalf("delivery 1: status %d", got)
	}
	// Inside the grace, RECEIVED: answered 503, and still a delivery that
	// reached the table.
	st.clock.Advance(time.Second)
	if got := deliver(t, h, body); got != http.StatusServiceUnavailable {
		t.Fatalf("delivery 2: status %d, want 503", got)
	}
	st.processAll()
	st.clock.Advance(time.Second)
	if got := deliver(t, h, body); got != http.StatusOK {
		t.Fatalf("delivery 3: status %d", got)
	}
	rec := st.record(t, "line#acme#E1")
	if rec.DeliveryCount() != 3 || rec.LastDelivery() != st.now().UnixMilli() {
		t.Errorf("got %d deliveries, last at %d; want 3, at %d", rec.DeliveryCount(), rec.LastDelivery(), st.now().UnixMilli())
	}
	if q.count() != 1 {
		t.Errorf("messages = %d, want 1", q.count())
	}
}

func TestDuplicatesAnsweredFromTheHandOffCacheAreNotOnTheRecord(t *testing.T) {
	q := &memQueue{}
	h, st := newCountingHandler(t, q)
	body := lineBody("E1")
	for i := range 3 {
		if got := deliver(t, h, body); got != http.StatusOK {
			t.Fatalf("delivery %d: status %d", i+1, got)
		}
	}
	if rec := st.record(t, "line#acme#E1"); rec.DeliveryCount() != 1 || st.claims.Load() != 1 {
		t.Errorf("got %d deliveries on the record after %d claims; want 1 and 1 (the others answered from memory)",
			rec.DeliveryCount(), st.claims.Load())
	}
}

// uncountable is a store whose delivery counts fail.
type uncountable struct{ *memStore }

func (uncountable) CountDelivery(context.Context, *store.Record) (bool, error) {
	return false, errors.New("dynamodb: throttled")
}

func TestAFailedDeliveryCountDoesNotChangeTheAnswer(t *testing.T) {
	st, q := newMemStore(), &memQueue{}
	h := newTestHandler(t, uncountable{st}, q, func(c *Config) { c.Now = st.now })
	body := lineBody("E1")
	if got := deliver(t, h, body); got != http.StatusOK {
		t.Fatalf("delivery 1: status %d", got)
	}
	st.processAll()
	if got := deliver(t, h, body); got != http.StatusOK {
		t.Errorf("duplicate whose count failed: status %d, want 200", got)
	}
}

func TestEventsAPIShowsCallsAndDeliveries(t *testing.T) {
	st, q := newMemStore(), &memQueue{}
	h := newTestHandler(t, st, q, func(c *Config) { c.Events = st })
	body := lineBody("E1")
	if got := deliver(t, h, body); got != http.StatusOK {
		t.Fatalf("delivery 1: status %d", got)
	}
	// The processor's attempt: one call that timed out, one 200.
	ctx := context.Background()
	acq, err := st.Acquire(ctx, "line#acme#E1", "w1", st.now().Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	l := acq.Lease
	l.AddCalls([]webhook.Call{
		{At: st.now(), Target: "crm/acme", Error: "context deadline exceeded", Latency: 5 * time.Second},
		{At: st.now(), Target: "crm/acme", Status: 200, Latency: 42 * time.Millisecond},
	}, 2)
	if ok, err := st.Complete(ctx, l, st.now().Add(time.Hour)); !ok || err != nil {
		t.Fatalf("complete: %v, %v", ok, err)
	}
	for i := 2; i <= 3; i++ {
		if got := deliver(t, h, body); got != http.StatusOK {
			t.Fatalf("delivery %d: status %d", i, got)
		}
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/events/line/acme/E1", nil))
	if w.Code != http.StatusOK {
		t.Fatalf("GET: %d %s", w.Code, w.Body)
	}
	for _, want := range []string{`"deliveries":3`, `"callCount":2`,
		`"target":"crm/acme","status":0,"latencyMs":5000,"error":"context deadline exceeded"`,
		`"target":"crm/acme","status":200,"latencyMs":42}`} {
		if !strings.Contains(w.Body.String(), want) {
			t.Errorf("events API body lacks %s:\n%s", want, w.Body)
		}
	}
}

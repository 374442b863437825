package intake

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/state/store"
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

// countCounter counts the CountDelivery calls, and makes each fail when
// fail is set. With claimCountFails, a duplicate's claim returns it
// uncounted, as the table's claim does when its count write fails.
type countCounter struct {
	*memStore
	counts          atomic.Int64
	fail            bool
	claimCountFails bool
}

func (c *countCounter) Claim(ctx context.Context, ev store.NewEvent, window time.Duration) (store.ClaimResult, error) {
	res, err := c.memStore.Claim(ctx, ev, window)
	if err == nil && res.Counted && c.claimCountFails {
		// Undo the count the in-memory claim made: the count write failed.
		stored, _ := c.memStore.Store.Get(ctx, ev.Key)
		stored.Deliveries--
		c.memStore.Put(stored)
		res.Record.Deliveries--
		res.Counted = false
	}
	return res, err
}

func (c *countCounter) CountDelivery(ctx context.Context, rec *store.Record) (bool, error) {
	c.counts.Add(1)
	if c.fail {
		return false, errors.New("dynamodb: throttled")
	}
	return c.memStore.CountDelivery(ctx, rec)
}

func TestADuplicateCountedByItsClaimIsNotCountedAgain(t *testing.T) {
	st := &countCounter{memStore: newMemStore()}
	h := newTestHandler(t, st, &memQueue{}, func(c *Config) { c.Now = st.now })
	body := lineBody("E1")
	// The record stays RECEIVED, inside the grace: the duplicates get 503
	// and reach the table, whose claim counts them (a claim whose count
	// failed is counted apart: see TestADuplicateItsClaimDidNotCountIsCountedOnce).
	for i, want := range []int{http.StatusOK, http.StatusServiceUnavailable, http.StatusServiceUnavailable} {
		if got := deliver(t, h, body); got != want {
			t.Fatalf("delivery %d: status %d, want %d", i+1, got, want)
		}
	}
	if rec := st.record(t, "line#acme#E1"); rec.DeliveryCount() != 3 || st.counts.Load() != 0 {
		t.Errorf("got %d deliveries and %d CountDelivery calls; want 3 and none (each claim counted its own)",
			rec.DeliveryCount(), st.counts.Load())
	}
}

// deliverUncountedDuplicate delivers event E1, processes it, and delivers
// it again with the claim's own count failing (claimCountFails): it
// returns the duplicate's status.
func deliverUncountedDuplicate(t *testing.T, st *countCounter) int {
	t.Helper()
	h := newTestHandler(t, st, &memQueue{}, func(c *Config) { c.Now = st.now })
	body := lineBody("E1")
	if got := deliver(t, h, body); got != http.StatusOK {
		t.Fatalf("delivery 1: status %d", got)
	}
	st.processAll()
	st.claimCountFails = true
	return deliver(t, h, body)
}

func TestADuplicateItsClaimDidNotCountIsCountedOnce(t *testing.T) {
	st := &countCounter{memStore: newMemStore()}
	if got := deliverUncountedDuplicate(t, st); got != http.StatusOK {
		t.Fatalf("delivery 2: status %d", got)
	}
	if rec := st.record(t, "line#acme#E1"); rec.DeliveryCount() != 2 || st.counts.Load() != 1 {
		t.Errorf("got %d deliveries and %d CountDelivery calls; want 2 and 1", rec.DeliveryCount(), st.counts.Load())
	}
}

func TestAFailedDeliveryCountDoesNotChangeTheAnswer(t *testing.T) {
	st := &countCounter{memStore: newMemStore(), fail: true}
	if got := deliverUncountedDuplicate(t, st); got != http.StatusOK {
		t.Errorf("duplicate whose count failed: status %d, want 200", got)
	}
	if st.counts.Load() != 1 {
		t.Errorf("CountDelivery calls: got %d, want 1", st.counts.Load())
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

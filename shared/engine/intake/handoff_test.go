package intake

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/engine/handoff"
	"github.com/hookwall/hookwall/shared/state/store"
)

// countingStore counts the claims that reach the table.
type countingStore struct {
	*memStore
	claims atomic.Int64
}

func (c *countingStore) Claim(ctx context.Context, ev store.NewEvent, window time.Duration) (store.ClaimResult, error) {
	c.claims.Add(1)
	return c.memStore.Claim(ctx, ev, window)
}

func withHandOffCache(cfg *Config) { cfg.HandedOff = handoff.New(1 << 20) }

// newCountingHandler returns a handler with a hand-off cache on a counting
// memStore, both on the store's clock.
func newCountingHandler(t *testing.T, q Queue) (*Handler, *countingStore) {
	t.Helper()
	st := &countingStore{memStore: newMemStore()}
	return newTestHandler(t, st, q, withHandOffCache, func(c *Config) { c.Now = st.now }), st
}

func deliver(t *testing.T, h *Handler, body []byte) int {
	t.Helper()
	return h.Receive(context.Background(), lineRequest(body, lineSign(body)), Meta{}).Status
}

func TestDuplicateOfAHandedOffEventMakesNoStoreCall(t *testing.T) {
	q := &memQueue{}
	h, st := newCountingHandler(t, q)
	body := lineBody("ev-1")
	for i := range 3 {
		if got := deliver(t, h, body); got != http.StatusOK {
			t.Fatalf("delivery %d: status %d", i+1, got)
		}
	}
	if n := st.claims.Load(); n != 1 {
		t.Errorf("claims = %d, want 1: the duplicates should be answered from memory", n)
	}
	if q.count() != 1 {
		t.Errorf("messages = %d, want 1", q.count())
	}
}

// The cache never turns a first delivery into a duplicate: a hand-off that
// failed is not remembered, and the platform's retry claims and sends.
func TestFailedHandOffIsNotRemembered(t *testing.T) {
	q := &memQueue{failAll: true}
	h, st := newCountingHandler(t, q)
	body := lineBody("ev-1")
	if got := deliver(t, h, body); got != http.StatusServiceUnavailable {
		t.Fatalf("delivery with the queue down: status %d, want 503", got)
	}
	if h.cfg.HandedOff.Len() != 0 {
		t.Fatalf("a failed hand-off was remembered (%d entries)", h.cfg.HandedOff.Len())
	}
	q.mu.Lock()
	q.failAll = false
	q.mu.Unlock()
	if got := deliver(t, h, body); got != http.StatusOK {
		t.Fatalf("retry: status %d, want 200", got)
	}
	if n := st.claims.Load(); n != 2 {
		t.Errorf("claims = %d, want 2 (the retry must reach the table)", n)
	}
	if q.count() != 1 {
		t.Fatalf("messages = %d, want 1: the retry must send the event", q.count())
	}
}

// In a delivery of two events whose first send fails, only the second is
// remembered; the retry claims and sends the first and answers the second
// from memory.
func TestPartlyFailedHandOffRemembersOnlyWhatWasSent(t *testing.T) {
	q := &memQueue{failFirst: 1}
	h, st := newCountingHandler(t, q)
	body := lineBody("ev-a", "ev-b")
	if got := deliver(t, h, body); got != http.StatusServiceUnavailable {
		t.Fatalf("first delivery: status %d, want 503", got)
	}
	if h.cfg.HandedOff.Len() != 1 {
		t.Fatalf("entries = %d, want 1 (the event that was sent)", h.cfg.HandedOff.Len())
	}
	q.mu.Lock()
	q.failFirst = 0
	q.mu.Unlock()
	if got := deliver(t, h, body); got != http.StatusOK {
		t.Fatalf("retry: status %d, want 200", got)
	}
	if n := st.claims.Load(); n != 3 {
		t.Errorf("claims = %d, want 3 (2 first, then only the unsent event)", n)
	}
	if q.count() != 2 {
		t.Errorf("messages = %d, want 2 (each event once)", q.count())
	}
}

// Entries expire before the re-enqueue grace: a record still RECEIVED past
// the grace is taken over through the table and sent again, as without the
// cache.
func TestHandOffExpiresBeforeTheGrace(t *testing.T) {
	q := &memQueue{}
	h, st := newCountingHandler(t, q)
	body := lineBody("ev-1")
	if got := deliver(t, h, body); got != http.StatusOK {
		t.Fatalf("first delivery: %d", got)
	}
	st.clock.Advance(h.cfg.HandedOffTTL + time.Millisecond) // still inside the grace
	if got := deliver(t, h, body); got != http.StatusServiceUnavailable {
		t.Fatalf("duplicate past the entry, inside the grace, record RECEIVED: status %d, want 503", got)
	}
	st.clock.Advance(h.cfg.ReenqueueGrace)
	if got := deliver(t, h, body); got != http.StatusOK {
		t.Fatalf("duplicate past the grace: status %d, want 200", got)
	}
	if q.count() != 2 {
		t.Errorf("messages = %d, want 2 (the take-over re-sends)", q.count())
	}
	if n := st.claims.Load(); n != 3 {
		t.Errorf("claims = %d, want 3", n)
	}
}

// Another instance's cache knows nothing of this one's hand-offs.
func TestHandOffCacheIsPerInstance(t *testing.T) {
	q := &memQueue{}
	a, st := newCountingHandler(t, q)
	b := newTestHandler(t, st, q, withHandOffCache, func(c *Config) { c.Now = st.now })
	body := lineBody("ev-1")
	deliver(t, a, body)
	st.processAll()
	if got := deliver(t, b, body); got != http.StatusOK {
		t.Fatalf("duplicate at another instance: status %d", got)
	}
	if n := st.claims.Load(); n != 2 {
		t.Errorf("claims = %d, want 2", n)
	}
}

func TestHandOffTTLMustBeShorterThanTheGrace(t *testing.T) {
	_, err := New(Config{Parsers: testParsers(t), Store: newMemStore(), Queue: &memQueue{},
		ReenqueueGrace: 3 * time.Second, HandedOffTTL: 3 * time.Second})
	if err == nil {
		t.Fatal("HandedOffTTL equal to the grace accepted")
	}
	h := newTestHandler(t, newMemStore(), &memQueue{})
	if h.cfg.HandedOffTTL >= h.cfg.ReenqueueGrace || h.cfg.HandedOffTTL <= 0 {
		t.Errorf("default HandedOffTTL %s, grace %s", h.cfg.HandedOffTTL, h.cfg.ReenqueueGrace)
	}
}

// gatedQueue blocks every Send until release is closed, then answers err.
type gatedQueue struct {
	memQueue
	entered chan struct{}
	release chan struct{}
	err     error
}

func (q *gatedQueue) Send(ctx context.Context, envs []webhook.Envelope) error {
	q.entered <- struct{}{}
	<-q.release
	if q.err != nil {
		return q.err
	}
	return q.memQueue.Send(ctx, envs)
}

// A duplicate that arrives while a concurrent delivery to the same instance
// is handing the event off waits for that hand-off and shares its outcome:
// no claim of its own, and 200 (or 503 when the hand-off failed).
func TestConcurrentDuplicateAwaitsTheHandOff(t *testing.T) {
	for _, fail := range []bool{false, true} {
		t.Run(map[bool]string{false: "hand-off succeeds", true: "hand-off fails"}[fail], func(t *testing.T) {
			q := &gatedQueue{entered: make(chan struct{}, 4), release: make(chan struct{})}
			if fail {
				q.err = errors.New("queue down")
			}
			h, st := newCountingHandler(t, q)
			body := lineBody("ev-1")
			codes := make(chan int, 2)
			go func() { codes <- deliver(t, h, body) }()
			<-q.entered // the first delivery is sending
			go func() { codes <- deliver(t, h, body) }()
			waitFor(t, func() bool { return h.flightCount() == 1 && st.claims.Load() == 1 && h.awaiting() == 1 })
			close(q.release)
			want := http.StatusOK
			if fail {
				want = http.StatusServiceUnavailable
			}
			for range 2 {
				if got := <-codes; got != want {
					t.Errorf("status %d, want %d", got, want)
				}
			}
			if n := st.claims.Load(); n != 1 {
				t.Errorf("claims = %d, want 1 (the duplicate waits instead of claiming)", n)
			}
			if h.flightCount() != 0 {
				t.Errorf("%d flights left", h.flightCount())
			}
		})
	}
}

// Two deliveries that carry the same two events in opposite order each
// await the other's hand-off of one event: both end, neither waits forever.
func TestCrossedDeliveriesDoNotWaitForEachOther(t *testing.T) {
	q := &memQueue{}
	h, st := newCountingHandler(t, q)
	a, b := lineBody("ev-x", "ev-y"), lineBody("ev-y", "ev-x")
	for range 50 {
		codes := make(chan int, 2)
		go func() { codes <- deliver(t, h, a) }()
		go func() { codes <- deliver(t, h, b) }()
		for range 2 {
			if got := <-codes; got != http.StatusOK && got != http.StatusServiceUnavailable {
				t.Fatalf("status %d", got)
			}
		}
	}
	if q.count() != 2 {
		t.Errorf("messages = %d, want 2", q.count())
	}
	_ = st
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 5 s")
		}
		time.Sleep(time.Millisecond)
	}
}

func (h *Handler) flightCount() int {
	h.flights.mu.Lock()
	defer h.flights.mu.Unlock()
	return len(h.flights.m)
}

func (h *Handler) awaiting() int { return int(h.flights.waiters.Load()) }

package intake

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/hookwall/hookwall/shared/queue"
	"github.com/hookwall/hookwall/shared/store"
	"github.com/hookwall/hookwall/shared/webhook"
)

// memStore is an in-memory Store with the table's conditional semantics.
type memStore struct {
	mu      sync.Mutex
	recs    map[string]*store.Record
	failErr error // every call fails with it when set
	// applyThenFail makes Claim write the record and still return an error,
	// as a timeout after DynamoDB applied the write does; undoFails makes
	// Unclaim fail.
	applyThenFail bool
	undoFails     bool
	now           func() time.Time
	clock         *testClock
}

func newMemStore() *memStore {
	clk := &testClock{t: time.Now()}
	return &memStore{recs: map[string]*store.Record{}, now: clk.Now, clock: clk}
}

// testClock is a settable clock shared by a memStore and its Handler.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

// Now returns the clock's time.
func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock forward by d.
func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func (m *memStore) Claim(_ context.Context, ev store.NewEvent, window time.Duration) (store.ClaimResult, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.failErr != nil {
		return store.ClaimResult{}, m.failErr
	}
	if err := ev.Prepare(); err != nil {
		return store.ClaimResult{}, err
	}
	now := m.now()
	if old, ok := m.recs[ev.Key]; ok && !old.Expired(now) {
		cp := *old
		if old.PayloadHash != ev.PayloadHash {
			return store.ClaimResult{Outcome: store.Conflict, Record: &cp}, nil
		}
		return store.ClaimResult{Outcome: store.Duplicate, Record: &cp}, nil
	}
	rec := &store.Record{
		Key: ev.Key, SK: store.SKEvent, Status: webhook.StatusReceived, Version: 1,
		Provider: ev.Provider, Tenant: ev.Tenant, EventType: ev.EventType,
		ReceivedAt: now.UnixMilli(), UpdatedAt: now.UnixMilli(), EnqueuedAt: now.UnixMilli(),
		ExpiresAt: now.Add(window).Unix(), PayloadHash: ev.PayloadHash, Payload: ev.Payload,
		TraceID: ev.TraceID, ClaimID: "c-" + ev.Key,
	}
	m.recs[ev.Key] = rec
	cp := *rec
	if m.applyThenFail {
		return store.ClaimResult{Record: &cp}, errors.New("claim: timed out after the write was applied")
	}
	return store.ClaimResult{Outcome: store.Claimed, Record: &cp}, nil
}

func (m *memStore) Unclaim(_ context.Context, rec *store.Record) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.undoFails {
		return false, errors.New("unclaim: dynamodb down")
	}
	old, ok := m.recs[rec.Key]
	if !ok || old.Status != webhook.StatusReceived || old.Version != 1 || old.ClaimID != rec.ClaimID ||
		old.EnqueuedAt != rec.EnqueuedAt {
		return false, nil
	}
	delete(m.recs, rec.Key)
	return true, nil
}

func (m *memStore) TakeOverEnqueue(_ context.Context, rec *store.Record, grace time.Duration) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	if rec.Status != webhook.StatusReceived || now.Sub(time.UnixMilli(rec.EnqueuedAt)) < grace {
		return false, nil
	}
	old, ok := m.recs[rec.Key]
	if !ok {
		rec.Status = ""
		return false, nil
	}
	if old.Status != webhook.StatusReceived || old.EnqueuedAt != rec.EnqueuedAt {
		rec.Status, rec.EnqueuedAt, rec.Version = old.Status, old.EnqueuedAt, old.Version
		return false, nil
	}
	old.EnqueuedAt = now.UnixMilli()
	rec.EnqueuedAt = old.EnqueuedAt
	return true, nil
}

func (m *memStore) RevertEnqueue(_ context.Context, rec *store.Record, prev int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if old, ok := m.recs[rec.Key]; ok && old.EnqueuedAt == rec.EnqueuedAt {
		old.EnqueuedAt = prev
	}
	return nil
}

func (m *memStore) len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.recs)
}

// memQueue records sent envelopes; failFirst makes that many leading
// envelopes of every Send fail.
type memQueue struct {
	mu        sync.Mutex
	sent      []webhook.Envelope
	failFirst int
	failAll   bool
}

func (q *memQueue) Send(_ context.Context, envs []webhook.Envelope) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.failAll {
		return errors.New("queue down")
	}
	var failed []int
	for i, e := range envs {
		if i < q.failFirst {
			failed = append(failed, i)
			continue
		}
		q.sent = append(q.sent, e)
	}
	if len(failed) > 0 {
		return &queue.SendError{Failed: failed, Err: errors.New("entry rejected")}
	}
	return nil
}

func (q *memQueue) count() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.sent)
}

// setStatus moves the record of key to status, as the processor would.
func (m *memStore) setStatus(key string, status webhook.Status) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if r, ok := m.recs[key]; ok {
		r.Status = status
		r.Version++
	}
}

// processAll moves every RECEIVED record to SUCCEEDED, as the processor would.
func (m *memStore) processAll() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, r := range m.recs {
		if r.Status == webhook.StatusReceived {
			r.Status = webhook.StatusSucceeded
			r.Version++
		}
	}
}

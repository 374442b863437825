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
	now     func() time.Time
}

func newMemStore() *memStore {
	return &memStore{recs: map[string]*store.Record{}, now: time.Now}
}

func (m *memStore) Claim(_ context.Context, ev store.NewEvent, window time.Duration) (store.ClaimResult, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.failErr != nil {
		return store.ClaimResult{}, m.failErr
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
	return store.ClaimResult{Outcome: store.Claimed, Record: &cp}, nil
}

func (m *memStore) Unclaim(_ context.Context, rec *store.Record) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	old, ok := m.recs[rec.Key]
	if !ok || old.Status != webhook.StatusReceived || old.Version != 1 || old.ClaimID != rec.ClaimID {
		return false, nil
	}
	delete(m.recs, rec.Key)
	return true, nil
}

func (m *memStore) TakeOverEnqueue(_ context.Context, rec *store.Record, grace time.Duration) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	old, ok := m.recs[rec.Key]
	if !ok || old.Status != webhook.StatusReceived || old.EnqueuedAt != rec.EnqueuedAt ||
		now.Sub(time.UnixMilli(old.EnqueuedAt)) < grace {
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

package dispatch

import (
	"context"
	"encoding/json"
	"maps"
	"sync"
	"time"

	"github.com/hookwall/hookwall/shared/webhook"
)

// fakeRecord is one record of fakeStore.
type fakeRecord struct {
	status    webhook.Status
	owner     string
	until     time.Time
	version   int64
	attempts  int
	claimID   string
	lastError string
}

// fakeStore is an in-memory Store with the table's semantics, counting calls.
type fakeStore struct {
	mu      sync.Mutex
	now     func() time.Time
	recs    map[string]*fakeRecord
	journal map[string]map[string]webhook.JournalEntry // key -> handler#step -> entry (one claim)
	calls   map[string]int
	// heartbeatLost makes Heartbeat report a lost lease.
	heartbeatLost bool
}

func newFakeStore() *fakeStore {
	return &fakeStore{now: time.Now, recs: map[string]*fakeRecord{}, journal: map[string]map[string]webhook.JournalEntry{}, calls: map[string]int{}}
}

func (s *fakeStore) put(key string, st webhook.Status) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recs[key] = &fakeRecord{status: st, version: 1, claimID: "c-" + key}
}

func (s *fakeStore) get(key string) fakeRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	return *s.recs[key]
}

func (s *fakeStore) count(op string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[op]
}

func (s *fakeStore) AcquireGeneration(ctx context.Context, key string, _ int64, owner string, until time.Time) (webhook.Acquisition, error) {
	return s.Acquire(ctx, key, owner, until)
}

func (s *fakeStore) Acquire(_ context.Context, key, owner string, until time.Time) (webhook.Acquisition, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls["Acquire"]++
	r, ok := s.recs[key]
	now := s.now()
	switch {
	case !ok:
		return webhook.Acquisition{Outcome: webhook.AcquireMissing}, nil
	case r.status.Terminal():
		return webhook.Acquisition{Outcome: webhook.AcquireDone, Status: r.status, Attempts: r.attempts}, nil
	case r.status == webhook.StatusProcessing && !r.until.Before(now):
		return webhook.Acquisition{Outcome: webhook.AcquireBusy, Status: r.status, RetryAfter: r.until.Sub(now)}, nil
	case r.status == webhook.StatusFailed || r.status == webhook.StatusCompensating:
		return webhook.Acquisition{Outcome: webhook.AcquireFailedState, Status: r.status, LastError: r.lastError}, nil
	}
	r.status, r.owner, r.until = webhook.StatusProcessing, owner, until
	r.version++
	r.attempts++
	return webhook.Acquisition{Outcome: webhook.Acquired, Status: r.status, Attempts: r.attempts, Lease: webhook.Lease{
		Key: key, Owner: owner, Version: r.version, ClaimID: r.claimID, Attempt: r.attempts, Until: until,
	}}, nil
}

func (s *fakeStore) holds(l webhook.Lease) (*fakeRecord, bool) {
	r, ok := s.recs[l.Key]
	return r, ok && r.owner == l.Owner && r.version == l.Version && r.status == webhook.StatusProcessing
}

func (s *fakeStore) Heartbeat(_ context.Context, l webhook.Lease, until time.Time) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls["Heartbeat"]++
	r, ok := s.holds(l)
	if !ok || s.heartbeatLost {
		return false, nil
	}
	r.until = until
	return true, nil
}

func (s *fakeStore) move(op string, l webhook.Lease, to webhook.Status, lastError string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls[op]++
	r, ok := s.holds(l)
	if !ok {
		return false, nil
	}
	r.status, r.owner, r.until, r.lastError = to, "", time.Time{}, lastError
	r.version++
	return true, nil
}

func (s *fakeStore) Complete(_ context.Context, l webhook.Lease, _ time.Time) (bool, error) {
	return s.move("Complete", l, webhook.StatusSucceeded, "")
}

func (s *fakeStore) Retry(_ context.Context, l webhook.Lease, e string) (bool, error) {
	return s.move("Retry", l, webhook.StatusRetry, e)
}

func (s *fakeStore) Fail(_ context.Context, l webhook.Lease, e string) (bool, error) {
	return s.move("Fail", l, webhook.StatusFailed, e)
}

func (s *fakeStore) Hold(_ context.Context, l webhook.Lease, h webhook.Hold) (bool, error) {
	return s.move("Hold", l, webhook.StatusHeld, h.Reason)
}

func (s *fakeStore) Journal(_ context.Context, l webhook.Lease) ([]webhook.JournalEntry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls["Journal"]++
	return append([]webhook.JournalEntry(nil), mapsValues(s.journal[l.Key])...), nil
}

func mapsValues(m map[string]webhook.JournalEntry) []webhook.JournalEntry {
	var out []webhook.JournalEntry
	for v := range maps.Values(m) {
		out = append(out, v)
	}
	return out
}

func (s *fakeStore) SaveStep(_ context.Context, l webhook.Lease, e webhook.JournalEntry) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls["SaveStep"]++
	if _, ok := s.holds(l); !ok {
		return false, nil
	}
	if s.journal[l.Key] == nil {
		s.journal[l.Key] = map[string]webhook.JournalEntry{}
	}
	s.journal[l.Key][e.Handler+"#"+e.Step] = e
	return true, nil
}

// fakeQueue records visibility changes and dead letters.
type fakeQueue struct {
	mu          sync.Mutex
	visibility  map[string]time.Duration
	deadLetters []deadLetter
}

type deadLetter struct {
	key, reason string
	body        []byte
}

func newFakeQueue() *fakeQueue { return &fakeQueue{visibility: map[string]time.Duration{}} }

func (q *fakeQueue) ChangeVisibility(_ context.Context, handle string, d time.Duration) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.visibility[handle] = d
	return nil
}

func (q *fakeQueue) SendDeadLetter(_ context.Context, key string, body []byte, reason string) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.deadLetters = append(q.deadLetters, deadLetter{key: key, reason: reason, body: body})
	return nil
}

func (q *fakeQueue) dead() []deadLetter {
	q.mu.Lock()
	defer q.mu.Unlock()
	return append([]deadLetter(nil), q.deadLetters...)
}

// fakePublisher records published events.
type fakePublisher struct {
	mu     sync.Mutex
	events []webhook.Outcome
}

func (p *fakePublisher) Publish(_ context.Context, evs []webhook.Outcome) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.events = append(p.events, evs...)
	return nil
}

func delivery(key, provider, typ string, payload any) Message {
	b, _ := json.Marshal(payload)
	env := webhook.Envelope{Key: key, Provider: provider, Tenant: "t1", Type: typ, ReceivedAt: time.Now().Add(-time.Second), Payload: b}
	body, _ := json.Marshal(env)
	return Message{MessageID: "m-" + key, ReceiptHandle: "rh-" + key, Body: body}
}

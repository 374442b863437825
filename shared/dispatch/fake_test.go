package dispatch

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/store"
	"github.com/hookwall/hookwall/shared/store/memstore"
	"github.com/hookwall/hookwall/shared/webhook"
)

// table is the tests' events table: a memstore.Store (the table's
// semantics, which storetest holds it to against DynamoDB as well), counting
// the calls the tests ask about, its heartbeats lost on demand.
type table struct {
	*memstore.Store
	mu    sync.Mutex
	calls map[string]int
	// heartbeatLost makes Heartbeat report a lost lease.
	heartbeatLost bool
}

func newTable() *table {
	return &table{Store: memstore.New(memstore.Config{}), calls: map[string]int{}}
}

// put seeds the record of key in status st: version 1, claim "c-"+key, live
// for an hour.
func (s *table) put(key string, st webhook.Status) {
	s.Put(&store.Record{Key: key, Status: st, Version: 1, ClaimID: "c-" + key, ExpiresAt: time.Now().Add(time.Hour).Unix()})
}

// get returns the record of key; a missing one fails the test.
func (s *table) get(t testing.TB, key string) *store.Record {
	t.Helper()
	rec, err := s.Get(context.Background(), key)
	if err != nil || rec == nil {
		t.Fatalf("record %s: %v (missing: %v)", key, err, rec == nil)
	}
	return rec
}

// update rewrites the record of key with set applied, as a plain PutItem.
func (s *table) update(t testing.TB, key string, set func(*store.Record)) {
	t.Helper()
	rec := s.get(t, key)
	set(rec)
	s.Put(rec)
}

// journal seeds entries in the journal of key's claim: the record is leased
// for the write and then put back as it was.
func (s *table) journal(t testing.TB, key string, entries ...webhook.JournalEntry) {
	t.Helper()
	rec := s.get(t, key)
	leased := *rec
	leased.Status, leased.LeaseOwner = webhook.StatusProcessing, "seed"
	s.Put(&leased)
	l := webhook.Lease{Key: key, Owner: "seed", Version: rec.Version, ClaimID: rec.ClaimID}
	if ok, err := s.SaveSteps(context.Background(), l, entries); !ok || err != nil {
		t.Fatalf("seed the journal of %s: saved %v, %v", key, ok, err)
	}
	s.Put(rec)
}

// entry returns the journal entry handler/step of key's claim.
func (s *table) entry(t testing.TB, key, handler, step string) (webhook.JournalEntry, bool) {
	t.Helper()
	rec := s.get(t, key)
	entries, err := s.Steps(context.Background(), key, rec.ClaimID)
	if err != nil {
		t.Fatalf("journal of %s: %v", key, err)
	}
	i := slices.IndexFunc(entries, func(e webhook.JournalEntry) bool { return e.Handler == handler && e.Step == step })
	if i < 0 {
		return webhook.JournalEntry{}, false
	}
	return entries[i], true
}

func (s *table) called(op string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls[op]++
}

func (s *table) count(op string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[op]
}

func (s *table) Heartbeat(ctx context.Context, l webhook.Lease, until time.Time) (bool, error) {
	s.mu.Lock()
	lost := s.heartbeatLost
	s.mu.Unlock()
	if lost {
		return false, nil
	}
	return s.Store.Heartbeat(ctx, l, until)
}

func (s *table) Complete(ctx context.Context, l webhook.Lease, retainUntil time.Time) (bool, error) {
	s.called("Complete")
	return s.Store.Complete(ctx, l, retainUntil)
}

func (s *table) CompleteSteps(ctx context.Context, l webhook.Lease, retainUntil time.Time, entries []webhook.JournalEntry) (bool, error) {
	s.called("CompleteSteps")
	return s.Store.CompleteSteps(ctx, l, retainUntil, entries)
}

func (s *table) Retry(ctx context.Context, l webhook.Lease, lastError string) (bool, error) {
	s.called("Retry")
	return s.Store.Retry(ctx, l, lastError)
}

func (s *table) Fail(ctx context.Context, l webhook.Lease, lastError string) (bool, error) {
	s.called("Fail")
	return s.Store.Fail(ctx, l, lastError)
}

func (s *table) Journal(ctx context.Context, l webhook.Lease) ([]webhook.JournalEntry, error) {
	s.called("Journal")
	return s.Store.Journal(ctx, l)
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

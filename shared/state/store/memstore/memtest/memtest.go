// Package memtest is the engines' tests' events table: a [memstore.Store]
// (the table's semantics, which storetest holds it to against DynamoDB as
// well) that counts the calls the tests ask about, records the journal
// writes that landed, loses its heartbeats or its journal writes on demand,
// and seeds records and journals in states the engines' API cannot reach
// directly. It takes the place of the hand-written fake stores of the
// engines' tests.
package memtest

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/state/store"
	"github.com/hookwall/hookwall/shared/state/store/memstore"
)

// Table is a memstore.Store for one test. It is safe for concurrent use.
type Table struct {
	*memstore.Store
	t   testing.TB
	now func() time.Time

	mu             sync.Mutex
	calls          map[string]int
	saves          []string
	heartbeatsLost bool
	savesLost      bool
}

// New returns an empty table for t on the clock now (nil: time.Now).
func New(t testing.TB, now func() time.Time) *Table {
	if now == nil {
		now = time.Now
	}
	return &Table{Store: memstore.New(memstore.Config{Now: now}), t: t, now: now, calls: map[string]int{}}
}

// Seed puts rec as it is, after setting what it leaves unset: version 1,
// claim "c-"+key, live for an hour on the table's clock.
func (s *Table) Seed(rec store.Record) {
	if rec.Version == 0 {
		rec.Version = 1
	}
	if rec.ClaimID == "" {
		rec.ClaimID = "c-" + rec.Key
	}
	if rec.ExpiresAt == 0 {
		rec.ExpiresAt = s.now().Add(time.Hour).Unix()
	}
	s.Put(&rec)
}

// Record returns the record of key; a failed read or a missing record fails
// the test.
func (s *Table) Record(key string) *store.Record {
	s.t.Helper()
	rec, err := s.Get(context.Background(), key)
	if err != nil || rec == nil {
		s.t.Fatalf("memtest: record %s: %v (missing: %v)", key, err, rec == nil)
	}
	return rec
}

// Update rewrites the record of key with set applied, as a plain PutItem.
func (s *Table) Update(key string, set func(*store.Record)) {
	s.t.Helper()
	rec := s.Record(key)
	set(rec)
	s.Put(rec)
}

// SeedJournal writes entries in the journal of the claim of key's record:
// the record is leased for the write and then put back as it was.
func (s *Table) SeedJournal(key string, entries ...webhook.JournalEntry) {
	s.t.Helper()
	rec := s.Record(key)
	leased := *rec
	leased.Status, leased.LeaseOwner = webhook.StatusProcessing, "memtest-seed"
	s.Put(&leased)
	l := webhook.Lease{Key: key, Owner: leased.LeaseOwner, Version: rec.Version, ClaimID: rec.ClaimID}
	if ok, err := s.Store.SaveSteps(context.Background(), l, entries); !ok || err != nil {
		s.t.Fatalf("memtest: seed the journal of %s: saved %v, %v", key, ok, err)
	}
	s.Put(rec)
}

// Entry returns the journal entry handler/step of the claim of key's record.
func (s *Table) Entry(key, handler, step string) (webhook.JournalEntry, bool) {
	s.t.Helper()
	rec := s.Record(key)
	entries, err := s.Steps(context.Background(), key, rec.ClaimID)
	if err != nil {
		s.t.Fatalf("memtest: journal of %s: %v", key, err)
	}
	i := slices.IndexFunc(entries, func(e webhook.JournalEntry) bool { return e.Handler == handler && e.Step == step })
	if i < 0 {
		return webhook.JournalEntry{}, false
	}
	return entries[i], true
}

// Count returns how many times the method op was called.
func (s *Table) Count(op string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[op]
}

// Saves returns the "handler/step" of every journal entry whose write
// landed, in the order written.
func (s *Table) Saves() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.saves)
}

// LoseHeartbeats makes Heartbeat and HeartbeatCompensation report a lost
// lease, without a write.
func (s *Table) LoseHeartbeats() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.heartbeatsLost = true
}

// LoseSaves makes SaveStep and SaveSteps report a lost lease, without a
// write.
func (s *Table) LoseSaves() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.savesLost = true
}

// called counts a call of op and reports whether heartbeats and journal
// writes are lost.
func (s *Table) called(op string) (heartbeatsLost, savesLost bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls[op]++
	return s.heartbeatsLost, s.savesLost
}

// saved records the journal writes of entries that landed.
func (s *Table) saved(held bool, entries []webhook.JournalEntry) {
	if !held {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range entries {
		s.saves = append(s.saves, e.Handler+"/"+e.Step)
	}
}

// AcquireGeneration is memstore's, counted.
func (s *Table) AcquireGeneration(ctx context.Context, key string, gen int64, owner string, until time.Time) (webhook.Acquisition, error) {
	s.called("AcquireGeneration")
	return s.Store.AcquireGeneration(ctx, key, gen, owner, until)
}

// AcquireCompensationGeneration is memstore's, counted.
func (s *Table) AcquireCompensationGeneration(ctx context.Context, key string, gen int64, owner string,
	until time.Time) (webhook.Acquisition, error) {
	s.called("AcquireCompensationGeneration")
	return s.Store.AcquireCompensationGeneration(ctx, key, gen, owner, until)
}

// Heartbeat is memstore's, counted, or a lost lease after LoseHeartbeats.
func (s *Table) Heartbeat(ctx context.Context, l webhook.Lease, until time.Time) (bool, error) {
	if lost, _ := s.called("Heartbeat"); lost {
		return false, nil
	}
	return s.Store.Heartbeat(ctx, l, until)
}

// HeartbeatCompensation is memstore's, counted, or a lost lease after
// LoseHeartbeats.
func (s *Table) HeartbeatCompensation(ctx context.Context, l webhook.Lease, until time.Time) (bool, error) {
	if lost, _ := s.called("HeartbeatCompensation"); lost {
		return false, nil
	}
	return s.Store.HeartbeatCompensation(ctx, l, until)
}

// Journal is memstore's, counted.
func (s *Table) Journal(ctx context.Context, l webhook.Lease) ([]webhook.JournalEntry, error) {
	s.called("Journal")
	return s.Store.Journal(ctx, l)
}

// SaveStep is memstore's, counted and recorded, or a lost lease after
// LoseSaves.
func (s *Table) SaveStep(ctx context.Context, l webhook.Lease, e webhook.JournalEntry) (bool, error) {
	if _, lost := s.called("SaveStep"); lost {
		return false, nil
	}
	held, err := s.Store.SaveStep(ctx, l, e)
	s.saved(held, []webhook.JournalEntry{e})
	return held, err
}

// SaveSteps is memstore's, counted and recorded, or a lost lease after
// LoseSaves.
func (s *Table) SaveSteps(ctx context.Context, l webhook.Lease, entries []webhook.JournalEntry) (bool, error) {
	if _, lost := s.called("SaveSteps"); lost {
		return false, nil
	}
	held, err := s.Store.SaveSteps(ctx, l, entries)
	s.saved(held, entries)
	return held, err
}

// CompleteSteps is memstore's, counted and recorded.
func (s *Table) CompleteSteps(ctx context.Context, l webhook.Lease, retainUntil time.Time, entries []webhook.JournalEntry) (bool, error) {
	s.called("CompleteSteps")
	held, err := s.Store.CompleteSteps(ctx, l, retainUntil, entries)
	s.saved(held, entries)
	return held, err
}

// Complete is memstore's, counted.
func (s *Table) Complete(ctx context.Context, l webhook.Lease, retainUntil time.Time) (bool, error) {
	s.called("Complete")
	return s.Store.Complete(ctx, l, retainUntil)
}

// Retry is memstore's, counted.
func (s *Table) Retry(ctx context.Context, l webhook.Lease, lastError string) (bool, error) {
	s.called("Retry")
	return s.Store.Retry(ctx, l, lastError)
}

// Fail is memstore's, counted.
func (s *Table) Fail(ctx context.Context, l webhook.Lease, lastError string) (bool, error) {
	s.called("Fail")
	return s.Store.Fail(ctx, l, lastError)
}

// Compensated is memstore's, counted.
func (s *Table) Compensated(ctx context.Context, l webhook.Lease, retainUntil time.Time) (bool, error) {
	s.called("Compensated")
	return s.Store.Compensated(ctx, l, retainUntil)
}

// Dead is memstore's, counted.
func (s *Table) Dead(ctx context.Context, l webhook.Lease, reason string, retainUntil time.Time) (bool, error) {
	s.called("Dead")
	return s.Store.Dead(ctx, l, reason, retainUntil)
}

// RetryCompensation is memstore's, counted.
func (s *Table) RetryCompensation(ctx context.Context, l webhook.Lease, lastError string) (bool, error) {
	s.called("RetryCompensation")
	return s.Store.RetryCompensation(ctx, l, lastError)
}

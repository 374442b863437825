package compensate

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hookwall/hookwall/shared/webhook"
)

// fakeRecord is one record of fakeStore.
type fakeRecord struct {
	status        webhook.Status
	owner         string
	until         time.Time
	version       int64
	attempts      int
	compensations int
	claimID       string
	lastError     string
	payload       []byte
}

// fakeStore is an in-memory Store with the contract's semantics (the
// compensation lease and its fence), counting calls.
type fakeStore struct {
	mu      sync.Mutex
	now     func() time.Time
	recs    map[string]*fakeRecord
	journal map[string]map[string]webhook.JournalEntry // key -> handler#step -> entry
	calls   map[string]int
	saves   []string // "handler/step" of every SaveStep that landed, in order
	// heartbeatLost makes HeartbeatCompensation report a lost lease;
	// saveLost makes SaveStep report one.
	heartbeatLost bool
	saveLost      bool
}

func newFakeStore(now func() time.Time) *fakeStore {
	return &fakeStore{now: now, recs: map[string]*fakeRecord{}, journal: map[string]map[string]webhook.JournalEntry{},
		calls: map[string]int{}}
}

func (s *fakeStore) put(key string, r fakeRecord) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.version == 0 {
		r.version = 3
	}
	if r.claimID == "" {
		r.claimID = "c-" + key
	}
	s.recs[key] = &r
}

// step journals a forward (or undo) step of key's claim.
func (s *fakeStore) step(key, handler, step string, at time.Time, result string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.journal[key] == nil {
		s.journal[key] = map[string]webhook.JournalEntry{}
	}
	e := webhook.JournalEntry{Handler: handler, Step: step, CompletedAt: at}
	if result != "" {
		e.Result = []byte(result)
	}
	s.journal[key][handler+"#"+step] = e
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

func (s *fakeStore) AcquireCompensationGeneration(ctx context.Context, key string, _ int64, owner string, until time.Time) (webhook.Acquisition, error) {
	return s.AcquireCompensation(ctx, key, owner, until)
}

func (s *fakeStore) AcquireCompensation(_ context.Context, key, owner string, until time.Time) (webhook.Acquisition, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls["AcquireCompensation"]++
	r, ok := s.recs[key]
	now := s.now()
	switch {
	case !ok:
		return webhook.Acquisition{Outcome: webhook.AcquireMissing}, nil
	case r.status.Terminal():
		return webhook.Acquisition{Outcome: webhook.AcquireDone, Status: r.status, Attempts: r.attempts}, nil
	case (r.status == webhook.StatusProcessing || r.status == webhook.StatusCompensating) && r.owner != "" && !r.until.Before(now):
		return webhook.Acquisition{Outcome: webhook.AcquireBusy, Status: r.status, RetryAfter: r.until.Sub(now)}, nil
	}
	from := r.status
	r.status, r.owner, r.until = webhook.StatusCompensating, owner, until
	r.version++
	r.compensations++
	return webhook.Acquisition{Outcome: webhook.Acquired, Status: from, Attempts: r.attempts, LastError: r.lastError,
		Payload: slices.Clone(r.payload), Lease: webhook.Lease{Key: key, Owner: owner, Version: r.version, ClaimID: r.claimID,
			Attempt: r.compensations, Until: until, Status: webhook.StatusCompensating}}, nil
}

func (s *fakeStore) holds(l webhook.Lease) (*fakeRecord, bool) {
	r, ok := s.recs[l.Key]
	return r, ok && r.owner == l.Owner && r.version == l.Version && r.status == webhook.StatusCompensating
}

func (s *fakeStore) HeartbeatCompensation(_ context.Context, l webhook.Lease, until time.Time) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls["HeartbeatCompensation"]++
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

func (s *fakeStore) Compensated(_ context.Context, l webhook.Lease, _ time.Time) (bool, error) {
	return s.move("Compensated", l, webhook.StatusCompensated, "")
}

func (s *fakeStore) Dead(_ context.Context, l webhook.Lease, reason string, _ time.Time) (bool, error) {
	return s.move("Dead", l, webhook.StatusDead, reason)
}

func (s *fakeStore) RequeueCompensation(_ context.Context, l webhook.Lease, lastError string) (bool, error) {
	return s.move("RequeueCompensation", l, webhook.StatusRetry, lastError)
}

func (s *fakeStore) RetryCompensation(_ context.Context, l webhook.Lease, lastError string) (bool, error) {
	return s.move("RetryCompensation", l, webhook.StatusCompensating, lastError)
}

// Journal returns the entries in sort key order, as the table does.
func (s *fakeStore) Journal(_ context.Context, l webhook.Lease) ([]webhook.JournalEntry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls["Journal"]++
	var out []webhook.JournalEntry
	for _, e := range s.journal[l.Key] {
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b webhook.JournalEntry) int {
		return strings.Compare(a.Handler+"#"+a.Step, b.Handler+"#"+b.Step)
	})
	return out, nil
}

func (s *fakeStore) SaveStep(_ context.Context, l webhook.Lease, e webhook.JournalEntry) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls["SaveStep"]++
	if _, ok := s.holds(l); !ok || s.saveLost {
		return false, nil
	}
	if s.journal[l.Key] == nil {
		s.journal[l.Key] = map[string]webhook.JournalEntry{}
	}
	s.journal[l.Key][e.Handler+"#"+e.Step] = e
	s.saves = append(s.saves, e.Handler+"/"+e.Step)
	return true, nil
}

// fakeQueue records visibility changes.
type fakeQueue struct {
	mu  sync.Mutex
	vis map[string]time.Duration
}

func (q *fakeQueue) ChangeVisibility(_ context.Context, rh string, d time.Duration) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.vis == nil {
		q.vis = map[string]time.Duration{}
	}
	q.vis[rh] = d
	return nil
}

func (q *fakeQueue) visibility(rh string) (time.Duration, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	d, ok := q.vis[rh]
	return d, ok
}

// fakePublisher records published outcomes, one slice per call.
type fakePublisher struct {
	mu    sync.Mutex
	calls [][]webhook.Outcome
}

func (p *fakePublisher) Publish(_ context.Context, evs []webhook.Outcome) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls = append(p.calls, slices.Clone(evs))
	return nil
}

func (p *fakePublisher) all() []webhook.Outcome {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []webhook.Outcome
	for _, c := range p.calls {
		out = append(out, c...)
	}
	return out
}

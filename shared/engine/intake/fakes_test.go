package intake

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hookwall/hookwall/shared/aws/queue"
	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/base/webhook/webhooktest"
	"github.com/hookwall/hookwall/shared/state/store"
	"github.com/hookwall/hookwall/shared/state/store/memstore"
)

// memStore is the in-memory events table (memstore.Store, the table's
// conditional semantics) on a settable clock, with failure knobs.
type memStore struct {
	*memstore.Store

	mu      sync.Mutex
	failErr error // every claim fails with it when set
	// applyThenFail makes Claim write the record and still return an error,
	// as a timeout after DynamoDB applied the write does; undoFails makes
	// Unclaim fail.
	applyThenFail bool
	undoFails     bool
	now           func() time.Time
	clock         *webhooktest.Clock
}

func newMemStore() *memStore {
	clk := webhooktest.NewClock(time.Now())
	return &memStore{Store: memstore.New(memstore.Config{Now: clk.Now}), now: clk.Now, clock: clk}
}

func (m *memStore) knobs() (failErr error, applyThenFail, undoFails bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.failErr, m.applyThenFail, m.undoFails
}

func (m *memStore) Claim(ctx context.Context, ev store.NewEvent, window time.Duration) (store.ClaimResult, error) {
	failErr, applyThenFail, _ := m.knobs()
	if failErr != nil {
		return store.ClaimResult{}, failErr
	}
	res, err := m.Store.Claim(ctx, ev, window)
	if err == nil && applyThenFail && res.Outcome == store.Claimed {
		return store.ClaimResult{Record: res.Record}, errors.New("claim: timed out after the write was applied")
	}
	return res, err
}

func (m *memStore) Unclaim(ctx context.Context, rec *store.Record) (bool, error) {
	if _, _, undoFails := m.knobs(); undoFails {
		return false, errors.New("unclaim: dynamodb down")
	}
	return m.Store.Unclaim(ctx, rec)
}

// len counts the live records.
func (m *memStore) len() int { return len(m.Records()) }

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

// setStatus moves the record of key to status (version + 1), as the
// processor would.
func (m *memStore) setStatus(key string, status webhook.Status) {
	r, _ := m.Get(context.Background(), key)
	if r == nil {
		return
	}
	r.Status = status
	r.Version++
	m.Put(r)
}

// processAll moves every RECEIVED record to SUCCEEDED, as the processor
// would: a lease, then its completion (keeping the TTL).
func (m *memStore) processAll() {
	ctx := context.Background()
	for _, r := range m.Records() {
		if r.Status != webhook.StatusReceived {
			continue
		}
		acq, err := m.Acquire(ctx, r.Key, "processor", m.now().Add(time.Minute))
		if err != nil || acq.Outcome != webhook.Acquired {
			panic(fmt.Sprintf("processAll: acquire %s: %v %v", r.Key, acq.Outcome, err))
		}
		if ok, err := m.Complete(ctx, acq.Lease, time.Unix(r.ExpiresAt, 0)); !ok || err != nil {
			panic(fmt.Sprintf("processAll: complete %s: %v %v", r.Key, ok, err))
		}
	}
}

package signer_test

import (
	"context"
	"sync"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/state/store"
)

// recorder claims every event as new and keeps what was claimed.
type recorder struct {
	mu      sync.Mutex
	claimed []store.NewEvent
}

func (r *recorder) Claim(_ context.Context, ev store.NewEvent, _ time.Duration) (store.ClaimResult, error) {
	r.mu.Lock()
	r.claimed = append(r.claimed, ev)
	r.mu.Unlock()
	return store.ClaimResult{Outcome: store.Claimed, Record: &store.Record{Key: ev.Key, Status: webhook.StatusReceived, Version: 1}}, nil
}

func (r *recorder) take() []store.NewEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.claimed
	r.claimed = nil
	return c
}

func (*recorder) Unclaim(context.Context, *store.Record) (bool, error) { return true, nil }
func (*recorder) TakeOverEnqueue(context.Context, *store.Record, time.Duration) (bool, error) {
	return false, nil
}
func (*recorder) RevertEnqueue(context.Context, *store.Record, int64) error  { return nil }
func (*recorder) CountDelivery(context.Context, *store.Record) (bool, error) { return true, nil }
func (*recorder) Send(context.Context, []webhook.Envelope) error             { return nil }
func (*recorder) LoadProgress(context.Context, string) (store.Progress, error) {
	return store.Progress{}, nil
}
func (*recorder) SaveProgress(context.Context, string, store.Progress) error { return nil }

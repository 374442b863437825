package memstore

import (
	"context"
	"slices"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/state/store"
)

// compensable reports whether AcquireCompensation may take r at now: the
// table's condition.
func compensable(r *store.Record, now time.Time) bool {
	if r == nil || r.ExpiresAt < now.Unix() {
		return false
	}
	switch r.Status {
	case webhook.StatusFailed, webhook.StatusReceived, webhook.StatusRetry:
		return true
	case webhook.StatusProcessing, webhook.StatusCompensating:
		return r.LeaseUntil == 0 || r.LeaseUntil < now.UnixMilli()
	}
	return false
}

// AcquireCompensation takes the compensation lease of key for owner until
// the given time, as [store.Table.AcquireCompensation]: from FAILED,
// RECEIVED or RETRY, or PROCESSING or COMPENSATING without a live lease, on
// a record that has not expired; COMPENSATING, version+1, compensations+1
// (the lease's Attempt), the history entry. Acquired reports in Status the
// status the record came from.
func (s *Store) AcquireCompensation(ctx context.Context, key, owner string, until time.Time) (webhook.Acquisition, error) {
	return s.AcquireCompensationGeneration(ctx, key, webhook.AnyGeneration, owner, until)
}

// AcquireCompensationGeneration is AcquireCompensation for a dead letter of
// generation gen, as [store.Table.AcquireCompensationGeneration]: a live
// record of a newer generation is AcquireStale.
func (s *Store) AcquireCompensationGeneration(_ context.Context, key string, gen int64, owner string, until time.Time) (webhook.Acquisition, error) {
	return s.acquire(key, gen, compensable, store.LostCompensation, func(r *store.Record, now time.Time) webhook.Acquisition {
		from := r.Status
		s.takeLease(r, now, webhook.StatusCompensating, owner, until, &r.Compensations)
		acq := acquired(r, r.CompensationLease())
		acq.Status, acq.Payload = from, slices.Clone([]byte(r.Payload))
		return acq
	}), nil
}

// HeartbeatCompensation extends the compensation lease l to until if it
// still holds the record (owner, version, COMPENSATING), as
// [store.Table.HeartbeatCompensation]; the version is unchanged.
func (s *Store) HeartbeatCompensation(_ context.Context, l webhook.Lease, until time.Time) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.recs[l.Key]
	if !fenced(r, l, webhook.StatusCompensating) {
		return false, nil
	}
	r.LeaseUntil = until.UnixMilli()
	r.UpdatedAt = s.now().UnixMilli()
	return true, nil
}

// Compensated moves the record to COMPENSATED until retainUntil, clears the
// lease and leaves the sweep attributes alone, fenced on l, as
// [store.Table.Compensated].
func (s *Store) Compensated(_ context.Context, l webhook.Lease, retainUntil time.Time) (bool, error) {
	return s.transition(l, webhook.StatusCompensating, webhook.StatusCompensated, "", func(r *store.Record) {
		r.ExpiresAt = retainUntil.Unix()
	}), nil
}

// Dead moves the record to DEAD with lastError = reason until retainUntil,
// clears the lease and leaves the sweep attributes alone, fenced on l, as
// [store.Table.Dead].
func (s *Store) Dead(_ context.Context, l webhook.Lease, reason string, retainUntil time.Time) (bool, error) {
	return s.transition(l, webhook.StatusCompensating, webhook.StatusDead, reason, func(r *store.Record) {
		r.ExpiresAt = retainUntil.Unix()
		r.LastError = reason
	}), nil
}

// RetryCompensation gives the compensation lease back with lastError: the
// record stays COMPENSATING without a lease at version+1, fenced on l, as
// [store.Table.RetryCompensation].
func (s *Store) RequeueCompensation(_ context.Context, l webhook.Lease, lastError string) (bool, error) {
	return s.transition(l, webhook.StatusCompensating, webhook.StatusRetry, lastError, func(r *store.Record) {
		r.LastError = lastError
	}), nil
}

// RetryCompensation gives the compensation lease back, as
// [store.Table.RetryCompensation].
func (s *Store) RetryCompensation(_ context.Context, l webhook.Lease, lastError string) (bool, error) {
	return s.transition(l, webhook.StatusCompensating, webhook.StatusCompensating, lastError, func(r *store.Record) {
		r.LastError = lastError
	}), nil
}

package memstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/state/store"
)

// Hold moves the record PROCESSING → HELD under h, fenced on l, as
// [store.Table.Hold]: attempts = l.Attempt − 1, the lease cleared, the held
// and sweep attributes set (sweepAt = h.RecheckAt, never before now),
// expiresAt raised to
// h.RetainUntil.
func (s *Store) Hold(_ context.Context, l webhook.Lease, h webhook.Hold) (bool, error) {
	if h.On == "" || h.RecheckAt.IsZero() {
		return false, fmt.Errorf("memstore: hold %s: %w", l.Key, errors.New("a hold needs the scope it waits on and a recheck time"))
	}
	n := max(int64(l.Attempt)-1, 0)
	given := l
	given.Attempt = int(n)
	now := s.now()
	return s.transition(given, webhook.StatusProcessing, webhook.StatusHeld, h.Reason, func(r *store.Record) {
		r.Attempts = n
		r.HeldOn, r.HeldSince, r.RecheckAt = h.On, now.UnixMilli(), h.RecheckAt.UnixMilli()
		r.HeldReason = webhook.Truncate(h.Reason, webhook.MaxHistoryError)
		if h.Target != "" {
			r.Target = h.Target
		}
		if h.GiveBack {
			r.GivenBack = int64(l.GivenBack) + 1
		}
		r.SweepShard, r.SweepAt = shardName(r.Key), sweepAtFrom(h.RecheckAt, now)
		if !l.ExpiresAt.IsZero() {
			r.ExpiresAt = max(l.ExpiresAt.Unix(), h.RetainUntil.Unix())
		}
	}), nil
}

// Held lists the records waiting on scope on, oldest heldSince first, at
// most limit from cursor, as [store.Table.Held] queries the held index
// (expired records included, as the index lists them). The cursor has the
// index's key attributes (pk, sk, heldOn, heldSince).
func (s *Store) Held(_ context.Context, on string, limit int32,
	cursor map[string]types.AttributeValue) ([]store.HeldRecord, map[string]types.AttributeValue, error) {
	if on == "" || limit <= 0 {
		return nil, nil, fmt.Errorf("memstore: held: need a scope and a positive limit, got %q and %d", on, limit)
	}
	key, at, ok, err := heldIndex.read(cursor)
	if err != nil {
		return nil, nil, err
	}
	found := s.heldOn(on)
	if ok {
		after := store.HeldRecord{Key: key, HeldSince: at}
		found = slices.DeleteFunc(found, func(e store.HeldRecord) bool { return compareHeld(e, after) <= 0 })
	}
	return page(found, limit, func(last store.HeldRecord) map[string]types.AttributeValue {
		return heldIndex.next(last.Key, on, last.HeldSince)
	})
}

// HeldCount counts the records waiting on scope on, as [store.Table.HeldCount].
func (s *Store) HeldCount(_ context.Context, on string) (int, error) {
	return len(s.heldOn(on)), nil
}

// heldOn returns the index entries of scope on, in index order.
func (s *Store) heldOn(on string) []store.HeldRecord {
	s.mu.Lock()
	var found []store.HeldRecord
	for _, r := range s.recs {
		if r.HeldOn == on {
			found = append(found, store.HeldRecord{Key: r.Key, HeldSince: time.UnixMilli(r.HeldSince)})
		}
	}
	s.mu.Unlock()
	slices.SortFunc(found, compareHeld)
	return found
}

// compareHeld orders index entries as the index does: by heldSince, then key.
func compareHeld(a, b store.HeldRecord) int {
	return cmp.Or(a.HeldSince.Compare(b.HeldSince), cmp.Compare(a.Key, b.Key))
}

// Release moves the HELD record rec to RETRY if it is still HELD at
// rec.Version and has not expired, as [store.Table.Release]: the held
// attributes removed, enqueuedAt and updatedAt = now, sweepAt = sweepAt
// (never before now).
// On true, rec is the record as written.
func (s *Store) Release(_ context.Context, rec *store.Record, sweepAt time.Time) (bool, error) {
	if rec.Status != webhook.StatusHeld {
		return false, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	r := s.recs[rec.Key]
	if r == nil || r.Expired(now) || r.Version != rec.Version || r.Status != webhook.StatusHeld {
		return false, nil
	}
	r.Status, r.Version = webhook.StatusRetry, r.Version+1
	r.UpdatedAt, r.EnqueuedAt = now.UnixMilli(), now.UnixMilli()
	r.SweepShard, r.SweepAt = shardName(r.Key), sweepAtFrom(sweepAt, now)
	r.HeldOn, r.HeldSince, r.RecheckAt, r.HeldReason = "", 0, 0, ""
	s.addHistory(r, now, webhook.StatusHeld, "", int(r.Attempts), "")
	c := clone(r)
	c.Payload = rec.Payload // the caller's copy keeps what it read
	*rec = *c
	return true, nil
}

// Recheck moves recheckAt and sweepAt (never before now) of the HELD
// record rec to at and
// raises its expiresAt to retainUntil if it is still HELD at rec.Version,
// as [store.Table.Recheck]. On true, rec carries the new values.
func (s *Store) Recheck(_ context.Context, rec *store.Record, at, retainUntil time.Time) (bool, error) {
	if rec.Status != webhook.StatusHeld {
		return false, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.recs[rec.Key]
	if r == nil || r.Version != rec.Version || r.Status != webhook.StatusHeld {
		return false, nil
	}
	r.RecheckAt, r.SweepShard, r.SweepAt = at.UnixMilli(), shardName(r.Key), sweepAtFrom(at, s.now())
	if r.ExpiresAt > 0 {
		r.ExpiresAt = max(r.ExpiresAt, retainUntil.Unix())
	}
	rec.RecheckAt, rec.SweepShard, rec.SweepAt, rec.ExpiresAt = r.RecheckAt, r.SweepShard, r.SweepAt, r.ExpiresAt
	return true, nil
}

// Bury ends rec as DEAD with lastError = reason, as [store.Table.Bury]:
// pinned to its version, status and claim id, refused under a live lease;
// the lease and held attributes cleared, expiresAt raised to retainUntil,
// version+1 and the history entry.
func (s *Store) Bury(_ context.Context, rec *store.Record, reason string, retainUntil time.Time) (bool, error) {
	return s.unlessFinal(rec, func(r *store.Record, now time.Time) bool {
		if r == nil || r.Version != rec.Version || r.Status != rec.Status || (rec.ClaimID != "" && r.ClaimID != rec.ClaimID) ||
			r.LeaseUntil >= now.UnixMilli() {
			return false
		}
		from := r.Status
		reason = webhook.Truncate(reason, webhook.MaxHistoryError)
		r.Status, r.Version, r.UpdatedAt, r.LastError = webhook.StatusDead, r.Version+1, now.UnixMilli(), reason
		r.LeaseOwner, r.LeaseUntil = "", 0
		r.HeldOn, r.HeldSince, r.RecheckAt, r.HeldReason = "", 0, 0, ""
		if r.ExpiresAt > 0 {
			r.ExpiresAt = max(r.ExpiresAt, retainUntil.Unix())
		}
		s.addHistory(r, now, from, "", int(r.Attempts), reason)
		rec.Status, rec.Version, rec.UpdatedAt, rec.LastError, rec.ExpiresAt = r.Status, r.Version, r.UpdatedAt, r.LastError, r.ExpiresAt
		rec.LeaseOwner, rec.LeaseUntil = "", 0
		rec.HeldOn, rec.HeldSince, rec.RecheckAt, rec.HeldReason = "", 0, 0, ""
		return true
	}), nil
}

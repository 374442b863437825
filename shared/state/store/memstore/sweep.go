package memstore

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/state/store"
)

// Stuck lists the records of sweep shard shard whose sweepAt is after
// after (zero: from the start) and at or before before, terminal ones
// included, oldest first, at most limit from cursor, as
// [store.Table.Stuck] queries the sweep index: records whose TTL passed are
// listed too (DynamoDB deletes them late), and a full page returns a cursor
// even when nothing follows. The cursor has the index's key attributes
// (pk, sk, sweepShard, sweepAt), as DynamoDB's LastEvaluatedKey.
func (s *Store) Stuck(_ context.Context, shard int, from, before time.Time, limit int32,
	cursor map[string]types.AttributeValue) ([]store.StuckRecord, map[string]types.AttributeValue, error) {
	if shard < 0 || shard >= store.SweepShards {
		return nil, nil, fmt.Errorf("memstore: stuck: shard %d is not in 0..%d", shard, store.SweepShards-1)
	}
	if limit <= 0 {
		return nil, nil, fmt.Errorf("memstore: stuck: limit %d is not positive", limit)
	}
	name := store.ShardName(shard)
	var after *store.StuckRecord
	if key, at, ok, err := sweepIndex.read(cursor); err != nil {
		return nil, nil, err
	} else if ok {
		after = &store.StuckRecord{Key: key, SweepAt: at}
	}
	s.mu.Lock()
	var found []store.StuckRecord
	for _, r := range s.recs {
		if r.SweepShard != name || r.SweepAt == 0 || r.SweepAt > before.UnixMilli() ||
			(!from.IsZero() && r.SweepAt <= from.UnixMilli()) {
			continue
		}
		e := store.StuckRecord{Key: r.Key, SweepAt: time.UnixMilli(r.SweepAt)}
		if after != nil && compareStuck(e, *after) <= 0 {
			continue
		}
		found = append(found, e)
	}
	s.mu.Unlock()
	slices.SortFunc(found, compareStuck)
	return page(found, limit, func(last store.StuckRecord) map[string]types.AttributeValue {
		return sweepIndex.next(last.Key, name, last.SweepAt)
	})
}

// compareStuck orders index entries as the index does: by sweepAt, then key.
func compareStuck(a, b store.StuckRecord) int {
	return cmp.Or(a.SweepAt.Compare(b.SweepAt), cmp.Compare(a.Key, b.Key))
}

// MarkRequeued sets enqueuedAt = now and sweepAt = now + SweepAfter if the
// record is still as rec describes it (version, status, claim id,
// enqueuedAt) and has not expired, as [store.Table.MarkRequeued]; a final
// rec is refused without a write. On true, rec carries the new values.
func (s *Store) MarkRequeued(_ context.Context, rec *store.Record) (bool, error) {
	return s.unlessFinal(rec, func(r *store.Record, now time.Time) bool {
		if r == nil || r.ExpiresAt < now.Unix() || r.Version != rec.Version || r.Status != rec.Status ||
			(rec.ClaimID != "" && r.ClaimID != rec.ClaimID) || r.EnqueuedAt != rec.EnqueuedAt {
			return false
		}
		r.EnqueuedAt = now.UnixMilli()
		r.SweepShard, r.SweepAt = shardName(r.Key), now.Add(s.sweepAfter).UnixMilli()
		rec.EnqueuedAt, rec.SweepShard, rec.SweepAt = r.EnqueuedAt, r.SweepShard, r.SweepAt
		return true
	}), nil
}

// unlessFinal runs write on the stored record of rec (nil when there is
// none) at now, under the lock, and returns its report; a final rec is
// refused (false) without a look at the table.
func (s *Store) unlessFinal(rec *store.Record, write func(r *store.Record, now time.Time) bool) bool {
	if rec.Status.Terminal() {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return write(s.recs[rec.Key], s.now())
}

// Resweep moves the record's sweepAt to at (never before now) if it is still at rec.Version
// (and claim id), as [store.Table.Resweep]; a final rec is refused without
// a write. On true, rec carries the new values.
func (s *Store) Resweep(_ context.Context, rec *store.Record, at time.Time) (bool, error) {
	if rec.Status.Terminal() {
		return false, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.recs[rec.Key]
	if r == nil || r.Version != rec.Version || (rec.ClaimID != "" && r.ClaimID != rec.ClaimID) {
		return false, nil
	}
	r.SweepShard, r.SweepAt = shardName(r.Key), sweepAtFrom(at, s.now())
	rec.SweepShard, rec.SweepAt = r.SweepShard, r.SweepAt
	return true, nil
}

// Replay sends the record of key back to RECEIVED, as [store.Table.Replay]:
// refused for SUCCEEDED without Force, for a live lease and for a state not
// in opts.From; missing for an
// absent or expired record.
func (s *Store) Replay(_ context.Context, key string, opts store.ReplayOptions) (store.ReplayResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	r := s.recs[key]
	if r == nil || r.Expired(now) {
		return store.ReplayResult{Outcome: store.ReplayMissing}, nil
	}
	if len(opts.From) > 0 && !slices.Contains(opts.From, r.Status) {
		return store.ReplayResult{Outcome: store.ReplayRefused, Record: clone(r)}, nil
	}
	switch r.Status {
	case webhook.StatusSucceeded:
		if !opts.Force {
			return store.ReplayResult{Outcome: store.ReplayRefused, Record: clone(r)}, nil
		}
	case webhook.StatusProcessing, webhook.StatusCompensating:
		if r.LeaseUntil >= now.UnixMilli() {
			return store.ReplayResult{Outcome: store.ReplayRefused, Record: clone(r)}, nil
		}
	}
	from := r.Status
	r.Status = webhook.StatusReceived
	r.Version++
	r.Attempts, r.Compensations = 0, 0
	r.LeaseOwner, r.LeaseUntil, r.LastError = "", 0, ""
	r.HeldOn, r.HeldSince, r.RecheckAt, r.HeldReason = "", 0, 0, ""
	r.EnqueuedAt, r.UpdatedAt = now.UnixMilli(), now.UnixMilli()
	r.SweepShard, r.SweepAt = shardName(key), now.Add(s.sweepAfter).UnixMilli()
	r.ExpiresAt = max(r.ExpiresAt, now.Add(opts.Window).Unix())
	r.Generation++
	if opts.FreshSteps {
		r.ClaimID = newClaimID()
	}
	s.addHistory(r, now, from, "", 0, "")
	return store.ReplayResult{Outcome: store.Replayed, Record: clone(r)}, nil
}

// sweepAtFrom is the sweepAt a write at now stores for at: at, but never
// before now, as on the table (see [store.SweepIndex]).
func sweepAtFrom(at, now time.Time) int64 {
	return max(at.UnixMilli(), now.UnixMilli())
}

// SweepCursor returns the sweeper's cursor of shard (zero when it has
// none), as [store.Table.SweepCursor].
func (s *Store) SweepCursor(_ context.Context, shard int) (time.Time, error) {
	if shard < 0 || shard >= store.SweepShards {
		return time.Time{}, fmt.Errorf("memstore: sweep cursor: shard %d is not in 0..%d", shard, store.SweepShards-1)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ms, ok := s.cursors[shard]
	if !ok {
		return time.Time{}, nil
	}
	return time.UnixMilli(ms), nil
}

// AdvanceSweepCursor moves the cursor of shard to to, only forward, as
// [store.Table.AdvanceSweepCursor] (false: already at or past it).
func (s *Store) AdvanceSweepCursor(_ context.Context, shard int, to time.Time) (bool, error) {
	if shard < 0 || shard >= store.SweepShards {
		return false, fmt.Errorf("memstore: advance sweep cursor: shard %d is not in 0..%d", shard, store.SweepShards-1)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if ms, ok := s.cursors[shard]; ok && ms >= to.UnixMilli() {
		return false, nil
	}
	if s.cursors == nil {
		s.cursors = map[int]int64{}
	}
	s.cursors[shard] = to.UnixMilli()
	return true, nil
}

// GetMany reads the records of keys (at most [store.MaxGetMany]) in the
// order of keys, nil for an absent or expired one, as
// [store.Table.GetMany].
func (s *Store) GetMany(_ context.Context, keys []string) ([]*store.Record, error) {
	if len(keys) > store.MaxGetMany {
		return nil, fmt.Errorf("memstore: get many: %d keys, more than %d", len(keys), store.MaxGetMany)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	out := make([]*store.Record, len(keys))
	for i, k := range keys {
		if r := s.recs[k]; r != nil && !r.Expired(now) {
			out[i] = clone(r)
		}
	}
	return out, nil
}

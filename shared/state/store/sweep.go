package store

import (
	"context"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookwall/hookwall/shared/base/webhook"
)

// SweepIndex is the sweeper's global secondary index: partition key
// sweepShard (S), sort key sweepAt (N), projection KEYS_ONLY. It is sparse:
// a record carries its attributes from its claim until TTL deletes it; the
// writes that make a record terminal leave them alone (a KEYS_ONLY index is
// written only when its key attributes change, so a completion costs the
// index nothing), and the sweeper passes terminal entries with a cursor
// per shard ([Table.SweepCursor]).
//
// Every write that sets sweepAt sets it to a time at or after the moment
// of the write (its own clock): a claim, MarkRequeued and Replay to now +
// SweepAfter, Resweep, Hold, Recheck and Release to the time asked for but
// never earlier than now. The sweeper's cursor rests on
// it: an entry never moves into the part of a shard the cursor has passed
// (shared/engine/sweep's package doc).
const SweepIndex = "sweep"

// SweepShards is the number of sweepShard values ("00".."ff", see
// [ShardName]), so that the index never forms one hot partition: every
// unique event writes the index once (its claim; a re-enqueue or a resweep
// moves the entry, which writes it twice), and one partition takes 1,000
// WCU/s, so 16 shards would cap the whole system at about 16,000 unique
// events/s (docs/SCALE.md); 256 take it past 200,000.
// The sweeper queries every shard name; the earlier names "00".."15" are
// among them, so records written with 16 shards are still found.
const SweepShards = 256

// ShardOf returns the sweep shard of key: fnv32a(key) mod [SweepShards].
func ShardOf(key string) int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(key))
	return int(h.Sum32() % SweepShards)
}

// ShardName is the stored form of a shard: two lowercase hex digits.
func ShardName(shard int) string { return fmt.Sprintf("%02x", shard) }

func shardName(shard int) string { return ShardName(shard) }

// checkShard refuses a shard outside 0..SweepShards-1, naming op.
func checkShard(op string, shard int) error {
	if shard < 0 || shard >= SweepShards {
		return fmt.Errorf("store: %s: shard %d is not in 0..%d", op, shard, SweepShards-1)
	}
	return nil
}

// StuckRecord is one entry of the sweep index: a record whose sweepAt is
// due (terminal records are among them).
type StuckRecord struct {
	// Key is the event key.
	Key string
	// SweepAt is the record's sweepAt.
	SweepAt time.Time
}

// sweepAtFrom is the sweepAt a write at now stores for at: at, but never
// before now (see [SweepIndex]).
func sweepAtFrom(at, now time.Time) int64 {
	return max(at.UnixMilli(), now.UnixMilli())
}

// Stuck queries the sweep index's partition shard for the due entries, those
// whose sweepAt is after after (after zero: from the start) and at or before
// before: at most limit of them, starting at cursor (nil: from the start),
// oldest sweepAt first (then by key). Terminal records are among them now:
// their entries stay until TTL deletes them. It returns the cursor of the
// next page, nil when there is none (a full page may be followed by an
// empty one). It is one Query, never a Scan; the index is eventually
// consistent and also lists records whose TTL passed but that DynamoDB has
// not deleted yet, so read the record before acting on it.
func (t *Table) Stuck(ctx context.Context, shard int, after, before time.Time, limit int32,
	cursor map[string]types.AttributeValue) ([]StuckRecord, map[string]types.AttributeValue, error) {
	if err := checkShard("stuck", shard); err != nil {
		return nil, nil, err
	}
	if limit <= 0 {
		return nil, nil, fmt.Errorf("store: stuck: limit %d is not positive", limit)
	}
	values := map[string]types.AttributeValue{
		":shard":  avString(shardName(shard)),
		":before": avInt(before.UnixMilli()),
	}
	cond := "#shard = :shard AND #at <= :before"
	if !after.IsZero() {
		if after.UnixMilli() >= before.UnixMilli() {
			return nil, nil, nil // an empty range (BETWEEN would refuse it)
		}
		cond = "#shard = :shard AND #at BETWEEN :after AND :before"
		values[":after"] = avInt(after.UnixMilli() + 1)
	}
	recs, next, err := queryIndex(ctx, t, &dynamodb.QueryInput{
		IndexName:                 aws.String(SweepIndex),
		KeyConditionExpression:    aws.String(cond),
		ExpressionAttributeNames:  map[string]string{"#shard": AttrSweepShard, "#at": AttrSweepAt},
		ExpressionAttributeValues: values,
		Limit:                     aws.Int32(limit),
		ExclusiveStartKey:         cursor,
	}, AttrSweepAt, func(key string, at time.Time) StuckRecord { return StuckRecord{Key: key, SweepAt: at} })
	if err != nil {
		return nil, nil, fmt.Errorf("store: stuck shard %d: %w", shard, err)
	}
	return recs, next, nil
}

// MarkRequeued records that the sweeper re-enqueued rec: enqueuedAt = now
// and sweepAt = now + SweepAfter (and its sweep shard), on condition that
// the record is still as rec describes it (version, status, claim id and
// enqueuedAt, absent when rec's is 0) and has not expired. It is not a
// transition: the version and the history are unchanged. It reports false
// when the record moved on (leave it alone), and for a final rec, without
// writing; on true, rec carries the new enqueuedAt and sweep attributes.
func (t *Table) MarkRequeued(ctx context.Context, rec *Record) (bool, error) {
	if rec.Status.Terminal() {
		return false, nil
	}
	now := t.now()
	shard, at := shardName(ShardOf(rec.Key)), now.Add(t.sweepAfter).UnixMilli()
	w := newWrite().
		sets(map[string]types.AttributeValue{AttrEnqueuedAt: avInt(now.UnixMilli()), AttrSweepShard: avString(shard), AttrSweepAt: avInt(at)}).
		when("attribute_exists(pk) AND (attribute_not_exists(expiresAt) OR expiresAt >= :nowSec) AND version = :version AND #s = :status",
			map[string]types.AttributeValue{":nowSec": avInt(now.Unix()), ":version": avInt(rec.Version), ":status": avString(string(rec.Status))})
	if rec.ClaimID != "" {
		w.when("claimId = :claim", map[string]types.AttributeValue{":claim": avString(rec.ClaimID)})
	}
	if rec.EnqueuedAt == 0 {
		w.when("attribute_not_exists(enqueuedAt)", nil)
	} else {
		w.when("enqueuedAt = :enq", map[string]types.AttributeValue{":enq": avInt(rec.EnqueuedAt)})
	}
	_, err := t.update(ctx, rec.Key, w, types.ReturnValueNone, false)
	ok, err := fenced(err, "mark requeued", rec.Key)
	if ok {
		rec.EnqueuedAt, rec.SweepShard, rec.SweepAt = now.UnixMilli(), shard, at
	}
	return ok, err
}

// Resweep moves rec's sweepAt to at, or to now if at has passed (and sets
// its sweep shard), so the sweeper looks at it again then, on condition that the record is still at
// rec.Version (and claim id). It reports false when the record moved on,
// and for a final rec, without writing; on true, rec carries the new sweep
// attributes.
func (t *Table) Resweep(ctx context.Context, rec *Record, at time.Time) (bool, error) {
	if rec.Status.Terminal() {
		return false, nil
	}
	shard, sweepAt := shardName(ShardOf(rec.Key)), sweepAtFrom(at, t.now())
	w := newWrite().
		sets(map[string]types.AttributeValue{AttrSweepShard: avString(shard), AttrSweepAt: avInt(sweepAt)}).
		when("attribute_exists(pk) AND version = :version", map[string]types.AttributeValue{":version": avInt(rec.Version)})
	if rec.ClaimID != "" {
		w.when("claimId = :claim", map[string]types.AttributeValue{":claim": avString(rec.ClaimID)})
	}
	_, err := t.update(ctx, rec.Key, w, types.ReturnValueNone, false)
	ok, err := fenced(err, "resweep", rec.Key)
	if ok {
		rec.SweepShard, rec.SweepAt = shard, sweepAt
	}
	return ok, err
}

// Bury ends rec, a record that can never be processed (its payload item
// is gone: [ErrPayloadMissing]), as DEAD with lastError = reason: in one
// conditional UpdateItem pinned to rec's version, status and claim id, and
// refused for a live lease (PROCESSING or COMPENSATING until leaseUntil),
// it removes the lease and the held attributes (it leaves the held index),
// raises expiresAt to retainUntil (never lowers it; a record without TTL
// keeps none), increments version and adds the history entry (its error is
// the reason). Nothing is compensated: the compensator would need the
// payload too. It reports false when the record moved on, and for a final
// rec, without writing; on true, rec is the record as written.
func (t *Table) Bury(ctx context.Context, rec *Record, reason string, retainUntil time.Time) (bool, error) {
	if rec.Status.Terminal() {
		return false, nil
	}
	now := t.now()
	reason = webhook.Truncate(reason, webhook.MaxHistoryError)
	w := newWrite().
		sets(map[string]types.AttributeValue{
			AttrStatus:    avString(string(webhook.StatusDead)),
			AttrVersion:   avInt(rec.Version + 1),
			AttrUpdatedAt: avInt(now.UnixMilli()),
			AttrLastError: avString(reason),
		}).
		removes(append([]string{AttrLeaseOwner, AttrLeaseUntil}, heldAttrs...)...).
		when("attribute_exists(pk) AND version = :version AND #s = :status AND (attribute_not_exists(leaseUntil) OR leaseUntil < :nowMs)",
			map[string]types.AttributeValue{":version": avInt(rec.Version), ":status": avString(string(rec.Status)),
				":nowMs": avInt(now.UnixMilli())}).
		history(t.historyEntry(now, rec.Status, webhook.StatusDead, rec.Version+1, int(rec.Attempts), "", reason), t.keep)
	if rec.ClaimID != "" {
		w.when("claimId = :claim", map[string]types.AttributeValue{":claim": avString(rec.ClaimID)})
	}
	exp := w.raiseExpiry(rec.ExpiresAt, retainUntil)
	_, err := t.update(ctx, rec.Key, w, types.ReturnValueNone, false)
	ok, err := fenced(err, "bury", rec.Key)
	if ok {
		rec.Status, rec.Version, rec.UpdatedAt, rec.LastError, rec.ExpiresAt = webhook.StatusDead, rec.Version+1, now.UnixMilli(), reason, exp
		rec.LeaseOwner, rec.LeaseUntil = "", 0
		rec.HeldOn, rec.HeldSince, rec.RecheckAt, rec.HeldReason = "", 0, 0, ""
		t.hints.drop(rec.Key)
	}
	return ok, err
}

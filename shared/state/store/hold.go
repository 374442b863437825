package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookwall/hookwall/shared/base/webhook"
)

// HeldIndex is the global secondary index of held records: partition key
// heldOn (S, the scope a record waits for: "target#<name>",
// "handler#<name>" or "tenant#<name>"), sort key heldSince (N, epoch ms),
// projection KEYS_ONLY. It is sparse: only HELD records carry its
// attributes, so the drain queries one scope's held records, oldest first,
// and never scans.
const HeldIndex = "held"

// heldAttrs are the attributes of a HELD record that go when it leaves HELD
// (target stays: the last attempt's target).
var heldAttrs = []string{AttrHeldOn, AttrHeldSince, AttrRecheckAt, AttrHeldReason}

// HeldRecord is one entry of the held index: a HELD record waiting for a
// scope.
type HeldRecord struct {
	// Key is the event key.
	Key string
	// HeldSince is when the record was held.
	HeldSince time.Time
}

// checkHold reports what h lacks.
func checkHold(h webhook.Hold) error {
	if h.On == "" || h.RecheckAt.IsZero() {
		return errors.New("a hold needs the scope it waits on and a recheck time")
	}
	return nil
}

// heldExpiry is the expiresAt (epoch s) of a record held under h whose
// lease saw expiresAt: raised to h.RetainUntil, never lowered; 0 when the
// record has no TTL (it keeps none).
func heldExpiry(leaseExpires time.Time, h webhook.Hold) int64 {
	if leaseExpires.IsZero() {
		return 0
	}
	return max(leaseExpires.Unix(), h.RetainUntil.Unix())
}

// Hold moves the record PROCESSING → HELD instead of settling the attempt
// of the lease l, which made no call: in one conditional UpdateItem fenced
// on l's owner and version, it gives the attempt back (attempts = l.Attempt
// − 1), clears the lease, sets heldOn = h.On, heldSince = now, recheckAt =
// h.RecheckAt, heldReason, target and the sweep attributes (sweepAt =
// h.RecheckAt, or now if it has passed, so the sweeper looks at it then),
// givenBack = l.GivenBack + 1 when h.GiveBack, raises expiresAt to
// h.RetainUntil (nothing held expires), increments version and adds the
// history entry (its error is the reason). When it raised expiresAt and the
// payload is in its own item, the item's expiry is raised to the record's
// new one + [PayloadRetention] too (one more conditional UpdateItem), so
// that the event never outlives its payload. held is false when the lease
// is lost (nothing is written).
func (t *Table) Hold(ctx context.Context, l webhook.Lease, h webhook.Hold) (bool, error) {
	if err := checkHold(h); err != nil {
		return false, fmt.Errorf("store: hold %s: %w", l.Key, err)
	}
	now := t.now()
	n := max(int64(l.Attempt)-1, 0)
	w := newWrite().sets(map[string]types.AttributeValue{
		AttrAttempts:   avInt(n),
		AttrHeldOn:     avString(h.On),
		AttrHeldSince:  avInt(now.UnixMilli()),
		AttrRecheckAt:  avInt(h.RecheckAt.UnixMilli()),
		AttrHeldReason: avString(webhook.Truncate(h.Reason, webhook.MaxHistoryError)),
		AttrSweepShard: avString(shardName(ShardOf(l.Key))),
		AttrSweepAt:    avInt(sweepAtFrom(h.RecheckAt, now)),
	})
	if h.Target != "" {
		w.sets(map[string]types.AttributeValue{AttrTarget: avString(h.Target)})
	}
	if h.GiveBack {
		w.sets(map[string]types.AttributeValue{AttrGivenBack: avInt(int64(l.GivenBack) + 1)})
	}
	if exp := heldExpiry(l.ExpiresAt, h); exp > 0 {
		w.sets(map[string]types.AttributeValue{AttrExpiresAt: avInt(exp)})
	}
	given := l
	given.Attempt = int(n) // the history entry counts the attempts left spent
	rv := types.ReturnValueNone
	exp := heldExpiry(l.ExpiresAt, h)
	raised := exp > l.ExpiresAt.Unix()
	if raised {
		rv = types.ReturnValueAllNew // to learn whether the payload is in its own item
	}
	item, held, err := t.transitionReturning(ctx, given, webhook.StatusProcessing, webhook.StatusHeld, h.Reason, w, rv)
	if cur, ok := t.hints.get(l.Key); held && ok && cur.version == l.Version+1 {
		cur.attempts = n
		t.hints.put(l.Key, cur)
	}
	if held && err == nil && raised {
		// The record now outlives the claim's payload item: keep the item
		// as long, or the event could never be released.
		if ref, ok := item[AttrPayloadRef].(*types.AttributeValueMemberS); ok && ref.Value != "" {
			err = t.keepPayload(ctx, &Record{Key: l.Key, PayloadRef: ref.Value, ExpiresAt: exp}, 0)
		}
	}
	return held, err
}

// Held queries the held index for the records waiting on scope on (the
// heldOn value, e.g. "target#forward/acme"): at most limit, oldest
// heldSince first, from cursor (nil: the start). It returns the cursor of
// the next page, nil when there is none (a full page may be followed by an
// empty one). The index is eventually consistent: read the record before
// acting on it.
func (t *Table) Held(ctx context.Context, on string, limit int32,
	cursor map[string]types.AttributeValue) ([]HeldRecord, map[string]types.AttributeValue, error) {
	if on == "" || limit <= 0 {
		return nil, nil, fmt.Errorf("store: held: need a scope and a positive limit, got %q and %d", on, limit)
	}
	q := heldQuery(on)
	q.Limit, q.ExclusiveStartKey = aws.Int32(limit), cursor
	recs, next, err := queryIndex(ctx, t, q, AttrHeldSince, func(key string, at time.Time) HeldRecord {
		return HeldRecord{Key: key, HeldSince: at}
	})
	if err != nil {
		return nil, nil, fmt.Errorf("store: held on %s: %w", on, err)
	}
	return recs, next, nil
}

// heldQuery is the Query of the held index for the records waiting on scope
// on.
func heldQuery(on string) *dynamodb.QueryInput {
	return &dynamodb.QueryInput{
		IndexName:                 aws.String(HeldIndex),
		KeyConditionExpression:    aws.String("#on = :on"),
		ExpressionAttributeNames:  map[string]string{"#on": AttrHeldOn},
		ExpressionAttributeValues: map[string]types.AttributeValue{":on": avString(on)},
	}
}

// queryIndex runs q, one page of a Query of t's index whose sort key is the
// epoch-ms attribute at ([HeldIndex], [SweepIndex]: sparse, KEYS_ONLY), and
// returns its entries, each made by entry of the record's key and that
// time, and the cursor of the next page, nil when there is none (a full
// page may be followed by an empty one).
func queryIndex[E any](ctx context.Context, t *Table, q *dynamodb.QueryInput, at string,
	entry func(key string, at time.Time) E) ([]E, map[string]types.AttributeValue, error) {
	q.TableName = &t.name
	out, err := t.db.Query(ctx, q)
	if err != nil {
		return nil, nil, err
	}
	entries := make([]E, 0, len(out.Items))
	for _, item := range out.Items {
		var key string
		var ms int64
		if err := attributevalue.Unmarshal(item[AttrPK], &key); err != nil {
			return nil, nil, fmt.Errorf("decode: %w", err)
		}
		if err := attributevalue.Unmarshal(item[at], &ms); err != nil {
			return nil, nil, fmt.Errorf("decode: %w", err)
		}
		entries = append(entries, entry(key, time.UnixMilli(ms)))
	}
	next := out.LastEvaluatedKey
	if len(next) == 0 {
		next = nil
	}
	return entries, next, nil
}

// HeldCount counts the records waiting on scope on (Query with Select
// COUNT on the held index, page by page: 4 KB of keys per read unit).
func (t *Table) HeldCount(ctx context.Context, on string) (int, error) {
	var n int
	var cursor map[string]types.AttributeValue
	for {
		q := heldQuery(on)
		q.TableName, q.Select, q.ExclusiveStartKey = &t.name, types.SelectCount, cursor
		out, err := t.db.Query(ctx, q)
		if err != nil {
			return 0, fmt.Errorf("store: count held on %s: %w", on, err)
		}
		n += int(out.Count)
		if len(out.LastEvaluatedKey) == 0 {
			return n, nil
		}
		cursor = out.LastEvaluatedKey
	}
}

// Release moves the HELD record rec to RETRY so that it is processed again:
// in one conditional UpdateItem on its version and status (HELD) and on it
// not having expired, it removes the held attributes (it leaves the held
// index), sets enqueuedAt and updatedAt = now and sweepAt = sweepAt, or now
// if it has passed (when the sweeper rescues it if the caller's send is
// lost), increments version
// and adds the history entry. The caller then sends rec's envelope. It
// reports false when the record moved on (another drain released it, or it
// is no longer HELD), without error; on true, rec is the record as written.
func (t *Table) Release(ctx context.Context, rec *Record, sweepAt time.Time) (bool, error) {
	if rec.Status != webhook.StatusHeld {
		return false, nil
	}
	now := t.now()
	shard := shardName(ShardOf(rec.Key))
	w := newWrite().
		when("attribute_exists(pk) AND (attribute_not_exists(expiresAt) OR expiresAt >= :nowSec) AND version = :version AND #s = :held",
			map[string]types.AttributeValue{":nowSec": avInt(now.Unix()), ":version": avInt(rec.Version),
				":held": avString(string(webhook.StatusHeld))}).
		sets(map[string]types.AttributeValue{
			AttrStatus:     avString(string(webhook.StatusRetry)),
			AttrVersion:    avInt(rec.Version + 1),
			AttrUpdatedAt:  avInt(now.UnixMilli()),
			AttrEnqueuedAt: avInt(now.UnixMilli()),
			AttrSweepShard: avString(shard),
			AttrSweepAt:    avInt(sweepAtFrom(sweepAt, now)),
		}).
		removes(heldAttrs...).
		history(t.historyEntry(now, webhook.StatusHeld, webhook.StatusRetry, rec.Version+1, int(rec.Attempts), "", ""), t.keep)
	_, err := t.update(ctx, rec.Key, w, types.ReturnValueNone, false)
	ok, err := fenced(err, "release", rec.Key)
	if !ok {
		return false, err
	}
	released(rec, now, shard, time.UnixMilli(sweepAtFrom(sweepAt, now)))
	t.hints.put(rec.Key, stateOf(rec))
	return true, nil
}

// released sets on rec what Release wrote.
func released(rec *Record, now time.Time, shard string, sweepAt time.Time) {
	rec.Status, rec.Version = webhook.StatusRetry, rec.Version+1
	rec.UpdatedAt, rec.EnqueuedAt = now.UnixMilli(), now.UnixMilli()
	rec.SweepShard, rec.SweepAt = shard, sweepAt.UnixMilli()
	rec.HeldOn, rec.HeldSince, rec.RecheckAt, rec.HeldReason = "", 0, 0, ""
}

// Recheck pushes the next look at the HELD record rec to at (recheckAt, and
// sweepAt, which is never before now) and raises its expiresAt to retainUntil (never lowers it), on
// condition that it is still HELD at rec's version: the sweeper's answer to
// a record whose scope is still blocked. It is not a transition (version
// and history unchanged). A payload kept in its own item is kept as long
// as the record + [PayloadRetention]: one more conditional UpdateItem when
// the item's expiry as [Table.Get] read it (rec.PayloadExpiresAt) falls
// short. It reports false when the record moved on; on true, rec carries
// the new values.
func (t *Table) Recheck(ctx context.Context, rec *Record, at, retainUntil time.Time) (bool, error) {
	if rec.Status != webhook.StatusHeld {
		return false, nil
	}
	shard, sweepAt := shardName(ShardOf(rec.Key)), sweepAtFrom(at, t.now())
	w := newWrite().
		sets(map[string]types.AttributeValue{
			AttrRecheckAt:  avInt(at.UnixMilli()),
			AttrSweepShard: avString(shard),
			AttrSweepAt:    avInt(sweepAt),
		}).
		when("attribute_exists(pk) AND version = :version AND #s = :held",
			map[string]types.AttributeValue{":version": avInt(rec.Version), ":held": avString(string(webhook.StatusHeld))})
	exp := w.raiseExpiry(rec.ExpiresAt, retainUntil)
	_, err := t.update(ctx, rec.Key, w, types.ReturnValueNone, false)
	ok, err := fenced(err, "recheck", rec.Key)
	if ok {
		rec.RecheckAt, rec.SweepShard, rec.SweepAt, rec.ExpiresAt = at.UnixMilli(), shard, sweepAt, exp
		// The payload item lives as long as the record, and then some: a
		// write only when it would expire before the record's new expiry
		// plus PayloadRetention (by the expiry Get read).
		if err = t.keepPayload(ctx, rec, rec.PayloadExpiresAt); err == nil && rec.PayloadRef != "" && exp > 0 {
			rec.PayloadExpiresAt = max(rec.PayloadExpiresAt, time.Unix(exp, 0).Add(PayloadRetention).Unix())
		}
	}
	return ok, err
}

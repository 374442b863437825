package store

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookwall/hookwall/shared/webhook"
)

// compensateCondition: the compensator may take the record (FAILED,
// RECEIVED or RETRY; PROCESSING or COMPENSATING whose lease ran out or was
// given back) and it has not expired.
const compensateCondition = "attribute_exists(pk) AND (attribute_not_exists(expiresAt) OR expiresAt >= :nowSec) AND " +
	"(#s IN (:failed, :received, :retry) OR (#s IN (:processing, :compensating) AND " +
	"(attribute_not_exists(leaseUntil) OR leaseUntil < :nowMs)))"

// compensable reports whether AcquireCompensation may take r at now.
func compensable(r *Record, now time.Time) bool {
	if r == nil || r.Expired(now) {
		return false
	}
	switch r.Status {
	case webhook.StatusFailed, webhook.StatusReceived, webhook.StatusRetry:
		return true
	case webhook.StatusProcessing, webhook.StatusCompensating:
		return r.LeaseUntil < now.UnixMilli()
	}
	return false
}

// AcquireCompensation takes the compensation lease of the record of key for
// owner until the given time, in one conditional UpdateItem: from FAILED,
// RECEIVED or RETRY, or from PROCESSING or COMPENSATING whose lease has run
// out (or was given back by RetryCompensation), while the record has not
// expired. It sets status COMPENSATING, leaseOwner, leaseUntil and
// updatedAt, increments version and compensations (the lease's Attempt) and
// adds the history entry. Acquired carries the payload (read from its own
// item when it is stored apart, one more read), the record's
// processing attempts and lastError, and in Status the status the record
// came from. Otherwise: a final record is AcquireDone, a live lease
// (PROCESSING or COMPENSATING) AcquireBusy with its remaining time, an
// absent or expired record AcquireMissing.
//
// Like Acquire, the write is pinned to the record's version and status; the
// state comes from this table's last write of the key, or else from one
// strongly consistent read first.
func (t *Table) AcquireCompensation(ctx context.Context, key, owner string, until time.Time) (webhook.Acquisition, error) {
	now := t.now()
	guess, ok := t.hints.get(key)
	if !ok {
		rec, err := t.read(ctx, key)
		if err != nil {
			return webhook.Acquisition{}, fmt.Errorf("store: acquire compensation %s: %w", key, err)
		}
		if !compensable(rec, now) {
			return LostCompensation(rec, now), nil
		}
		guess = stateOf(rec)
	}
	return t.take(ctx, key, owner, until, now, guess, taking{
		op:        "acquire compensation",
		condition: compensateCondition,
		values: map[string]types.AttributeValue{
			":failed":       avString(string(webhook.StatusFailed)),
			":received":     avString(string(webhook.StatusReceived)),
			":retry":        avString(string(webhook.StatusRetry)),
			":processing":   avString(string(webhook.StatusProcessing)),
			":compensating": avString(string(webhook.StatusCompensating)),
		},
		to:         webhook.StatusCompensating,
		counter:    AttrCompensations,
		count:      func(s state) int64 { return s.compensations },
		may:        compensable,
		lost:       LostCompensation,
		lease:      (*Record).CompensationLease,
		reportFrom: true,
		payload:    true,
	})
}

// read is a strongly consistent GetItem of the record of key (nil if absent).
func (t *Table) read(ctx context.Context, key string) (*Record, error) {
	out, err := t.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &t.name, Key: recordKey(key), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, err
	}
	return decodeRecord(out.Item)
}

// HeartbeatCompensation extends the compensation lease l to until, on
// condition that l still holds the record (leaseOwner, version, status
// COMPENSATING). It does not change the version. held is false when the
// lease is lost.
func (t *Table) HeartbeatCompensation(ctx context.Context, l webhook.Lease, until time.Time) (bool, error) {
	w := newWrite().
		sets(map[string]types.AttributeValue{AttrLeaseUntil: avInt(until.UnixMilli()), AttrUpdatedAt: avInt(t.now().UnixMilli())}).
		when(fenceCondition, map[string]types.AttributeValue{
			":owner":   avString(l.Owner),
			":version": avInt(l.Version),
			":leased":  avString(string(webhook.StatusCompensating)),
		})
	_, err := t.update(ctx, l.Key, w, types.ReturnValueNone, false)
	return fenced(err, "heartbeat compensation", l.Key)
}

// Compensated moves the record to COMPENSATED, keeps it until retainUntil
// (expiresAt), clears the lease and removes the sweep attributes (lastError
// stays: why it was compensated); fenced on the compensation lease l (owner,
// version, status COMPENSATING). held is false when the lease is lost.
func (t *Table) Compensated(ctx context.Context, l webhook.Lease, retainUntil time.Time) (bool, error) {
	w := newWrite().sets(map[string]types.AttributeValue{AttrExpiresAt: avInt(retainUntil.Unix())}).
		removes(AttrSweepShard, AttrSweepAt)
	return t.transition(ctx, l, webhook.StatusCompensating, webhook.StatusCompensated, "", w)
}

// Dead moves the record to DEAD with lastError = reason, keeps it until
// retainUntil (expiresAt), clears the lease and removes the sweep
// attributes; fenced on the compensation lease l. held is false when the
// lease is lost.
func (t *Table) Dead(ctx context.Context, l webhook.Lease, reason string, retainUntil time.Time) (bool, error) {
	w := newWrite().sets(map[string]types.AttributeValue{AttrExpiresAt: avInt(retainUntil.Unix()), AttrLastError: avString(reason)}).
		removes(AttrSweepShard, AttrSweepAt)
	return t.transition(ctx, l, webhook.StatusCompensating, webhook.StatusDead, reason, w)
}

// RequeueCompensation gives a record the processor never finished back to
// the processor: COMPENSATING → RETRY with lastError (why), the lease
// cleared, version+1, the sweep attributes kept (RETRY is not terminal);
// fenced on the compensation lease l. The compensator calls it for a dead
// letter whose record was not FAILED (SQS redrove it after
// maxReceiveCount receives, before the processor gave up) and then sends
// the event to the main queue again. held is false when the lease is lost.
func (t *Table) RequeueCompensation(ctx context.Context, l webhook.Lease, lastError string) (bool, error) {
	w := newWrite().sets(map[string]types.AttributeValue{AttrLastError: avString(lastError)})
	return t.transition(ctx, l, webhook.StatusCompensating, webhook.StatusRetry, lastError, w)
}

// RetryCompensation gives the compensation lease l back after a failed
// attempt: the record stays COMPENSATING with lastError, without a lease, at
// version+1 (a transition COMPENSATING → COMPENSATING in its history), so
// the next delivery takes it at once. Fenced on l; held is false when the
// lease is lost.
func (t *Table) RetryCompensation(ctx context.Context, l webhook.Lease, lastError string) (bool, error) {
	w := newWrite().sets(map[string]types.AttributeValue{AttrLastError: avString(lastError)})
	return t.transition(ctx, l, webhook.StatusCompensating, webhook.StatusCompensating, lastError, w)
}

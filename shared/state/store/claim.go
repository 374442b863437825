package store

import (
	"context"
	"crypto/rand"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookwall/hookwall/shared/base/format"
	"github.com/hookwall/hookwall/shared/base/release"
	"github.com/hookwall/hookwall/shared/base/webhook"
)

// ClaimOutcome says what a claim found.
type ClaimOutcome int

// Claim outcomes.
const (
	// Claimed: the key was absent (or expired); the caller owns the new record
	// and must enqueue it.
	Claimed ClaimOutcome = iota + 1
	// Duplicate: a live record with the same payload hash exists.
	Duplicate
	// Conflict: a live record exists under the same key with a different
	// payload hash. It is never processed twice.
	Conflict
)

// String returns the outcome's name.
func (o ClaimOutcome) String() string { return outcomeName(o, "claimed", "duplicate", "conflict") }

// NewEvent is what the receiver knows of an event it wants to claim.
type NewEvent struct {
	Key         string
	Provider    string
	Tenant      string
	EventType   string
	OccurredAt  time.Time
	PayloadHash string
	Payload     []byte
	TraceID     string

	// stored is Payload as it will be written (see Prepare).
	stored types.AttributeValue
	// ref is the sort key of the payload item when the payload is stored
	// apart from the record, "" when it stays in the record.
	ref string
}

// Size limits of a record. DynamoDB refuses items over 400 KB; every
// attribute but the payload is small and bounded (the key by the intake's
// id limits, lastError by truncation), so the payload may take all but
// ReservedItemBytes of an item.
const (
	// MaxItemBytes is DynamoDB's item size limit.
	MaxItemBytes = 400 * 1024
	// ReservedItemBytes is kept free for every attribute but the payload.
	ReservedItemBytes = 16 * 1024
	// MaxStoredPayload is the largest payload, as stored (gzip-compressed
	// above CompressAbove), that a record can hold.
	MaxStoredPayload = MaxItemBytes - ReservedItemBytes
)

// Prepare encodes the payload the way Claim will store it (compressing it
// once) and decides where: in the record while the record stays within
// InlineRecordBytes through a happy path (its claimed size, estimated from
// above, + RecordGrowth), gzip-compressed when only that makes it fit; else
// in its own payload item (see [SKPayloadPrefix]), gzip-compressed there
// when that is smaller. It checks that the payload fits in a DynamoDB item:
// an event that can never be stored gives an error wrapping
// [webhook.ErrTooLarge], so the receiver can answer 413 before it claims
// anything. The limit is the same wherever the payload goes
// ([MaxStoredPayload]). Claim calls Prepare itself when the caller has not;
// Prepare reads every field, so set them first.
func (ev *NewEvent) Prepare() error {
	if ev.stored != nil {
		return nil
	}
	av, err := encodePayload(ev.Payload, false)
	if err != nil {
		return err
	}
	if err := checkStored(ev, av); err != nil {
		return err
	}
	room := InlineRecordBytes - RecordGrowth - claimItemBytes(ev) - len(AttrPayload)
	ev.stored, ev.ref = av, ""
	if valueSize(av) <= room {
		return nil
	}
	if _, plain := av.(*types.AttributeValueMemberS); plain && len(ev.Payload) > 64 {
		// Compressed, it may fit in the record; if not, it is written once
		// to its own item, compressed when that is smaller.
		zav, err := encodePayload(ev.Payload, true)
		if err != nil {
			return err
		}
		if valueSize(zav) < valueSize(av) {
			ev.stored = zav
		}
	}
	if valueSize(ev.stored) > room {
		ev.ref = payloadSK(ev.Payload)
	}
	return nil
}

// PayloadRef returns, after Prepare, the sort key of the payload item the
// event's payload is stored in, or "" when it stays in the record.
func (ev *NewEvent) PayloadRef() string { return ev.ref }

// StoredPayloadBytes returns the size of the payload as stored, after Prepare.
func (ev *NewEvent) StoredPayloadBytes() int { return valueSize(ev.stored) }

// ClaimRecord returns the record a claim of ev creates at now, as
// [Table.Claim] writes it (and the in-memory store keeps it): RECEIVED at
// version 1 with a new claim id and its claim's history entry (written by
// function), kept for window and due to the sweeper after sweepAfter, and
// counting its first delivery (deliveries 1, lastDeliveryAt now). It
// carries no payload; PayloadRef is set once ev is prepared ([NewEvent.Prepare]).
func (ev *NewEvent) ClaimRecord(now time.Time, window, sweepAfter time.Duration, function string) *Record {
	rec := &Record{
		Key:            ev.Key,
		SK:             SKEvent,
		Status:         webhook.StatusReceived,
		Version:        1,
		Provider:       ev.Provider,
		Tenant:         ev.Tenant,
		EventType:      ev.EventType,
		ReceivedAt:     now.UnixMilli(),
		UpdatedAt:      now.UnixMilli(),
		EnqueuedAt:     now.UnixMilli(),
		ExpiresAt:      now.Add(window).Unix(),
		PayloadHash:    ev.PayloadHash,
		PayloadRef:     ev.ref,
		TraceID:        ev.TraceID,
		ClaimID:        newClaimID(),
		SweepShard:     shardName(ShardOf(ev.Key)),
		SweepAt:        now.Add(sweepAfter).UnixMilli(),
		History:        []webhook.HistoryEntry{newHistoryEntry(function, now, "", webhook.StatusReceived, 1, 0, "", "")},
		Deliveries:     1,
		LastDeliveryAt: now.UnixMilli(),
		Format:         int64(format.Written(format.Item)), // as the write's stamp (package stamp) stores it
		Release:        release.Version,
	}
	if !ev.OccurredAt.IsZero() {
		rec.OccurredAt = ev.OccurredAt.UnixMilli()
	}
	return rec
}

// ClaimResult is the outcome of Claim and the record it concerns: the new
// record when Claimed, the existing one otherwise.
type ClaimResult struct {
	Outcome ClaimOutcome
	Record  *Record
	// Counted is set on a Duplicate whose claim also counted the delivery
	// on the record (its Deliveries and LastDeliveryAt are the new count):
	// the caller must not count it again. A Duplicate without it is
	// counted by [Table.CountDelivery], if at all.
	Counted bool
}

// Claim creates the event's record (status RECEIVED, version 1) with one
// conditional PutItem of the record ([NewEvent.ClaimRecord]), on condition
//
//	attribute_not_exists(pk) OR expiresAt < :now
//
// so it claims a key that is absent or whose record expired (TTL deletion
// lags). That is the whole cost of a first delivery: one write of the
// record, with the smallest condition DynamoDB evaluates (issue 33: the
// former claim, an UpdateItem that set each of some twenty attributes with
// if_not_exists so that a duplicate was counted in the same write, cost
// DynamoDB Local twice the CPU of this PutItem for every first delivery).
// The record expires (TTL) after window; it carries its first history entry
// (to RECEIVED), the sweep attributes (its shard, and sweepAt = now +
// SweepAfter) and its first delivery's count (deliveries 1).
//
// When the condition fails, DynamoDB returns the record
// (ReturnValuesOnConditionCheckFailure ALL_OLD) and nothing was written:
//   - a record of another payload hash gives Conflict, not counted;
//   - a live record of the same payload hash gives Duplicate, counted on
//     the record by a second write ([Table.CountDelivery]: deliveries + 1,
//     lastDeliveryAt; nothing else changes), Counted, with the record as it
//     is now; when that write does not count (the record was deleted or
//     claimed anew meanwhile, or the call failed) the Duplicate is returned
//     uncounted and the caller may count it;
//   - a record with the claim id this call sent is this call's own write,
//     applied by an earlier attempt whose answer was lost (the SDK retried):
//     Claimed, with that record.
//
// A duplicate that reaches the table thus costs two writes (the failed
// condition is charged by the size of the record there, and so is the
// count); the receiver answers most duplicates from its hand-off cache
// without a call (package handoff), and first deliveries, one per event,
// are the common case the claim is shaped for.
//
// A payload that does not stay in the record (see Prepare) is first written
// to its own item, with one conditional PutItem that keeps an item of the
// same payload that lives long enough: `attribute_not_exists(pk) OR
// expiresAt < now + window + PayloadRetention`, written to expire at now +
// 2×window + PayloadRetention (so a duplicate inside the window keeps it,
// and a claim after the window renews it). The record then refers to it
// (payloadRef); the claim's write follows only once the payload item is
// there, so every record has its payload. A Duplicate whose record refers
// to the same payload carries it (the caller's own); a record of another
// payload carries none (its envelope asks the processor to read it, see
// [Record.Envelope]). A conflicting event leaves its payload item behind,
// referred to by no record, until its TTL. A failure to write the payload
// item returns no record: nothing refers to it, nothing needs undoing.
// Before writing the payload item, a claim reads the record (one eventually
// consistent GetItem, half a read unit): a live record of the same payload
// is a duplicate, counted by an UpdateItem that requires the record, and
// the payload item is not written again (see countLargeDuplicate). A read
// that sees nothing, or anything else, leads to the claim above.
//
// When the call fails, the write may still have been applied (a timeout
// whose request reached DynamoDB): the result then carries the record that
// was sent, so the caller can Unclaim it by its claim id. A failure caused
// by the event itself (DynamoDB's validation) wraps [webhook.ErrMalformed]
// or [webhook.ErrTooLarge]; nothing was written then.
func (t *Table) Claim(ctx context.Context, ev NewEvent, window time.Duration) (ClaimResult, error) {
	if err := ev.Prepare(); err != nil {
		return ClaimResult{}, err
	}
	now := t.now()
	rec := ev.ClaimRecord(now, window, t.sweepAfter, t.function)
	item, err := claimItem(&ev, rec) // without rec's payload: it is encoded already
	if err != nil {
		return ClaimResult{}, err
	}
	rec.Payload = ev.Payload
	if ev.ref != "" {
		if res, ok := t.countLargeDuplicate(ctx, &ev, now); ok {
			return res, nil
		}
		if err := t.putPayload(ctx, &ev, now, window); err != nil {
			return ClaimResult{}, err
		}
	}
	_, err = t.db.PutItem(ctx, claimPut(t.name, item, now))
	if err == nil {
		return ClaimResult{Outcome: Claimed, Record: rec}, nil
	}
	res, err := t.claimFailed(&ev, rec, err)
	if err != nil || res.Outcome != Duplicate {
		return res, err
	}
	if counted, cerr := t.CountDelivery(ctx, res.Record); cerr == nil && counted {
		res.Counted = true
	}
	return res, nil
}

// claimPut is the claim's PutItem of item, the record of a claim at now:
// it creates the record when there is none or the one there has expired,
// and returns the record there (ALL_OLD) when its condition fails.
func claimPut(table string, item map[string]types.AttributeValue, now time.Time) *dynamodb.PutItemInput {
	return &dynamodb.PutItemInput{
		TableName:           &table,
		Item:                item,
		ConditionExpression: aws.String("attribute_not_exists(#pk) OR #exp < :now"),
		ExpressionAttributeNames: map[string]string{
			"#pk": AttrPK, "#exp": AttrExpiresAt,
		},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":now": avInt(now.Unix()),
		},
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}
}

// countLargeDuplicate spares a duplicate of an event whose payload lives in
// its own item (ev.ref set) the rewrite of that item, which Claim makes
// before the record's write: a failed conditional write is charged by the
// size of the item already there, 4 write units for a 4 KB payload, and a
// duplicate would pay it every time. It reads the record first, with one
// eventually consistent GetItem (half a read unit); when that shows a live
// record of this very payload, [Table.CountDelivery] counts the delivery on
// it. It reports false, having changed nothing, on anything else (no
// record, another payload, an expired or unreadable record, an error, a
// record claimed anew meanwhile): the caller then claims as it always did.
func (t *Table) countLargeDuplicate(ctx context.Context, ev *NewEvent, now time.Time) (ClaimResult, bool) {
	got, err := t.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &t.name, Key: recordKey(ev.Key)})
	if err != nil || len(got.Item) == 0 {
		return ClaimResult{}, false
	}
	seen, err := decodeRecord(got.Item)
	if err != nil || seen == nil || seen.Expired(now) || seen.PayloadHash != ev.PayloadHash || seen.PayloadRef != ev.ref {
		return ClaimResult{}, false
	}
	if counted, err := t.CountDelivery(ctx, seen); err != nil || !counted {
		// An error of unknown outcome may have counted the delivery, which
		// only the count would show: the caller's claim then finds the
		// record and counts it again, at worst.
		return ClaimResult{}, false
	}
	seen.Payload = payloadOf(seen, ev)
	return ClaimResult{Outcome: Duplicate, Record: seen, Counted: true}, true
}

// claimItem is the item a claim of ev (prepared) writes for rec, the record
// it creates ([NewEvent.ClaimRecord], without its payload): rec with the
// payload as Prepare stored it, or without one when the payload lives in
// its own item.
func claimItem(ev *NewEvent, rec *Record) (map[string]types.AttributeValue, error) {
	item, err := encodeRecord(rec)
	if err != nil {
		return nil, err
	}
	if ev.ref == "" {
		item[AttrPayload] = ev.stored
	} else {
		delete(item, AttrPayload)
	}
	return item, nil
}

// claimFailed reads the failure err of a claim's write of rec: a condition
// that found a live record gives Duplicate (not counted), Conflict, or,
// when the record is rec itself (an earlier attempt of the call was
// applied), Claimed. (An expired record never fails the condition, which
// is `expiresAt < now` with the same now.) Any other failure returns rec
// with the error (the write may have been applied), or, for DynamoDB's
// refusal of the event, no record.
func (t *Table) claimFailed(ev *NewEvent, rec *Record, err error) (ClaimResult, error) {
	old, ok := conditionFailed(err)
	if !ok {
		if rejected := inputRejected(err); rejected != nil {
			return ClaimResult{}, fmt.Errorf("store: claim %s: %w", ev.Key, rejected)
		}
		return ClaimResult{Record: rec}, fmt.Errorf("store: claim %s: %w", ev.Key, err)
	}
	existing, err := decodeRecord(old)
	if err != nil {
		return ClaimResult{}, fmt.Errorf("store: claim %s: %w", ev.Key, err)
	}
	switch {
	case existing == nil: // DynamoDB always returns the item with ALL_OLD; be safe.
		existing = &Record{Key: ev.Key, PayloadHash: ev.PayloadHash}
	case existing.ClaimID == rec.ClaimID:
		return ClaimResult{Outcome: Claimed, Record: rec}, nil
	}
	existing.Payload = payloadOf(existing, ev)
	if existing.PayloadHash != ev.PayloadHash {
		return ClaimResult{Outcome: Conflict, Record: existing}, nil
	}
	return ClaimResult{Outcome: Duplicate, Record: existing}, nil
}

// Unclaim deletes a record this receiver just claimed and could not enqueue
// (or whose claim failed with an unknown outcome), so that the platform's
// retry can claim it again. The delete is conditional on the record being
// untouched since (status RECEIVED, version 1, the same claimId and
// enqueuedAt): it never removes a record somebody else has moved on or taken
// the enqueue of. It reports whether it deleted.
//
// A payload item the claim wrote is left in place: it is harmless (no
// record refers to it; it expires by its TTL) and the platform's retry of
// the delivery claims again with the same payload item, at the cost of one
// failed conditional write instead of a new item.
func (t *Table) Unclaim(ctx context.Context, rec *Record) (bool, error) {
	_, err := t.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName:           &t.name,
		Key:                 recordKey(rec.Key),
		ConditionExpression: aws.String("#st = :received AND #ver = :one AND #cid = :cid AND #enq = :enq"),
		ExpressionAttributeNames: map[string]string{
			"#st": AttrStatus, "#ver": AttrVersion, "#cid": AttrClaimID, "#enq": AttrEnqueuedAt,
		},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":received": &types.AttributeValueMemberS{Value: string(webhook.StatusReceived)},
			":one":      avInt(1),
			":cid":      &types.AttributeValueMemberS{Value: rec.ClaimID},
			":enq":      avInt(rec.EnqueuedAt),
		},
	})
	if err == nil {
		return true, nil
	}
	if _, ok := conditionFailed(err); ok {
		return false, nil
	}
	return false, fmt.Errorf("store: unclaim %s: %w", rec.Key, err)
}

// TakeOverEnqueue lets one duplicate delivery re-enqueue a record that has
// stayed RECEIVED for at least grace since it was last enqueued (the delivery
// that claimed it failed, or died, between claim and send). Among concurrent
// duplicates exactly one wins: the update is conditional on the enqueuedAt
// the caller saw. It reports whether the caller won; the winner must send the
// record's envelope, and call RevertEnqueue if that fails. A caller that
// loses finds rec updated to the record as it is now (its status and
// enqueuedAt), so it can tell "moved on" from "another delivery is sending".
func (t *Table) TakeOverEnqueue(ctx context.Context, rec *Record, grace time.Duration) (bool, error) {
	now := t.now()
	if rec.Status != webhook.StatusReceived || now.Sub(time.UnixMilli(rec.EnqueuedAt)) < grace {
		return false, nil
	}
	won, cur, err := t.swapEnqueuedAt(ctx, rec.Key, rec.EnqueuedAt, now.UnixMilli())
	if err != nil {
		return false, err
	}
	if !won {
		if cur == nil {
			cur = &Record{Key: rec.Key, Status: webhook.StatusReceived, EnqueuedAt: now.UnixMilli()}
		}
		rec.Status, rec.EnqueuedAt, rec.Version = cur.Status, cur.EnqueuedAt, cur.Version
		return false, nil
	}
	rec.EnqueuedAt = now.UnixMilli()
	return true, nil
}

// RevertEnqueue undoes TakeOverEnqueue after a failed send, so that the next
// duplicate tries again at once. prev is the enqueuedAt TakeOverEnqueue saw.
func (t *Table) RevertEnqueue(ctx context.Context, rec *Record, prev int64) error {
	_, _, err := t.swapEnqueuedAt(ctx, rec.Key, rec.EnqueuedAt, prev)
	return err
}

// swapEnqueuedAt sets enqueuedAt from → to on a RECEIVED record. When the
// condition fails it returns the record as it is (nil if absent or expired).
func (t *Table) swapEnqueuedAt(ctx context.Context, key string, from, to int64) (bool, *Record, error) {
	_, err := t.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:           &t.name,
		Key:                 recordKey(key),
		UpdateExpression:    aws.String("SET #enq = :to"),
		ConditionExpression: aws.String("#st = :received AND #enq = :from"),
		ExpressionAttributeNames: map[string]string{
			"#st": AttrStatus, "#enq": AttrEnqueuedAt,
		},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":received": &types.AttributeValueMemberS{Value: string(webhook.StatusReceived)},
			":from":     avInt(from),
			":to":       avInt(to),
		},
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	if err == nil {
		return true, nil, nil
	}
	if old, ok := conditionFailed(err); ok {
		cur, derr := decodeRecord(old)
		if derr != nil {
			return false, nil, fmt.Errorf("store: re-enqueue %s: %w", key, derr)
		}
		if cur == nil || cur.Expired(t.now()) {
			// Gone (its claim was undone): the next delivery claims it
			// afresh. An empty status says so.
			return false, &Record{Key: key}, nil
		}
		return false, cur, nil
	}
	return false, nil, fmt.Errorf("store: re-enqueue %s: %w", key, err)
}

// newClaimID returns a random claim ID: 26 base32 characters (crypto/rand.Text).
func newClaimID() string {
	return rand.Text()
}

// ClaimCreated reports whether a DynamoDB call that succeeded, its input
// params as an SDK middleware sees them, created an event record by a
// claim, and the record's key: a successful PutItem of an event
// record ([Table.Claim] of a new key or of an expired record). Tools that
// watch the receiver's calls from outside (the local runner's list of
// recent events, the storm and peer reports) tell first deliveries from
// duplicates with it, so that they do not depend on how a claim is written.
func ClaimCreated(params any) (string, bool) {
	in, ok := params.(*dynamodb.PutItemInput)
	if !ok {
		return "", false
	}
	pk, _ := in.Item[AttrPK].(*types.AttributeValueMemberS)
	sk, _ := in.Item[AttrSK].(*types.AttributeValueMemberS)
	if pk != nil && sk != nil && sk.Value == SKEvent {
		return pk.Value, true
	}
	return "", false
}

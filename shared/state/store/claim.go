package store

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"
	"strings"
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

// Claim creates the event's record (status RECEIVED, version 1), or counts
// one more delivery on the live record of the same payload, in one
// conditional UpdateItem. Every attribute of the record is set with
// if_not_exists(a, :a), and the count with `deliveries =
// if_not_exists(deliveries, 0) + 1, lastDeliveryAt = now`, on condition
//
//	attribute_not_exists(pk) OR (claimId <> :claimId AND expiresAt >= :now
//	AND payloadHash = :hash AND attribute_exists(a) for every a it sets)
//
// with ReturnValues ALL_OLD. No old item: the record was created, exactly
// as [NewEvent.ClaimRecord] (deliveries 1): Claimed. An old item: every
// attribute the update sets was already there, so it changed nothing but
// the count: Duplicate, Counted, with the record as it is now. The record
// expires (TTL) after window; it carries its first history entry (to
// RECEIVED) and the sweep attributes (its shard, and sweepAt = now +
// SweepAfter).
//
// When the condition fails, DynamoDB returns the record
// (ReturnValuesOnConditionCheckFailure ALL_OLD) and nothing was written:
//   - an expired record (expiresAt < now, not yet deleted by the TTL) is
//     claimed anew with a conditional PutItem of the new record,
//     `attribute_not_exists(pk) OR expiresAt < :now` (a second write, only
//     for a key delivered again after its window);
//   - a record of another payload hash gives Conflict, not counted;
//   - a record of the same hash that lacks an attribute the claim would set
//     (an optional one: traceId, occurredAt, the payload in another form,
//     the sweep attributes a terminal write removed, the count of a record
//     claimed before the count rode in the claim) gives Duplicate, not
//     Counted: setting it would change the record, so the caller counts
//     the delivery with CountDelivery;
//   - a record with the claim id this call sent is this call's own write,
//     applied by an earlier attempt whose answer was lost (the SDK retried):
//     Claimed, with that record.
//
// A live record there gives Duplicate or Conflict, with that record (its
// count updated when Counted), and no error: a Duplicate never changes
// the record but for its count.
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
// is a duplicate, counted by the claim's UpdateItem made to require the
// record, and the payload item is not written again (see
// countLargeDuplicate). A read that sees nothing, or anything else, leads
// to the claim above.
//
// When the call fails, the write may still have been applied (a timeout
// whose request reached DynamoDB): the result then carries the record that
// was sent, so the caller can Unclaim it by its claim id (an applied count
// on another claim's record is left alone by Unclaim's condition). A
// failure caused by the event itself (DynamoDB's validation) wraps
// [webhook.ErrMalformed] or [webhook.ErrTooLarge]; nothing was written then.
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
		if res, ok := t.countLargeDuplicate(ctx, &ev, item, now); ok {
			return res, nil
		}
		if err := t.putPayload(ctx, &ev, now, window); err != nil {
			return ClaimResult{}, err
		}
	}
	out, err := t.db.UpdateItem(ctx, claimUpdate(t.name, ev.Key, item, now, false))
	if err == nil {
		if len(out.Attributes) == 0 {
			return ClaimResult{Outcome: Claimed, Record: rec}, nil
		}
		res, err := countedDuplicate(out.Attributes, &ev, now)
		if err != nil {
			return ClaimResult{}, fmt.Errorf("store: claim %s: counted on the record, which reads back wrong: %w", ev.Key, err)
		}
		return res, nil
	}
	res, expired, err := t.claimFailed(&ev, rec, err, now)
	if !expired {
		return res, err
	}
	// The record expired but is still there: claim it anew.
	_, err = t.db.PutItem(ctx, claimPut(t.name, item, now))
	if err == nil {
		return ClaimResult{Outcome: Claimed, Record: rec}, nil
	}
	res, _, err = t.claimFailed(&ev, rec, err, now)
	return res, err
}

// claimPut is the claim's PutItem of item, the record of a claim at now,
// over an expired record: it creates the record when there is none or the
// one there has expired, and returns the record there (ALL_OLD) when its
// condition fails.
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
// record of this very payload, the claim's UpdateItem of item, made to
// require the record (so it never creates one whose payload item this call
// did not write), counts the delivery. It reports false, having changed
// nothing, on anything else (no record, another payload, an expired or
// unreadable record, an error, a condition that fails because the record
// moved on meanwhile): the caller then claims as it always did.
func (t *Table) countLargeDuplicate(ctx context.Context, ev *NewEvent, item map[string]types.AttributeValue, now time.Time) (ClaimResult, bool) {
	got, err := t.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &t.name, Key: recordKey(ev.Key)})
	if err != nil || len(got.Item) == 0 {
		return ClaimResult{}, false
	}
	seen, err := decodeRecord(got.Item)
	if err != nil || seen == nil || seen.Expired(now) || seen.PayloadHash != ev.PayloadHash || seen.PayloadRef != ev.ref {
		return ClaimResult{}, false
	}
	if !hasClaimAttributes(item, got.Item) {
		return ClaimResult{}, false // the condition below would fail: do not pay for it
	}
	out, err := t.db.UpdateItem(ctx, claimUpdate(t.name, ev.Key, item, now, true))
	if err != nil || len(out.Attributes) == 0 {
		// A condition that failed wrote nothing; an error of unknown outcome
		// may have counted the delivery, which only the count would show: the
		// caller's claim then finds the record and counts it again, at worst.
		return ClaimResult{}, false
	}
	res, err := countedDuplicate(out.Attributes, ev, now)
	if err != nil {
		return ClaimResult{}, false
	}
	return res, true
}

// countedDuplicate is the result of a claim update that counted ev's
// delivery on a live record, old being that record before the update
// (ReturnValues ALL_OLD): the condition held, so the update changed
// nothing but the count, which the result carries.
func countedDuplicate(old map[string]types.AttributeValue, ev *NewEvent, now time.Time) (ClaimResult, error) {
	existing, err := decodeRecord(old)
	if err != nil {
		return ClaimResult{}, err
	}
	if existing == nil {
		return ClaimResult{}, errors.New("no record came back")
	}
	existing.Deliveries++
	existing.LastDeliveryAt = now.UnixMilli()
	existing.Payload = payloadOf(existing, ev)
	return ClaimResult{Outcome: Duplicate, Record: existing, Counted: true}, nil
}

// claimUpdate is the claim's UpdateItem of item, the record of key a claim
// creates at now (see Claim): each attribute but the key and the count set
// with if_not_exists and required to exist when the record does, the
// count added, the previous item returned. With requireRecord it only
// counts: its condition holds only for a live record of the same payload,
// so it never creates one.
func claimUpdate(table, key string, item map[string]types.AttributeValue, now time.Time, requireRecord bool) *dynamodb.UpdateItemInput {
	names := map[string]string{"#d": AttrDeliveries, "#last": AttrLastDeliveryAt}
	values := map[string]types.AttributeValue{
		":zero": avInt(0), ":one": avInt(1), ":last": item[AttrLastDeliveryAt], ":now": avInt(now.Unix()),
	}
	attrs := claimSets(item)
	set := make([]string, 0, len(attrs)+2)
	exist := make([]string, 0, len(attrs)+1)
	for i, a := range attrs {
		n, v := fmt.Sprintf("#a%d", i), fmt.Sprintf(":a%d", i)
		names[n], values[v] = a, item[a]
		set = append(set, fmt.Sprintf("%s = if_not_exists(%s, %s)", n, n, v))
		exist = append(exist, "attribute_exists("+n+")")
		switch a {
		case AttrClaimID:
			exist = append(exist, n+" <> "+v)
		case AttrPayloadHash:
			exist = append(exist, n+" = "+v)
		case AttrExpiresAt:
			exist = append(exist, n+" >= :now")
		}
	}
	set = append(set, "#d = if_not_exists(#d, :zero) + :one", "#last = :last")
	exist = append(exist, "attribute_exists(#d)")
	cond := strings.Join(exist, " AND ")
	if !requireRecord {
		names["#pk"] = AttrPK
		cond = "attribute_not_exists(#pk) OR (" + cond + ")"
	}
	return &dynamodb.UpdateItemInput{
		TableName:                           &table,
		Key:                                 recordKey(key),
		UpdateExpression:                    aws.String("SET " + strings.Join(set, ", ")),
		ConditionExpression:                 aws.String(cond),
		ExpressionAttributeNames:            names,
		ExpressionAttributeValues:           values,
		ReturnValues:                        types.ReturnValueAllOld,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}
}

// claimSets returns the attributes of item, the record a claim creates,
// that the claim's write sets with if_not_exists and requires of a live
// record (see [Table.Claim]): all but the key and the count, sorted (a
// stable expression).
func claimSets(item map[string]types.AttributeValue) []string {
	attrs := make([]string, 0, len(item))
	for a := range item {
		switch a {
		case AttrPK, AttrSK, AttrDeliveries, AttrLastDeliveryAt:
		default:
			attrs = append(attrs, a)
		}
	}
	slices.Sort(attrs)
	return attrs
}

// hasClaimAttributes reports whether have, the item of a live record, has
// every attribute the claim's write of item requires to count a duplicate
// on it: those it sets ([claimSets]) and the count. Setting a missing one
// would change the record, so the write's condition fails then.
func hasClaimAttributes(item, have map[string]types.AttributeValue) bool {
	for _, a := range append(claimSets(item), AttrDeliveries) {
		if _, ok := have[a]; !ok {
			return false
		}
	}
	return true
}

// ClaimCounts reports whether a claim of ev (prepared) counts a duplicate
// on rec, the live record of its payload hash, in its own write, by the
// table's rule ([Table.Claim]): rec has every attribute the write of claim,
// the record the claim creates ([NewEvent.ClaimRecord]), requires. It is
// for a store that keeps records rather than items; only the presence of
// attributes counts, so payload bytes are not encoded.
func ClaimCounts(ev *NewEvent, claim, rec *Record) (bool, error) {
	item, err := claimItem(ev, claim)
	if err != nil {
		return false, err
	}
	have := *rec
	have.Payload = nil
	stored, err := encodeRecord(&have)
	if err != nil {
		return false, err
	}
	if rec.PayloadRef != "" { // the table keeps that payload in its own item
		delete(stored, AttrPayload)
	}
	return hasClaimAttributes(item, stored), nil
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
// applied), Claimed; an expired record reports expired, for the caller to
// claim it anew. Any other failure returns rec with the error (the write
// may have been applied), or, for DynamoDB's refusal of the event, no
// record.
func (t *Table) claimFailed(ev *NewEvent, rec *Record, err error, now time.Time) (res ClaimResult, expired bool, _ error) {
	old, ok := conditionFailed(err)
	if !ok {
		if rejected := inputRejected(err); rejected != nil {
			return ClaimResult{}, false, fmt.Errorf("store: claim %s: %w", ev.Key, rejected)
		}
		return ClaimResult{Record: rec}, false, fmt.Errorf("store: claim %s: %w", ev.Key, err)
	}
	existing, err := decodeRecord(old)
	if err != nil {
		return ClaimResult{}, false, fmt.Errorf("store: claim %s: %w", ev.Key, err)
	}
	switch {
	case existing == nil: // DynamoDB always returns the item with ALL_OLD; be safe.
		existing = &Record{Key: ev.Key, PayloadHash: ev.PayloadHash}
	case existing.ClaimID == rec.ClaimID:
		return ClaimResult{Outcome: Claimed, Record: rec}, false, nil
	case existing.Expired(now):
		return ClaimResult{}, true, nil
	}
	existing.Payload = payloadOf(existing, ev)
	if existing.PayloadHash != ev.PayloadHash {
		return ClaimResult{Outcome: Conflict, Record: existing}, false, nil
	}
	return ClaimResult{Outcome: Duplicate, Record: existing}, false, nil
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

// ClaimCreated reports whether a DynamoDB call, its input params and its
// result (as an SDK middleware sees them, with err nil), created an event
// record by a claim, and the record's key: a successful claim UpdateItem
// that found no item (see [Table.Claim]), or a successful PutItem of an
// event record (an expired record claimed anew). Tools that watch the
// receiver's calls from outside (the local runner's list of recent events,
// the storm and peer reports) tell first deliveries from duplicates with
// it, so that they do not depend on how a claim is written.
func ClaimCreated(params, result any) (string, bool) {
	switch in := params.(type) {
	case *dynamodb.PutItemInput:
		pk, _ := in.Item[AttrPK].(*types.AttributeValueMemberS)
		sk, _ := in.Item[AttrSK].(*types.AttributeValueMemberS)
		if pk != nil && sk != nil && sk.Value == SKEvent {
			return pk.Value, true
		}
	case *dynamodb.UpdateItemInput:
		out, _ := result.(*dynamodb.UpdateItemOutput)
		pk, _ := in.Key[AttrPK].(*types.AttributeValueMemberS)
		sk, _ := in.Key[AttrSK].(*types.AttributeValueMemberS)
		if out != nil && len(out.Attributes) == 0 && in.ReturnValues == types.ReturnValueAllOld &&
			pk != nil && sk != nil && sk.Value == SKEvent {
			return pk.Value, true
		}
	}
	return "", false
}

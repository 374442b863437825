package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookwall/hookwall/shared/webhook"
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
func (o ClaimOutcome) String() string {
	switch o {
	case Claimed:
		return "claimed"
	case Duplicate:
		return "duplicate"
	case Conflict:
		return "conflict"
	}
	return "unknown"
}

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
}

// ClaimResult is the outcome of Claim and the record it concerns: the new
// record when Claimed, the existing one otherwise.
type ClaimResult struct {
	Outcome ClaimOutcome
	Record  *Record
}

// Claim creates the event's record (status RECEIVED, version 1) with one
// conditional PutItem: `attribute_not_exists(pk) OR expiresAt < :now`. The
// record expires (TTL) after window. A live record already there gives
// Duplicate or Conflict, with that record, and no error.
func (t *Table) Claim(ctx context.Context, ev NewEvent, window time.Duration) (ClaimResult, error) {
	now := t.now()
	rec := &Record{
		Key:         ev.Key,
		SK:          SKEvent,
		Status:      webhook.StatusReceived,
		Version:     1,
		Provider:    ev.Provider,
		Tenant:      ev.Tenant,
		EventType:   ev.EventType,
		ReceivedAt:  now.UnixMilli(),
		UpdatedAt:   now.UnixMilli(),
		EnqueuedAt:  now.UnixMilli(),
		ExpiresAt:   now.Add(window).Unix(),
		PayloadHash: ev.PayloadHash,
		Payload:     ev.Payload,
		TraceID:     ev.TraceID,
		ClaimID:     newClaimID(),
	}
	if !ev.OccurredAt.IsZero() {
		rec.OccurredAt = ev.OccurredAt.UnixMilli()
	}
	item, err := attributevalue.MarshalMap(rec)
	if err != nil {
		return ClaimResult{}, fmt.Errorf("store: encode record %s: %w", ev.Key, err)
	}
	_, err = t.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:           &t.name,
		Item:                item,
		ConditionExpression: aws.String("attribute_not_exists(#pk) OR #exp < :now"),
		ExpressionAttributeNames: map[string]string{
			"#pk": AttrPK, "#exp": AttrExpiresAt,
		},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":now": epoch(now.Unix()),
		},
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	if err == nil {
		return ClaimResult{Outcome: Claimed, Record: rec}, nil
	}
	old, ok := conditionFailed(err)
	if !ok {
		return ClaimResult{}, fmt.Errorf("store: claim %s: %w", ev.Key, err)
	}
	existing, err := decodeRecord(old)
	if err != nil {
		return ClaimResult{}, fmt.Errorf("store: claim %s: %w", ev.Key, err)
	}
	if existing == nil { // DynamoDB always returns the item with ALL_OLD; be safe.
		existing = &Record{Key: ev.Key, PayloadHash: ev.PayloadHash}
	}
	if existing.PayloadHash != ev.PayloadHash {
		return ClaimResult{Outcome: Conflict, Record: existing}, nil
	}
	return ClaimResult{Outcome: Duplicate, Record: existing}, nil
}

// Unclaim deletes a record this receiver just claimed and could not enqueue,
// so that the platform's retry can claim it again. The delete is conditional
// on the record being untouched since (status RECEIVED, version 1, the same
// claimId): it never removes a record somebody else has moved on. It reports
// whether it deleted.
func (t *Table) Unclaim(ctx context.Context, rec *Record) (bool, error) {
	_, err := t.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName:           &t.name,
		Key:                 recordKey(rec.Key),
		ConditionExpression: aws.String("#st = :received AND #ver = :one AND #cid = :cid"),
		ExpressionAttributeNames: map[string]string{
			"#st": AttrStatus, "#ver": AttrVersion, "#cid": AttrClaimID,
		},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":received": &types.AttributeValueMemberS{Value: string(webhook.StatusReceived)},
			":one":      epoch(1),
			":cid":      &types.AttributeValueMemberS{Value: rec.ClaimID},
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
// stayed RECEIVED for longer than grace since it was last enqueued (the
// receiver that claimed it died between claim and send). Among concurrent
// duplicates exactly one wins: the update is conditional on the enqueuedAt the
// caller saw. It reports whether the caller won; the winner must send the
// record's envelope, and call RevertEnqueue if that fails.
func (t *Table) TakeOverEnqueue(ctx context.Context, rec *Record, grace time.Duration) (bool, error) {
	now := t.now()
	if rec.Status != webhook.StatusReceived || now.Sub(time.UnixMilli(rec.EnqueuedAt)) < grace {
		return false, nil
	}
	won, err := t.swapEnqueuedAt(ctx, rec.Key, rec.EnqueuedAt, now.UnixMilli())
	if err != nil || !won {
		return false, err
	}
	rec.EnqueuedAt = now.UnixMilli()
	return true, nil
}

// RevertEnqueue undoes TakeOverEnqueue after a failed send, so that the next
// duplicate tries again at once. prev is the enqueuedAt TakeOverEnqueue saw.
func (t *Table) RevertEnqueue(ctx context.Context, rec *Record, prev int64) error {
	_, err := t.swapEnqueuedAt(ctx, rec.Key, rec.EnqueuedAt, prev)
	return err
}

func (t *Table) swapEnqueuedAt(ctx context.Context, key string, from, to int64) (bool, error) {
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
			":from":     epoch(from),
			":to":       epoch(to),
		},
	})
	if err == nil {
		return true, nil
	}
	if _, ok := conditionFailed(err); ok {
		return false, nil
	}
	return false, fmt.Errorf("store: re-enqueue %s: %w", key, err)
}

func epoch(n int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
}

func newClaimID() string {
	var b [12]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+).
	return hex.EncodeToString(b[:])
}

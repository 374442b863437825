package store

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookwall/hookwall/shared/webhook"
)

// acquireCondition: claimable (RECEIVED or RETRY, or PROCESSING whose lease
// ran out) and not expired.
const acquireCondition = "attribute_exists(pk) AND (attribute_not_exists(expiresAt) OR expiresAt >= :nowSec) AND " +
	"(#s IN (:received, :retry) OR (#s = :processing AND (attribute_not_exists(leaseUntil) OR leaseUntil < :nowMs)))"

// fenceCondition: the lease is still ours and nothing moved the record since.
const fenceCondition = "leaseOwner = :owner AND version = :version AND #s = :processing"

// Acquire takes the lease of the record of key for owner until the given
// time, in one conditional UpdateItem: from RECEIVED or RETRY, or from
// PROCESSING whose lease has run out, and only while the record has not
// expired. It sets status PROCESSING, leaseOwner, leaseUntil and updatedAt,
// and increments attempts and version. When the condition fails it reads the
// old record sent back with the failure (ReturnValuesOnConditionCheckFailure
// ALL_OLD) and reports AlreadyDone, Busy (with the lease's remaining time),
// InFailedState or Missing: a lost race is never an error.
func (t *Table) Acquire(ctx context.Context, key, owner string, until time.Time) (webhook.Acquisition, error) {
	now := t.now()
	out, err := t.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &t.name,
		Key:       recordKey(key),
		UpdateExpression: aws.String("SET #s = :processing, leaseOwner = :owner, leaseUntil = :until, updatedAt = :nowMs, " +
			"attempts = if_not_exists(attempts, :zero) + :one, version = if_not_exists(version, :zero) + :one"),
		ConditionExpression:      aws.String(acquireCondition),
		ExpressionAttributeNames: map[string]string{"#s": AttrStatus},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":processing": avString(string(webhook.StatusProcessing)),
			":received":   avString(string(webhook.StatusReceived)),
			":retry":      avString(string(webhook.StatusRetry)),
			":owner":      avString(owner),
			":until":      avInt(until.UnixMilli()),
			":nowMs":      avInt(now.UnixMilli()),
			":nowSec":     avInt(now.Unix()),
			":zero":       avInt(0),
			":one":        avInt(1),
		},
		ReturnValues:                        types.ReturnValueAllNew,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	if err != nil {
		old, ok := conditionFailed(err)
		if !ok {
			return webhook.Acquisition{}, fmt.Errorf("store: acquire %s: %w", key, err)
		}
		rec, err := decodeRecord(old)
		if err != nil {
			return webhook.Acquisition{}, fmt.Errorf("store: acquire %s: %w", key, err)
		}
		return lostAcquisition(rec, now), nil
	}
	rec, err := decodeRecord(out.Attributes)
	if err != nil || rec == nil {
		return webhook.Acquisition{}, fmt.Errorf("store: acquire %s: no record returned: %w", key, err)
	}
	return webhook.Acquisition{
		Outcome:   webhook.Acquired,
		Lease:     leaseOf(rec),
		Status:    rec.Status,
		Attempts:  int(rec.Attempts),
		LastError: rec.LastError,
		Payload:   rec.Payload,
	}, nil
}

// lostAcquisition classifies the record that made an acquisition fail.
func lostAcquisition(rec *Record, now time.Time) webhook.Acquisition {
	if rec == nil || rec.Expired(now) {
		return webhook.Acquisition{Outcome: webhook.AcquireMissing}
	}
	a := webhook.Acquisition{Status: rec.Status, Attempts: int(rec.Attempts), LastError: rec.LastError}
	switch {
	case rec.Status.Terminal():
		a.Outcome = webhook.AcquireDone
	case rec.Status == webhook.StatusProcessing:
		a.Outcome = webhook.AcquireBusy
		a.RetryAfter = max(time.UnixMilli(rec.LeaseUntil).Sub(now), 0)
	case rec.Status == webhook.StatusFailed || rec.Status == webhook.StatusCompensating:
		a.Outcome = webhook.AcquireFailedState
	default:
		a.Outcome = webhook.AcquireMissing
	}
	return a
}

func leaseOf(rec *Record) webhook.Lease {
	l := webhook.Lease{
		Key:     rec.Key,
		Owner:   rec.LeaseOwner,
		Version: rec.Version,
		ClaimID: rec.ClaimID,
		Attempt: int(rec.Attempts),
		Until:   time.UnixMilli(rec.LeaseUntil),
	}
	if rec.ExpiresAt > 0 {
		l.ExpiresAt = time.Unix(rec.ExpiresAt, 0)
	}
	return l
}

// Heartbeat extends the lease to until, on condition that l still holds it
// (leaseOwner and status PROCESSING). It does not change the version.
// held is false when the lease is lost.
func (t *Table) Heartbeat(ctx context.Context, l webhook.Lease, until time.Time) (bool, error) {
	_, err := t.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                &t.name,
		Key:                      recordKey(l.Key),
		UpdateExpression:         aws.String("SET leaseUntil = :until, updatedAt = :nowMs"),
		ConditionExpression:      aws.String("leaseOwner = :owner AND #s = :processing"),
		ExpressionAttributeNames: map[string]string{"#s": AttrStatus},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":until":      avInt(until.UnixMilli()),
			":nowMs":      avInt(t.now().UnixMilli()),
			":owner":      avString(l.Owner),
			":processing": avString(string(webhook.StatusProcessing)),
		},
	})
	return fenced(err, "heartbeat", l.Key)
}

// Complete moves the record to SUCCEEDED, keeps it until retainUntil
// (expiresAt) and clears the lease and lastError; fenced on l's owner and
// version. held is false when the lease is lost (nothing is written).
func (t *Table) Complete(ctx context.Context, l webhook.Lease, retainUntil time.Time) (bool, error) {
	return t.transition(ctx, l, webhook.StatusSucceeded, "expiresAt = :expires", "lastError",
		map[string]types.AttributeValue{":expires": avInt(retainUntil.Unix())})
}

// Retry moves the record to RETRY with lastError and clears the lease;
// fenced on l's owner and version.
func (t *Table) Retry(ctx context.Context, l webhook.Lease, lastError string) (bool, error) {
	return t.transition(ctx, l, webhook.StatusRetry, "lastError = :err", "",
		map[string]types.AttributeValue{":err": avString(lastError)})
}

// Fail moves the record to FAILED with lastError and clears the lease;
// fenced on l's owner and version.
func (t *Table) Fail(ctx context.Context, l webhook.Lease, lastError string) (bool, error) {
	return t.transition(ctx, l, webhook.StatusFailed, "lastError = :err", "",
		map[string]types.AttributeValue{":err": avString(lastError)})
}

// transition is one fenced transition out of PROCESSING: version+1, the lease removed.
func (t *Table) transition(ctx context.Context, l webhook.Lease, to webhook.Status, set, remove string, vals map[string]types.AttributeValue) (bool, error) {
	update := "SET #s = :to, version = version + :one, updatedAt = :nowMs"
	if set != "" {
		update += ", " + set
	}
	update += " REMOVE leaseOwner, leaseUntil"
	if remove != "" {
		update += ", " + remove
	}
	values := map[string]types.AttributeValue{
		":to":         avString(string(to)),
		":one":        avInt(1),
		":nowMs":      avInt(t.now().UnixMilli()),
		":owner":      avString(l.Owner),
		":version":    avInt(l.Version),
		":processing": avString(string(webhook.StatusProcessing)),
	}
	for k, v := range vals {
		values[k] = v
	}
	_, err := t.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 &t.name,
		Key:                       recordKey(l.Key),
		UpdateExpression:          &update,
		ConditionExpression:       aws.String(fenceCondition),
		ExpressionAttributeNames:  map[string]string{"#s": AttrStatus},
		ExpressionAttributeValues: values,
	})
	return fenced(err, "set "+string(to), l.Key)
}

// fenced maps a conditional write's error: a failed condition is held=false.
func fenced(err error, op, key string) (bool, error) {
	if err == nil {
		return true, nil
	}
	if _, ok := conditionFailed(err); ok {
		return false, nil
	}
	return false, fmt.Errorf("store: %s %s: %w", op, key, err)
}

func avString(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }

func avInt(n int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
}

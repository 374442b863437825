package store

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookwall/hookwall/shared/base/webhook"
)

// What operators see of an event besides its transitions: the outside calls
// its handlers made and the deliveries of it that reached the table.
const (
	// AttrCalls is the list of the newest outside calls (at most
	// [webhook.MaxCalls], newest last), each a map: at (ms), target, status
	// (0: no answer), latencyMs, error and snippet (omitted when empty). It
	// is written by the settling write of the attempt that made the calls,
	// never by a write of its own.
	AttrCalls = "calls"
	// AttrCallCount counts every call made for the event.
	AttrCallCount = "callCount"
	// AttrDeliveries counts the deliveries of the event that reached the
	// table, the first included. The claim writes it (1) in the record it
	// creates, and a duplicate's claim adds one in its own single write
	// ([Table.Claim]); a duplicate whose claim could not count it (see
	// there) is counted by [Table.CountDelivery]. A record claimed before
	// the claim wrote it has none until its first duplicate, and counts 1
	// (see [Record.DeliveryCount]).
	AttrDeliveries = "deliveries"
	// AttrLastDeliveryAt is when the latest delivery reached the table (ms;
	// the claim's receivedAt until a duplicate's; absent: receivedAt).
	AttrLastDeliveryAt = "lastDeliveryAt"
)

// storedCall is a call as stored in the `calls` list.
type storedCall struct {
	At        int64  `dynamodbav:"at"`
	Target    string `dynamodbav:"target,omitempty"`
	Status    int    `dynamodbav:"status"`
	LatencyMs int64  `dynamodbav:"latencyMs"`
	Error     string `dynamodbav:"error,omitempty"`
	Snippet   string `dynamodbav:"snippet,omitempty"`
}

// encodeCalls returns the stored `calls` list of cs.
func encodeCalls(cs []webhook.Call) (types.AttributeValue, error) {
	out := make([]storedCall, len(cs))
	for i, c := range cs {
		out[i] = storedCall{At: c.At.UnixMilli(), Target: c.Target, Status: c.Status, LatencyMs: c.Latency.Milliseconds(),
			Error: c.Error, Snippet: c.Snippet}
	}
	av, err := attributevalue.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("store: encode calls: %w", err)
	}
	return av, nil
}

// decodeCalls reads a stored `calls` list.
func decodeCalls(av types.AttributeValue) ([]webhook.Call, error) {
	var in []storedCall
	if err := attributevalue.Unmarshal(av, &in); err != nil {
		return nil, fmt.Errorf("store: decode calls: %w", err)
	}
	var out []webhook.Call
	for _, c := range in {
		out = append(out, webhook.Call{At: time.UnixMilli(c.At), Target: c.Target, Status: c.Status,
			Latency: time.Duration(c.LatencyMs) * time.Millisecond, Error: c.Error, Snippet: c.Snippet})
	}
	return out, nil
}

// recordCalls makes w store the calls of l when its attempt added any
// ([webhook.Lease.AddCalls]): the list and the count, set whole (the write
// is fenced on the lease, so nothing else changed them since it was taken).
func recordCalls(w *write, l webhook.Lease) error {
	if l.CallsAdded() == 0 {
		return nil
	}
	av, err := encodeCalls(l.Calls)
	if err != nil {
		return err
	}
	w.sets(map[string]types.AttributeValue{AttrCalls: av, AttrCallCount: avInt(int64(l.CallCount))})
	return nil
}

// DeliveryCount returns how many deliveries of the event reached the table,
// the first included (at least 1).
func (r *Record) DeliveryCount() int64 { return max(r.Deliveries, 1) }

// LastDelivery returns when the latest delivery reached the table (epoch ms):
// the latest duplicate's, else the claim's.
func (r *Record) LastDelivery() int64 {
	if r.LastDeliveryAt > 0 {
		return r.LastDeliveryAt
	}
	return r.ReceivedAt
}

// CountDelivery records on rec's record one more delivery that reached the
// table, for a claim that found it Duplicate without counting it
// ([ClaimResult.Counted] unset: the record lacked an attribute the claim
// sets, see [Table.Claim]): one UpdateItem that adds one to `deliveries`
// (counting the first when absent) and sets `lastDeliveryAt`, on condition
// that the record is still rec's claim. It costs one write unit per KB of
// the record, on top of the claim's. It does not touch version, history
// or the sweep attributes: a count is not a transition. counted is false
// when the record is gone or was claimed anew; rec is updated with the new
// count when counted.
func (t *Table) CountDelivery(ctx context.Context, rec *Record) (counted bool, err error) {
	out, err := t.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:           &t.name,
		Key:                 recordKey(rec.Key),
		UpdateExpression:    aws.String("SET #d = if_not_exists(#d, :one) + :one, #last = :now"),
		ConditionExpression: aws.String("#cid = :cid"),
		ExpressionAttributeNames: map[string]string{
			"#d": AttrDeliveries, "#last": AttrLastDeliveryAt, "#cid": AttrClaimID,
		},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":one": avInt(1),
			":now": avInt(t.now().UnixMilli()),
			":cid": avString(rec.ClaimID),
		},
		ReturnValues: types.ReturnValueUpdatedNew,
	})
	if err != nil {
		if _, ok := conditionFailed(err); ok {
			return false, nil
		}
		return false, fmt.Errorf("store: count delivery %s: %w", rec.Key, err)
	}
	var got struct {
		Deliveries     int64 `dynamodbav:"deliveries"`
		LastDeliveryAt int64 `dynamodbav:"lastDeliveryAt"`
	}
	if err := attributevalue.UnmarshalMap(out.Attributes, &got); err != nil {
		return true, fmt.Errorf("store: count delivery %s: %w", rec.Key, err)
	}
	rec.Deliveries, rec.LastDeliveryAt = got.Deliveries, got.LastDeliveryAt
	return true, nil
}

package targetsdb

import (
	"cmp"
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookwall/hookwall/shared/state/targets"
	"github.com/hookwall/hookwall/shared/state/targets/internal/breaker"
)

func decodeBucket(item map[string]types.AttributeValue) breaker.Bucket {
	if len(item) == 0 {
		return breaker.Bucket{}
	}
	b := breaker.Bucket{Milli: num(item, attrTokens), UpdatedAt: num(item, attrUpdatedAt)}
	b.Exists = b.UpdatedAt != 0
	if v, ok := item[attrRate].(*types.AttributeValueMemberN); ok {
		b.Rate, _ = strconv.ParseFloat(v.Value, 64)
	}
	return b
}

// Take implements [targets.Gate.Take]: one conditional write when it grants
// tokens, none when it grants none. The instance's copy of the bucket is
// used as it is (another instance's takes only leave fewer tokens, which
// the conditional write finds out), but re-read before answering none if
// older than BreakerCacheFor (a rate set meanwhile).
func (t *Table) Take(ctx context.Context, target string, want int) (int, time.Time, error) {
	if target == "" || want < 0 {
		return 0, time.Time{}, fmt.Errorf("targets: take %d of %q: want a target and n of at least 0", want, target)
	}
	c, ok := t.buckets.get(target)
	b := c.v
	if !ok {
		var err error
		if b, err = readTarget(ctx, t, &t.buckets, target, skBucket, "bucket", decodeBucket); err != nil {
			return 0, time.Time{}, err
		}
		c.at = t.cfg.Now()
	}
	for range maxConflicts {
		now := t.cfg.Now()
		granted, after, next := breaker.Take(b, now.UnixMilli(), cmp.Or(b.Rate, t.cfg.Rate), want)
		if granted == 0 {
			if now.Sub(c.at) > targets.BreakerCacheFor {
				var err error
				if b, err = readTarget(ctx, t, &t.buckets, target, skBucket, "bucket", decodeBucket); err != nil {
					return 0, time.Time{}, err
				}
				c.at = now
				continue
			}
			return 0, time.UnixMilli(next), nil
		}
		cond := "attribute_not_exists(#upd)"
		values := map[string]types.AttributeValue{":m": n(after.Milli), ":u": n(after.UpdatedAt), ":t": s(target)}
		if b.Exists {
			cond = "#m = :oldm AND #upd = :oldu"
			values[":oldm"], values[":oldu"] = n(b.Milli), n(b.UpdatedAt)
		}
		_, err := t.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName: &t.name, Key: targetKey(target, skBucket),
			UpdateExpression: aws.String("SET #m = :m, #upd = :u, #target = :t"), ConditionExpression: &cond,
			ExpressionAttributeNames:            map[string]string{"#m": attrTokens, "#upd": attrUpdatedAt, "#target": attrTarget},
			ExpressionAttributeValues:           values,
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		})
		if item, failed := conditionFailed(err); failed {
			b, c.at = t.buckets.put(target, decodeBucket(item), now), now
			continue
		}
		if err != nil {
			return 0, time.Time{}, fmt.Errorf("targets: take from %s: %w", target, err)
		}
		t.buckets.put(target, after, now)
		return granted, time.UnixMilli(next), nil
	}
	return 0, time.Time{}, fmt.Errorf("targets: take from %s: lost %d races in a row", target, maxConflicts)
}

// SetRate sets the rate (calls per second) of target's bucket, overriding
// Config.Rate for every instance (0: back to Config.Rate).
func (t *Table) SetRate(ctx context.Context, target string, rate float64) error {
	if target == "" || rate < 0 || rate > 1e6 {
		return fmt.Errorf("targets: set rate %q %g: want a target and a rate from 0 to 1e6", target, rate)
	}
	in := &dynamodb.UpdateItemInput{
		TableName: &t.name, Key: targetKey(target, skBucket),
		UpdateExpression:         aws.String("REMOVE #rate"),
		ExpressionAttributeNames: map[string]string{"#rate": attrRate},
	}
	if rate > 0 {
		in.UpdateExpression = aws.String("SET #rate = :r")
		in.ExpressionAttributeValues = map[string]types.AttributeValue{":r": &types.AttributeValueMemberN{Value: strconv.FormatFloat(rate, 'g', -1, 64)}}
	}
	if _, err := t.db.UpdateItem(ctx, in); err != nil {
		return fmt.Errorf("targets: set rate %s: %w", target, err)
	}
	t.buckets.drop(target)
	return nil
}

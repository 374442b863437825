package store

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// The sweeper's cursor items: one per shard, pk [PKSweep], sk
// [SKCursorPrefix] + the shard's name, attribute [AttrCursorAt] (epoch ms).
// They carry no sweep, held or TTL attribute: no index sees them and they
// never expire.
const (
	PKSweep        = "SWEEP"
	SKCursorPrefix = "CURSOR#"
	AttrCursorAt   = "at"
)

func cursorKey(shard int) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		AttrPK: avString(PKSweep),
		AttrSK: avString(SKCursorPrefix + shardName(shard)),
	}
}

// SweepCursor reads the sweeper's cursor of shard with a strongly
// consistent read: every sweep entry of the shard with sweepAt at or before
// it has been handled. It is the zero time when the shard has none (the
// sweeper then reads the shard from the start).
func (t *Table) SweepCursor(ctx context.Context, shard int) (time.Time, error) {
	if err := checkShard("sweep cursor", shard); err != nil {
		return time.Time{}, err
	}
	out, err := t.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      &t.name,
		Key:            cursorKey(shard),
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return time.Time{}, fmt.Errorf("store: sweep cursor %s: %w", shardName(shard), err)
	}
	av, ok := out.Item[AttrCursorAt].(*types.AttributeValueMemberN)
	if !ok {
		return time.Time{}, nil
	}
	ms, err := strconv.ParseInt(av.Value, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("store: sweep cursor %s: %w", shardName(shard), err)
	}
	return time.UnixMilli(ms), nil
}

// AdvanceSweepCursor moves the sweeper's cursor of shard to to (millisecond
// precision), only forward: one conditional PutItem (`attribute_not_exists(pk)
// OR at < :to`), so concurrent sweepers are safe. It reports false, without
// error, when the cursor is already at or past to.
func (t *Table) AdvanceSweepCursor(ctx context.Context, shard int, to time.Time) (bool, error) {
	if err := checkShard("advance sweep cursor", shard); err != nil {
		return false, err
	}
	item := cursorKey(shard)
	item[AttrCursorAt] = avInt(to.UnixMilli())
	_, err := t.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:                 &t.name,
		Item:                      item,
		ConditionExpression:       aws.String("attribute_not_exists(pk) OR #at < :to"),
		ExpressionAttributeNames:  map[string]string{"#at": AttrCursorAt},
		ExpressionAttributeValues: map[string]types.AttributeValue{":to": avInt(to.UnixMilli())},
	})
	if _, lost := conditionFailed(err); lost {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("store: advance sweep cursor %s: %w", shardName(shard), err)
	}
	return true, nil
}

// MaxGetMany is the most keys one [Table.GetMany] takes (BatchGetItem's
// limit).
const MaxGetMany = 100

// getManyTries bounds the BatchGetItem calls of one GetMany (the first and
// the retries of its unprocessed keys); getManyBackoff is the first pause
// before a retry, doubled each time.
const (
	getManyTries   = 6
	getManyBackoff = 20 * time.Millisecond
)

// GetMany reads the event records of keys (at most [MaxGetMany]) with
// eventually consistent reads, in one BatchGetItem, retrying its
// unprocessed keys with backoff. The result is in the order of keys, nil
// for a record that is absent or expired. It does not read payloads kept in
// their own item (the Payload of such a record is empty): it is for
// deciding which records need a [Table.Get], such as the sweeper passing
// terminal records (a terminal status is final for its claim, so a stale
// read cannot show one that is not).
func (t *Table) GetMany(ctx context.Context, keys []string) ([]*Record, error) {
	if len(keys) > MaxGetMany {
		return nil, fmt.Errorf("store: get many: %d keys, more than %d", len(keys), MaxGetMany)
	}
	out := make([]*Record, len(keys))
	if len(keys) == 0 {
		return out, nil
	}
	at := make(map[string][]int, len(keys))
	want := make([]map[string]types.AttributeValue, 0, len(keys))
	for i, k := range keys {
		if _, dup := at[k]; !dup {
			want = append(want, recordKey(k))
		}
		at[k] = append(at[k], i)
	}
	now := t.now()
	pause := getManyBackoff
	for try := 1; len(want) > 0; try++ {
		res, err := t.db.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{
			RequestItems: map[string]types.KeysAndAttributes{t.name: {Keys: want}},
		})
		if err != nil {
			return nil, fmt.Errorf("store: get many (%d keys): %w", len(keys), err)
		}
		for _, item := range res.Responses[t.name] {
			rec, err := decodeRecord(item)
			if err != nil {
				return nil, err
			}
			if rec == nil || rec.Expired(now) {
				continue
			}
			for _, i := range at[rec.Key] {
				out[i] = rec
			}
		}
		want = res.UnprocessedKeys[t.name].Keys
		if len(want) == 0 {
			break
		}
		if try >= getManyTries {
			return nil, fmt.Errorf("store: get many: %d keys still unprocessed after %d tries", len(want), try)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("store: get many: %w", ctx.Err())
		case <-time.After(pause):
		}
		pause *= 2
	}
	return out, nil
}

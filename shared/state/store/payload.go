package store

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookwall/hookwall/shared/base/format"
	"github.com/hookwall/hookwall/shared/base/release"
	"github.com/hookwall/hookwall/shared/base/webhook"
)

// Where a payload is stored.
//
// A conditional write is charged on the larger of the item before and after
// it, so a payload kept in the event record is paid again by every lease,
// heartbeat, journal fence and completion. A payload therefore stays in the
// record (`payload`, a string, or gzip-compressed binary when that is what
// makes it fit) only while the record, with the payload and what a happy
// path adds to it (two history entries and the lease, [RecordGrowth]),
// stays within one write unit ([InlineRecordBytes]): the small events of
// chat platforms. A larger payload is written once, before the claim, to its
// own item beside the record: pk = the event key, sk =
// "PAYLOAD#<first 128 bits of the SHA-256 of the payload, hex>" (so a
// conflicting event under the same key never overwrites it), attributes
// `payload` (the same encoding) and `expiresAt`; the record then carries
// its sort key in `payloadRef` and no `payload`. Every record that exists
// has its payload: the claim's PutItem is made only once the payload item
// is there.
const (
	// SKPayloadPrefix starts the sort key of a payload item:
	// PAYLOAD#<hash prefix>.
	SKPayloadPrefix = "PAYLOAD#"
	// AttrPayloadRef is the record's reference to its payload item (its
	// sort key); absent when the payload is in the record.
	AttrPayloadRef = "payloadRef"
	// InlineRecordBytes is the largest record, through a happy path, that
	// keeps its payload inline: one write unit.
	InlineRecordBytes = 1024
	// RecordGrowth is what a happy path adds to a record after its claim,
	// at most: the acquisition's and the completion's history entries (87
	// and 88 bytes with a 16-character lease owner, the engine's, and fn
	// "processor"), 175 bytes (the completion keeps the sweep attributes,
	// counted in the claim's size: it leaves the sweep index alone); the
	// lease attributes while processing and its history entry make less.
	// The rest is room for a longer function name ("compensator": 4 bytes
	// more). It was 191 before the format stamps (12 bytes, counted in the
	// claim's size now, see claimItemBytes) took 12 of that room.
	RecordGrowth = 179
	// PayloadRetention is how long a payload item outlives its record's
	// expiry. A claim writes the item to expire at now + 2×window +
	// PayloadRetention (one window more than the record, so that a
	// duplicate inside the window finds it long-lived enough and does not
	// write it again), and Replay, a hold and a recheck of a held record
	// move it to the record's new expiresAt + PayloadRetention: the item
	// outlives its record as long as a completion keeps the record at most
	// window + PayloadRetention after the claim or the last hold (the
	// default retention is 7 days). A record whose item is gone anyway is
	// ended DEAD by the sweeper ([Table.Bury]).
	PayloadRetention = StepRetention
)

// ErrPayloadMissing reports a record whose payload item is gone (deleted by
// hand, or expired because the record was kept longer than the payload's
// retention).
var ErrPayloadMissing = errors.New("store: the record's payload item is missing")

// payloadSK returns the sort key of the payload item of payload.
func payloadSK(payload []byte) string {
	sum := sha256.Sum256(payload)
	return SKPayloadPrefix + hex.EncodeToString(sum[:16])
}

// claimItemBytes estimates, by DynamoDB's sizing rules and from above, the
// size of the item a claim of ev writes, without its payload: attribute
// names, the variable strings, and numbers and fixed values at their
// largest (see TestClaimItemBytesIsAnUpperBound).
func claimItemBytes(ev *NewEvent) int {
	// Names and fixed-size values: pk, sk=EVENT, status=RECEIVED,
	// version, provider, tenant, eventType, receivedAt, updatedAt,
	// enqueuedAt, expiresAt, attempts, payloadHash, payload, claimId (26),
	// sweepShard (2), sweepAt, history (a map of one entry: v1 → at, to,
	// fn), deliveries, lastDeliveryAt; numbers count 8 bytes, but those
	// whose value a claim fixes: version 1 (2 bytes), attempts 0 (1) and
	// deliveries 1 (2).
	const fixed = 2 + (2 + 5) + (6 + 8) + (7 + 2) + 8 + 6 + 9 + (10 + 8) + (9 + 8) + (10 + 8) + (9 + 8) + (8 + 1) +
		11 + 7 + (7 + 26) + (10 + 2) + (7 + 8) + (7 + 3 + 1 + 2 + 3 + 3 + (2 + 8) + (2 + 8) + 2) + (10 + 2) + (14 + 8)
	// The stamps every write adds (package stamp): fv (a one-digit number)
	// and rel, the release.
	const stamps = len(format.AttrVersion) + 2 + len(format.AttrRelease) + len(release.Version)
	n := fixed + stamps + len(ev.Key) + len(ev.Provider) + len(ev.Tenant) + len(ev.EventType) + len(ev.PayloadHash) + maxFunctionBytes
	if !ev.OccurredAt.IsZero() {
		n += 10 + 8
	}
	if ev.TraceID != "" {
		n += 7 + len(ev.TraceID)
	}
	return n
}

// ItemSize is an item's size by DynamoDB's rules, what a write is charged
// for (per 1 KB): attribute names and values, numbers at one byte per two
// significant digits plus one, binary and strings at their length, maps and
// lists 3 bytes plus one per element, booleans and nulls 1.
func ItemSize(item map[string]types.AttributeValue) int {
	n := 0
	for k, v := range item {
		n += len(k) + valueSize(v)
	}
	return n
}

func valueSize(av types.AttributeValue) int {
	switch v := av.(type) {
	case *types.AttributeValueMemberS:
		return len(v.Value)
	case *types.AttributeValueMemberB:
		return len(v.Value)
	case *types.AttributeValueMemberN:
		return (len(strings.TrimLeft(v.Value, "-0"))+1)/2 + 1
	case *types.AttributeValueMemberM:
		n := 3
		for k, e := range v.Value {
			n += 1 + len(k) + valueSize(e)
		}
		return n
	case *types.AttributeValueMemberL:
		n := 3
		for _, e := range v.Value {
			n += 1 + valueSize(e)
		}
		return n
	}
	return 1
}

// maxFunctionBytes bounds the writing function's name in a history entry
// ([Config.Function]: "compensator" is the longest).
const maxFunctionBytes = 12

// encodePayload returns the stored form of p: a string, or gzip binary when
// compress is set or p is larger than CompressAbove.
func encodePayload(p []byte, compress bool) (types.AttributeValue, error) {
	if !compress && len(p) <= CompressAbove {
		return &types.AttributeValueMemberS{Value: string(p)}, nil
	}
	zw := gzipWriters.Get().(*gzip.Writer)
	defer gzipWriters.Put(zw)
	var buf bytes.Buffer
	zw.Reset(&buf)
	if _, err := zw.Write(p); err != nil {
		return nil, fmt.Errorf("store: compress payload: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("store: compress payload: %w", err)
	}
	return &types.AttributeValueMemberB{Value: buf.Bytes()}, nil
}

// gzipWriters keeps gzip writers: a new one allocates some 800 KB.
var gzipWriters = sync.Pool{New: func() any { return gzip.NewWriter(nil) }}

// payloadItem is a payload item: pk = event key, sk = PAYLOAD#<hash>.
type payloadItem struct {
	Key       string  `dynamodbav:"pk"`
	SK        string  `dynamodbav:"sk"`
	Payload   Payload `dynamodbav:"payload"`
	ExpiresAt int64   `dynamodbav:"expiresAt"` // epoch s (TTL)
}

func payloadKey(key, sk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{AttrPK: avString(key), AttrSK: avString(sk)}
}

// payloadExpiry returns when the payload item of a claim made at now with
// window expires, and the expiry an existing payload item must have at
// least for the claim to use it as it is.
func payloadExpiry(now time.Time, window time.Duration) (expires, floor int64) {
	return now.Add(2*window + PayloadRetention).Unix(), now.Add(window + PayloadRetention).Unix()
}

// putPayload writes ev's payload item, unless one that lives long enough is
// there already: `attribute_not_exists(pk) OR expiresAt < :floor`. The
// item's content is its sort key's hash, so an item that is kept is the
// same payload; a failed condition costs one write unit and is no error.
func (t *Table) putPayload(ctx context.Context, ev *NewEvent, now time.Time, window time.Duration) error {
	expires, floor := payloadExpiry(now, window)
	_, err := t.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: &t.name,
		Item: map[string]types.AttributeValue{
			AttrPK: avString(ev.Key), AttrSK: avString(ev.ref), AttrPayload: ev.stored, AttrExpiresAt: avInt(expires),
		},
		ConditionExpression:       aws.String("attribute_not_exists(#pk) OR #exp < :floor"),
		ExpressionAttributeNames:  map[string]string{"#pk": AttrPK, "#exp": AttrExpiresAt},
		ExpressionAttributeValues: map[string]types.AttributeValue{":floor": avInt(floor)},
	})
	if err == nil {
		return nil
	}
	if _, ok := conditionFailed(err); ok {
		return nil
	}
	if rejected := inputRejected(err); rejected != nil {
		return fmt.Errorf("store: claim %s: payload item: %w", ev.Key, rejected)
	}
	return fmt.Errorf("store: claim %s: payload item: %w", ev.Key, err)
}

// getPayload reads the payload item ref of key (strongly consistent) and
// returns the payload and the item's expiry; ErrPayloadMissing if absent.
func (t *Table) getPayload(ctx context.Context, key, ref string) ([]byte, int64, error) {
	out, err := t.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &t.name, Key: payloadKey(key, ref), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, 0, fmt.Errorf("store: payload of %s: %w", key, err)
	}
	if len(out.Item) == 0 {
		return nil, 0, fmt.Errorf("store: payload of %s (%s): %w", key, ref, ErrPayloadMissing)
	}
	var it payloadItem
	if err := attributevalue.UnmarshalMap(out.Item, &it); err != nil {
		return nil, 0, fmt.Errorf("store: payload of %s: decode: %w", key, err)
	}
	return []byte(it.Payload), it.ExpiresAt, nil
}

// fillPayload reads rec's payload item into rec.Payload when the record
// refers to one.
func (t *Table) fillPayload(ctx context.Context, rec *Record) error {
	if rec == nil || rec.PayloadRef == "" || rec.Payload != nil {
		return nil
	}
	p, exp, err := t.getPayload(ctx, rec.Key, rec.PayloadRef)
	if err != nil {
		return err
	}
	rec.Payload, rec.PayloadExpiresAt = p, exp
	return nil
}

// keepPayload makes the payload item of rec outlive rec (its expiresAt plus
// PayloadRetention), for a write that moved rec's expiry later (Replay, a
// hold, a recheck): one conditional UpdateItem when the item would expire
// earlier (payloadExpires, its expiry as last read; 0 when unknown), none
// otherwise. A record without TTL (expiresAt 0) or whose payload is inline
// needs nothing.
func (t *Table) keepPayload(ctx context.Context, rec *Record, payloadExpires int64) error {
	need := time.Unix(rec.ExpiresAt, 0).Add(PayloadRetention).Unix()
	if rec.PayloadRef == "" || rec.ExpiresAt == 0 || payloadExpires >= need {
		return nil
	}
	_, err := t.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 &t.name,
		Key:                       payloadKey(rec.Key, rec.PayloadRef),
		UpdateExpression:          aws.String("SET #exp = :need"),
		ConditionExpression:       aws.String("attribute_exists(#pk) AND #exp < :need"),
		ExpressionAttributeNames:  map[string]string{"#pk": AttrPK, "#exp": AttrExpiresAt},
		ExpressionAttributeValues: map[string]types.AttributeValue{":need": avInt(need)},
	})
	if _, ok := conditionFailed(err); err == nil || ok {
		return nil
	}
	return fmt.Errorf("store: keep payload of %s: %w", rec.Key, err)
}

// LoadPayload returns the payload of the live record of key, wherever it is
// stored: in one strongly consistent Query of the record and its payload
// items (pk = key AND sk BETWEEN "EVENT" AND "PAYLOAD$"). The processor
// calls it for a message sent without its payload
// ([webhook.Envelope.PayloadInRecord]) when the lease it took did not carry
// the payload (a payload in its own item). A missing or expired record
// gives (nil, nil); a missing payload item an error wrapping
// [ErrPayloadMissing].
func (t *Table) LoadPayload(ctx context.Context, key string) ([]byte, error) {
	in := &dynamodb.QueryInput{
		TableName:                 &t.name,
		KeyConditionExpression:    aws.String("#pk = :pk AND #sk BETWEEN :event AND :end"),
		ExpressionAttributeNames:  map[string]string{"#pk": AttrPK, "#sk": AttrSK},
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": avString(key), ":event": avString(SKEvent), ":end": avString("PAYLOAD$")},
		ConsistentRead:            aws.Bool(true),
	}
	var rec *Record
	payloads := map[string]map[string]types.AttributeValue{}
	for {
		page, err := t.db.Query(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("store: load payload of %s: %w", key, err)
		}
		for _, item := range page.Items {
			sk, _ := item[AttrSK].(*types.AttributeValueMemberS)
			switch {
			case sk == nil:
			case sk.Value == SKEvent:
				if rec, err = decodeRecord(item); err != nil {
					return nil, fmt.Errorf("store: load payload of %s: %w", key, err)
				}
			default:
				payloads[sk.Value] = item
			}
		}
		if len(page.LastEvaluatedKey) == 0 {
			break
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
	if rec == nil || rec.Expired(t.now()) {
		return nil, nil
	}
	if rec.PayloadRef == "" {
		return rec.Payload, nil
	}
	item, ok := payloads[rec.PayloadRef]
	if !ok {
		return nil, fmt.Errorf("store: load payload of %s (%s): %w", key, rec.PayloadRef, ErrPayloadMissing)
	}
	var it payloadItem
	if err := attributevalue.UnmarshalMap(item, &it); err != nil {
		return nil, fmt.Errorf("store: load payload of %s: decode: %w", key, err)
	}
	return []byte(it.Payload), nil
}

// payloadOf is the payload a duplicate claim of ev finds in the record
// existing: its own (inline), or ev's when the record refers to the payload
// item of ev's very payload; nil when it refers to another one (the record's
// envelope then asks the processor to read it, see [Record.Envelope]).
func payloadOf(existing *Record, ev *NewEvent) Payload {
	if existing.PayloadRef == "" || len(existing.Payload) > 0 {
		return existing.Payload
	}
	ref := ev.ref
	if ref == "" { // ev decided to stay inline (a shorter trace id, say): compare by content
		ref = payloadSK(ev.Payload)
	}
	if existing.PayloadRef == ref {
		return Payload(ev.Payload)
	}
	return nil
}

// checkStored reports a payload too large for any item.
func checkStored(ev *NewEvent, av types.AttributeValue) error {
	if n := valueSize(av); n > MaxStoredPayload {
		return fmt.Errorf("store: event %s: payload is %d bytes as stored, over %d: %w", ev.Key, n, MaxStoredPayload, webhook.ErrTooLarge)
	}
	return nil
}

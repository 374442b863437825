package store

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookwall/hookwall/shared/base/webhook"
)

// Sort keys and attribute names.
const (
	// SKEvent is the sort key of an event record.
	SKEvent = "EVENT"
	// SKStepPrefix starts the sort key of a journal entry: STEP#<handler>#<step>.
	SKStepPrefix = "STEP#"

	AttrPK          = "pk"
	AttrSK          = "sk"
	AttrStatus      = "status"
	AttrVersion     = "version"
	AttrProvider    = "provider"
	AttrTenant      = "tenant"
	AttrEventType   = "eventType"
	AttrReceivedAt  = "receivedAt"
	AttrUpdatedAt   = "updatedAt"
	AttrExpiresAt   = "expiresAt"
	AttrLeaseOwner  = "leaseOwner"
	AttrLeaseUntil  = "leaseUntil"
	AttrAttempts    = "attempts"
	AttrPayloadHash = "payloadHash"
	AttrPayload     = "payload"
	AttrTraceID     = "traceId"
	AttrLastError   = "lastError"
	AttrClaimID     = "claimId"
	AttrEnqueuedAt  = "enqueuedAt"
	AttrOccurredAt  = "occurredAt"
	// AttrCompensations counts the compensator's attempts.
	AttrCompensations = "compensations"
	// AttrHistory is the record's bounded audit trail: a map "v<version>" →
	// entry (see [Record.History]).
	AttrHistory = "history"
	// AttrSweepShard and AttrSweepAt are the sparse attributes of the
	// sweeper's index [SweepIndex]: set by the claim, kept by the terminal
	// writes (the sweeper passes terminal entries from its cursor).
	AttrSweepShard = "sweepShard"
	AttrSweepAt    = "sweepAt"
	// AttrTarget is the target the last attempt was bound for (set by every
	// settling write since targets are recorded on each attempt; before,
	// only by a hold).
	AttrTarget = "target"
	// AttrGivenBack counts the attempts given back to the event for a call
	// that opened its target's breaker (set by a hold with
	// webhook.Hold.GiveBack; the dispatcher gives one back only while it is
	// 0). Absent reads as 0.
	AttrGivenBack = "givenBack"
	// AttrHeldReason, AttrHeldOn, AttrHeldSince and AttrRecheckAt describe a
	// HELD record (see [webhook.Hold]); heldOn and heldSince are the keys of
	// the sparse index [HeldIndex]. All four are removed when the record
	// leaves HELD.
	AttrHeldReason = "heldReason"
	AttrHeldOn     = "heldOn"
	AttrHeldSince  = "heldSince"
	AttrRecheckAt  = "recheckAt"
	// AttrGeneration is the record's life: absent (0) from the claim, one
	// more for each replay or recovery ([Table.Replay]). Every queue
	// message carries the generation of the record it was made from
	// ([webhook.Envelope.Generation]); the processor and the compensator
	// leave a message of an older generation (AcquireStale).
	AttrGeneration = "generation"
)

// Record is one event record (sk = EVENT).
type Record struct {
	Key         string         `dynamodbav:"pk"`
	SK          string         `dynamodbav:"sk"`
	Status      webhook.Status `dynamodbav:"status"`
	Version     int64          `dynamodbav:"version"`
	Provider    string         `dynamodbav:"provider"`
	Tenant      string         `dynamodbav:"tenant"`
	EventType   string         `dynamodbav:"eventType"`
	ReceivedAt  int64          `dynamodbav:"receivedAt"`           // epoch ms
	UpdatedAt   int64          `dynamodbav:"updatedAt"`            // epoch ms
	ExpiresAt   int64          `dynamodbav:"expiresAt"`            // epoch s (TTL)
	OccurredAt  int64          `dynamodbav:"occurredAt,omitempty"` // epoch ms
	EnqueuedAt  int64          `dynamodbav:"enqueuedAt,omitempty"` // epoch ms
	LeaseOwner  string         `dynamodbav:"leaseOwner,omitempty"`
	LeaseUntil  int64          `dynamodbav:"leaseUntil,omitempty"` // epoch ms
	Attempts    int64          `dynamodbav:"attempts"`
	PayloadHash string         `dynamodbav:"payloadHash"`
	// Payload is the event's payload. It is stored in the record, or,
	// when PayloadRef is set, in its own item (see [SKPayloadPrefix]); the
	// store's reads that hand a record out to be enqueued (Get, Claim's
	// Claimed and, for the same payload, Duplicate results, Replay) fill it
	// in either way.
	Payload Payload `dynamodbav:"payload"`
	// PayloadRef is the sort key of the record's payload item, empty when
	// the payload is in the record.
	PayloadRef string `dynamodbav:"payloadRef,omitempty"`
	// PayloadExpiresAt is the expiresAt (epoch s) of the payload item as
	// the read that filled Payload found it; 0 when not read (or inline).
	// Not stored in the record.
	PayloadExpiresAt int64  `dynamodbav:"-"`
	TraceID          string `dynamodbav:"traceId,omitempty"`
	LastError        string `dynamodbav:"lastError,omitempty"`
	ClaimID          string `dynamodbav:"claimId"`
	// Compensations counts the compensator's attempts (the compensation
	// lease's Attempt).
	Compensations int64 `dynamodbav:"compensations,omitempty"`
	// SweepShard and SweepAt index the record in [SweepIndex] from its
	// claim until TTL deletes it: its shard ("00".."ff", see [ShardOf] and
	// [ShardName]) and when the sweeper should look at it (epoch ms, never
	// set before the write's own now). A terminal record keeps them.
	SweepShard string `dynamodbav:"sweepShard,omitempty"`
	SweepAt    int64  `dynamodbav:"sweepAt,omitempty"`
	// Target is the target the last attempt was bound for ("" on a record
	// no attempt has settled, or written before every attempt recorded its
	// target and never held).
	Target string `dynamodbav:"target,omitempty"`
	// HeldReason, HeldOn, HeldSince (epoch ms) and RecheckAt (epoch ms)
	// are set while the record is HELD (see [webhook.Hold]); HeldOn and
	// HeldSince index it in [HeldIndex].
	HeldReason string `dynamodbav:"heldReason,omitempty"`
	HeldOn     string `dynamodbav:"heldOn,omitempty"`
	HeldSince  int64  `dynamodbav:"heldSince,omitempty"`
	RecheckAt  int64  `dynamodbav:"recheckAt,omitempty"`
	// History is the record's audit trail, oldest first: the newest
	// entries, at most the table's HistoryKeep, one per version. It is
	// stored as the map attribute `history` ("v<version>" → entry).
	History []webhook.HistoryEntry `dynamodbav:"-"`
	// Calls are the newest outside calls its handlers made, newest last, at
	// most [webhook.MaxCalls]; CallCount counts them all ([AttrCalls]).
	Calls     []webhook.Call `dynamodbav:"-"`
	CallCount int64          `dynamodbav:"callCount,omitempty"`
	// Format is the item's format version ([format.AttrVersion]; 0 on a
	// record written before versions, the previous format) and Release the
	// release that wrote it last ([format.AttrRelease]). Every write stamps
	// both (package stamp): a record never sets them itself.
	Format  int64  `dynamodbav:"fv,omitempty"`
	Release string `dynamodbav:"rel,omitempty"`
	// GivenBack counts the attempts given back for a call that opened the
	// target's breaker ([AttrGivenBack]).
	GivenBack int64 `dynamodbav:"givenBack,omitempty"`
	// Deliveries and LastDeliveryAt (epoch ms) count the deliveries that
	// reached the table: 1 and receivedAt from the claim, absent on a
	// record claimed before the claim wrote them (see [AttrDeliveries],
	// [Record.DeliveryCount], [Record.LastDelivery]).
	Deliveries     int64 `dynamodbav:"deliveries,omitempty"`
	LastDeliveryAt int64 `dynamodbav:"lastDeliveryAt,omitempty"`
	// Generation counts the record's lives (see [AttrGeneration]); absent
	// reads 0.
	Generation int64 `dynamodbav:"generation,omitempty"`
}

// StaleFor reports whether a message of generation gen is stale for the
// record: the record lives a newer life (gen [webhook.AnyGeneration] is
// never stale).
func (r *Record) StaleFor(gen int64) bool {
	return gen != webhook.AnyGeneration && r.Generation > gen
}

// HistoryDropped returns how many transitions of the record are no longer
// in its History (the oldest ones, dropped to keep it bounded, or made
// before the record had a history).
func (r *Record) HistoryDropped() int {
	return max(int(r.Version)-len(r.History), 0)
}

// Expired reports whether the record's TTL has passed at now: such a record
// counts as absent even while DynamoDB has not deleted it yet.
func (r *Record) Expired(now time.Time) bool {
	return r.ExpiresAt > 0 && r.ExpiresAt < now.Unix()
}

// Envelope rebuilds the queue message of the record, so that the receiver's
// re-enqueue, the sweeper and replay send exactly what the receiver sent. A
// record whose payload is in its own item and was not read with it gives an
// envelope without payload and with PayloadInRecord set: the processor then
// reads the payload from the table.
func (r *Record) Envelope() webhook.Envelope {
	env := webhook.Envelope{
		Key:        r.Key,
		Provider:   r.Provider,
		Tenant:     r.Tenant,
		Type:       r.EventType,
		ReceivedAt: time.UnixMilli(r.ReceivedAt).UTC(),
		TraceID:    r.TraceID,
		Payload:    []byte(r.Payload),
		Generation: r.Generation,
	}
	if r.PayloadRef != "" && len(r.Payload) == 0 {
		env.Payload, env.PayloadInRecord = nil, true
	}
	if r.OccurredAt != 0 {
		t := time.UnixMilli(r.OccurredAt).UTC()
		env.OccurredAt = &t
	}
	return env
}

// CompressAbove is the payload size from which it is stored gzip-compressed
// (as a binary attribute) instead of as a string.
const CompressAbove = 4 << 10

// Payload is the event's normalised JSON. It is stored as a string attribute,
// or gzip-compressed as a binary attribute when larger than CompressAbove
// (or, in a record, when compressing is what keeps the record within
// InlineRecordBytes). Either form is read back.
type Payload []byte

// MarshalDynamoDBAttributeValue stores p as S, or as gzip B when large.
func (p Payload) MarshalDynamoDBAttributeValue() (types.AttributeValue, error) {
	return encodePayload(p, false)
}

// UnmarshalDynamoDBAttributeValue reads either stored form.
func (p *Payload) UnmarshalDynamoDBAttributeValue(av types.AttributeValue) error {
	switch v := av.(type) {
	case *types.AttributeValueMemberS:
		*p = Payload(v.Value)
	case *types.AttributeValueMemberB:
		zr, err := gzip.NewReader(bytes.NewReader(v.Value))
		if err != nil {
			return fmt.Errorf("store: decompress payload: %w", err)
		}
		b, err := io.ReadAll(io.LimitReader(zr, 64<<20))
		if err != nil {
			return fmt.Errorf("store: decompress payload: %w", err)
		}
		*p = b
	case *types.AttributeValueMemberNULL:
		*p = nil
	default:
		return fmt.Errorf("store: payload has unexpected attribute type %T", av)
	}
	return nil
}

// encodeRecord marshals rec into an item.
func encodeRecord(rec *Record) (map[string]types.AttributeValue, error) {
	item, err := attributevalue.MarshalMap(rec)
	if err != nil {
		return nil, fmt.Errorf("store: encode record %s: %w", rec.Key, err)
	}
	return item, nil
}

// decodeRecord unmarshals an item; a nil or empty item gives nil.
func decodeRecord(item map[string]types.AttributeValue) (*Record, error) {
	if len(item) == 0 {
		return nil, nil
	}
	var r Record
	if err := attributevalue.UnmarshalMap(item, &r); err != nil {
		return nil, fmt.Errorf("store: decode record: %w", err)
	}
	return &r, nil
}

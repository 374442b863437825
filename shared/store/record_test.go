package store

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func TestPayloadStoredAsStringOrGzip(t *testing.T) {
	small := Payload(`{"a":1}`)
	large := Payload(`{"text":"` + strings.Repeat("hello ", 2000) + `"}`)
	for _, p := range []Payload{small, large} {
		av, err := p.MarshalDynamoDBAttributeValue()
		if err != nil {
			t.Fatal(err)
		}
		switch av.(type) {
		case *types.AttributeValueMemberS:
			if len(p) > CompressAbove {
				t.Errorf("%d-byte payload stored as a string", len(p))
			}
		case *types.AttributeValueMemberB:
			b := av.(*types.AttributeValueMemberB).Value
			if len(p) <= CompressAbove || len(b) >= len(p) {
				t.Errorf("%d-byte payload stored as %d compressed bytes", len(p), len(b))
			}
		}
		var back Payload
		if err := back.UnmarshalDynamoDBAttributeValue(av); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(back, p) {
			t.Errorf("round trip changed the payload")
		}
	}
	var bad Payload
	if err := bad.UnmarshalDynamoDBAttributeValue(&types.AttributeValueMemberB{Value: []byte("not gzip")}); err == nil {
		t.Error("corrupt gzip: want an error")
	}
}

func TestRecordRoundTripAndEnvelope(t *testing.T) {
	now := time.UnixMilli(1767225600123).UTC()
	r := Record{Key: "line#acme#E1", SK: SKEvent, Status: "RECEIVED", Version: 1, Provider: "line", Tenant: "acme",
		EventType: "message", ReceivedAt: now.UnixMilli(), OccurredAt: now.Add(-time.Second).UnixMilli(),
		ExpiresAt: now.Add(time.Hour).Unix(), PayloadHash: "h", Payload: Payload(`{"x":1}`), TraceID: "t", ClaimID: "c"}
	item, err := attributevalue.MarshalMap(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{AttrPK, AttrSK, AttrStatus, AttrVersion, AttrProvider, AttrTenant, AttrEventType,
		AttrReceivedAt, AttrExpiresAt, AttrPayloadHash, AttrPayload, AttrTraceID, AttrClaimID} {
		if _, ok := item[name]; !ok {
			t.Errorf("attribute %s missing", name)
		}
	}
	back, err := decodeRecord(item)
	if err != nil || back.Key != r.Key || string(back.Payload) != string(r.Payload) {
		t.Fatalf("decode = %+v, %v", back, err)
	}
	env := back.Envelope()
	if env.Key != r.Key || !env.ReceivedAt.Equal(now) || env.OccurredAt == nil || string(env.Payload) != `{"x":1}` {
		t.Fatalf("envelope = %+v", env)
	}
	if back.Expired(now) || !back.Expired(now.Add(2*time.Hour)) {
		t.Error("Expired is wrong")
	}
}

package store

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
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

// TestClaimItemBytesIsAnUpperBound checks the estimate Prepare decides with
// against the item a claim writes, for the longest function name.
func TestClaimItemBytesIsAnUpperBound(t *testing.T) {
	now := time.Now()
	for _, ev := range []NewEvent{
		{Key: "line#t#E1", Provider: "line", Tenant: "t", EventType: "message", PayloadHash: "h", Payload: []byte(`{}`)},
		{Key: "wecom#tenant-with-a-long-name#" + strings.Repeat("k", 64), Provider: "wecom", Tenant: "tenant-with-a-long-name",
			EventType: "change_contact", OccurredAt: now, PayloadHash: strings.Repeat("f", 64), Payload: []byte(`{"a":1}`),
			TraceID: "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"},
	} {
		rec := ev.ClaimRecord(now, 7*24*time.Hour, DefaultSweepAfter, "compensator")
		rec.Payload = ev.Payload
		item, err := attributevalue.MarshalMap(rec)
		if err != nil {
			t.Fatal(err)
		}
		got := ItemSize(item) - len(AttrPayload) - len(ev.Payload)
		if est := claimItemBytes(&ev); est < got {
			t.Errorf("%s: estimate %d bytes, the claim writes %d", ev.Key, est, got)
		} else if est > got+48 {
			t.Errorf("%s: estimate %d bytes is far above the %d the claim writes", ev.Key, est, got)
		}
	}
}

// TestPrepareDecidesWherePayloadGoes checks that a payload stays in the
// record while the record stays within one write unit, compressed if that is
// what makes it fit, and goes to its own item otherwise (compressed there
// when smaller).
func TestPrepareDecidesWherePayloadGoes(t *testing.T) {
	hexText := func(n int) []byte {
		b := make([]byte, n/2)
		_, _ = rand.Read(b)
		return []byte(`{"t":"` + hex.EncodeToString(b) + `"}`)
	}
	for _, c := range []struct {
		name    string
		payload []byte
		apart   bool
		gzip    bool
	}{
		{"small", []byte(`{"type":"message","text":"` + strings.Repeat("a", 300) + `"}`), false, false},
		{"fits compressed", []byte(`{"type":"message","text":"` + strings.Repeat("hello ", 150) + `"}`), false, true},
		{"large", hexText(8 << 10), true, true},
		{"large, compressible, under CompressAbove", []byte(`{"t":"` + strings.Repeat("hello world ", 300) + `"}`), false, true},
		{"4 KB of text that gzip cannot fit", []byte(base64.StdEncoding.EncodeToString(hexText(3 << 10))), true, true},
	} {
		ev := NewEvent{Key: "line#t1#E1", Provider: "line", Tenant: "t1", EventType: "message", PayloadHash: "h", Payload: c.payload}
		if err := ev.Prepare(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if apart := ev.PayloadRef() != ""; apart != c.apart {
			t.Errorf("%s (%d bytes): apart %v, want %v", c.name, len(c.payload), apart, c.apart)
		}
		if _, gz := ev.stored.(*types.AttributeValueMemberB); gz != c.gzip {
			t.Errorf("%s (%d bytes): gzip %v, want %v", c.name, len(c.payload), gz, c.gzip)
		}
		if !c.apart && claimItemBytes(&ev)+len(AttrPayload)+ev.StoredPayloadBytes()+RecordGrowth > InlineRecordBytes {
			t.Errorf("%s: kept in a record that outgrows %d bytes", c.name, InlineRecordBytes)
		}
		if c.apart && ev.PayloadRef() != payloadSK(c.payload) {
			t.Errorf("%s: payload ref %q", c.name, ev.PayloadRef())
		}
	}
}

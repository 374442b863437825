package queue

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/hookwall/hookwall/shared/base/format"
	"github.com/hookwall/hookwall/shared/base/format/golden"
	"github.com/hookwall/hookwall/shared/base/release"
	"github.com/hookwall/hookwall/shared/base/webhook"
)

// The queue message of the golden fixture decodes into today's Envelope and
// encodes back with the same fields: a renamed or retyped envelope field
// fails here.
func TestMessageGoldenFixtureRoundTrips(t *testing.T) {
	f, err := golden.Load("message", format.MessageVersion)
	if err != nil {
		t.Fatal(err)
	}
	var sample struct {
		Body json.RawMessage `json:"body"`
	}
	if err := json.Unmarshal(f.Sample, &sample); err != nil {
		t.Fatal(err)
	}
	var env webhook.Envelope
	if err := json.Unmarshal(sample.Body, &env); err != nil {
		t.Fatal(err)
	}
	b, err := EncodeMessage(&env)
	if err != nil {
		t.Fatal(err)
	}
	got, err := golden.JSONFields(b, "payload")
	if err != nil {
		t.Fatal(err)
	}
	for name, typ := range f.Fields {
		if strings.HasPrefix(name, "attributes.") {
			continue
		}
		if got[name] != typ {
			t.Errorf("body field %q (%s) comes back as %q: a renamed or retyped envelope field takes a format version step", name, typ, got[name])
		}
	}
}

func TestStampedAndItsSize(t *testing.T) {
	attrs := Stamped(map[string]types.MessageAttributeValue{AttrEventKey: {DataType: aws.String("String"), StringValue: aws.String("k")}})
	v, r := attrs[format.MessageAttrVersion], attrs[format.MessageAttrRelease]
	if aws.ToString(v.DataType) != "Number" || aws.ToString(v.StringValue) != "2" || aws.ToString(r.StringValue) != release.Version || len(attrs) != 3 {
		t.Errorf("stamped attributes %v", attrs)
	}
	n := 0
	for name, a := range attrs {
		if name != AttrEventKey {
			n += len(name) + len(aws.ToString(a.DataType)) + len(aws.ToString(a.StringValue))
		}
	}
	if n != stampBytes() {
		t.Errorf("the stamps take %d bytes, stampBytes says %d", n, stampBytes())
	}
}

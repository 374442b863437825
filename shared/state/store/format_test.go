package store

import (
	"maps"
	"testing"

	"github.com/hookwall/hookwall/shared/base/format"
	"github.com/hookwall/hookwall/shared/base/format/golden"
)

// The record of the golden fixture (testdata/formats/record.v<N>.json),
// and the same record without its stamps (the previous format, release
// 0.1.0's), decode with today's code, and every attribute the Record type
// holds comes back from its encoding under the same name and type: a
// renamed or retyped `dynamodbav` tag fails here.
func TestRecordGoldenFixtureRoundTrips(t *testing.T) {
	f, err := golden.Load("record", format.ItemVersion)
	if err != nil {
		t.Fatal(err)
	}
	item, err := golden.ItemFromJSON(f.Sample)
	if err != nil {
		t.Fatal(err)
	}
	previous := maps.Clone(item)
	delete(previous, format.AttrVersion)
	delete(previous, format.AttrRelease)
	for _, version := range []int64{format.ItemVersion - 1, format.ItemVersion} {
		in := item
		if version < format.ItemVersion {
			in = previous
		}
		rec, err := decodeRecord(in)
		if err != nil {
			t.Fatalf("v%d: %v", version, err)
		}
		want := version
		if version < format.ItemVersion {
			want = 0 // no stamp: the previous format
		}
		if rec.Format != want || rec.Key == "" || rec.Status == "" || rec.ReceivedAt == 0 || format.Newer(format.Item, int(rec.Format)) {
			t.Errorf("v%d: decoded %+v", version, rec)
		}
		out, err := encodeRecord(rec)
		if err != nil {
			t.Fatal(err)
		}
		got := golden.ItemFields(out)
		for name, typ := range golden.ItemFields(in) {
			if outsideTheStruct[name] {
				continue
			}
			if got[name] != typ {
				t.Errorf("v%d: attribute %q (%s) of the fixture comes back as %q: a renamed or retyped Record field takes a format version step", version, name, typ, got[name])
			}
		}
	}
}

// outsideTheStruct are the record's attributes written apart from the
// Record type's own fields (its history map, the step journal).
var outsideTheStruct = map[string]bool{AttrHistory: true, "step#*": true, "stepBytes": true}

package golden

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookwall/hookwall/shared/base/format"
)

// recorder is a TB that records instead of failing: the test of the test.
type recorder struct{ errs []string }

func (r *recorder) Helper()                      {}
func (r *recorder) Errorf(f string, args ...any) { r.errs = append(r.errs, fmt.Sprintf(f, args...)) }
func (r *recorder) Fatalf(f string, args ...any) { r.errs = append(r.errs, fmt.Sprintf(f, args...)) }
func (r *recorder) failedOn(words ...string) bool {
	for _, e := range r.errs {
		ok := true
		for _, w := range words {
			ok = ok && strings.Contains(e, w)
		}
		if ok {
			return true
		}
	}
	return false
}

func TestDiff(t *testing.T) {
	want := map[string]string{"status": "S", "attempts": "N"}
	if d := Diff(want, map[string]string{"status": "S", "attempts": "N"}); len(d) != 0 {
		t.Errorf("same shape: %v", d)
	}
	d := Diff(want, map[string]string{"state": "S", "attempts": "S"})
	if len(d) != 3 || !strings.Contains(d[0], `"attempts" is written as S`) || !strings.Contains(d[1], `"status" (S) is no longer written`) || !strings.Contains(d[2], `"state" (S) is new`) {
		t.Errorf("renamed and retyped: %q", d)
	}
}

// The test of the golden test (issue 32, must-show 2): the record fixture
// checked in, with one persisted field renamed as a code change would
// rename it, fails the check that passes on the fixture itself.
func TestRenamedPersistedFieldFailsTheGoldenCheck(t *testing.T) {
	f, err := Load("record", format.ItemVersion)
	if err != nil {
		t.Fatal(err)
	}
	fields := maps.Clone(f.Fields) // what today's writers wrote (the integration test checks they still do)
	var ok recorder
	Check(&ok, "record", format.Item, fields, f.Sample)
	if len(ok.errs) != 0 {
		t.Fatalf("the fixture's own fields fail: %v", ok.errs)
	}
	fields["state"] = fields["status"] // the renamed field: `dynamodbav:"status"` became "state"
	delete(fields, "status")
	var renamed recorder
	Check(&renamed, "record", format.Item, fields, f.Sample)
	if !renamed.failedOn(`"status"`, "no longer written", "version step") || !renamed.failedOn(`"state"`, "is new") {
		t.Errorf("a renamed field passed the golden check: %q", renamed.errs)
	}
	fields["status"] = "N" // retyped instead
	delete(fields, "state")
	var retyped recorder
	Check(&retyped, "record", format.Item, fields, f.Sample)
	if !retyped.failedOn(`"status" is written as N`) {
		t.Errorf("a retyped field passed the golden check: %q", retyped.errs)
	}
}

func TestItemJSONRoundTrip(t *testing.T) {
	item := map[string]types.AttributeValue{
		"s": &types.AttributeValueMemberS{Value: "x"}, "n": &types.AttributeValueMemberN{Value: "1"},
		"b": &types.AttributeValueMemberB{Value: []byte{1, 2}}, "t": &types.AttributeValueMemberBOOL{Value: true},
		"m":  &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"l": &types.AttributeValueMemberL{Value: []types.AttributeValue{&types.AttributeValueMemberS{Value: "y"}}}}},
		"ss": &types.AttributeValueMemberSS{Value: []string{"a"}},
	}
	raw, err := json.Marshal(ItemJSON(item))
	if err != nil {
		t.Fatal(err)
	}
	back, err := ItemFromJSON(raw)
	if err != nil || !reflect.DeepEqual(ItemFields(back), ItemFields(item)) || !reflect.DeepEqual(ItemJSON(back), ItemJSON(item)) {
		t.Errorf("round trip: %v, %v", back, err)
	}
}

func TestItemFieldsNameVariableParts(t *testing.T) {
	got := ItemFields(map[string]types.AttributeValue{"step#charge": &types.AttributeValueMemberM{}, "pk": &types.AttributeValueMemberS{}})
	if !reflect.DeepEqual(got, map[string]string{"step#*": "M", "pk": "S"}) {
		t.Errorf("got %v", got)
	}
}

package wxmsg

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/provider/xmljson"
	"github.com/hookwall/hookwall/shared/webhook"
)

func TestCheckWindow(t *testing.T) {
	now := time.Unix(1767225614, 0)
	for _, tt := range []struct {
		name  string
		ts    string
		tol   time.Duration
		stale bool
	}{
		{"inside", "1767225614", DefaultTolerance, false},
		{"at +tolerance", "1767225914", DefaultTolerance, false},
		{"at -tolerance", "1767225314", DefaultTolerance, false},
		{"past +tolerance", "1767225915", DefaultTolerance, true},
		{"past -tolerance", "1767225313", DefaultTolerance, true},
		{"sub-second tolerance truncates to 0", "1767225615", 999 * time.Millisecond, true},
		{"not an integer", "soon", DefaultTolerance, true},
		{"minimum int64 does not overflow", "-9223372036854775808", DefaultTolerance, true},
		{"negative tolerance disables the check", "1", -1, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckWindow(tt.ts, now, tt.tol)
			if tt.stale != errors.Is(err, webhook.ErrStaleTimestamp) || (!tt.stale && err != nil) {
				t.Errorf("CheckWindow(%q) = %v, want stale = %v", tt.ts, err, tt.stale)
			}
		})
	}
	if err := CheckWindow("1", time.Time{}, DefaultTolerance); !errors.Is(err, webhook.ErrStaleTimestamp) {
		t.Errorf("zero now: got %v, want the current time used", err)
	}
}

func TestFingerprint(t *testing.T) {
	// Dedup keys embed these values: they must never change.
	for _, tt := range []struct {
		fields []Field
		want   string
	}{
		{nil, "e3b0c44298fc1c149afbf4c8996fb924"},
		{[]Field{{"MsgId", "1 2"}}, "2d9561344c42bb883ec790da3ddd4a70"},
		{[]Field{{"AgentID", ""}, {"MsgId", "x"}}, "4877d79bad31a51469f812949d87b5bd"},
	} {
		if got := Fingerprint(tt.fields...); got != tt.want {
			t.Errorf("Fingerprint(%v) = %s, want %s", tt.fields, got, tt.want)
		}
	}
}

func TestIsToken(t *testing.T) {
	for _, tt := range []struct {
		s    string
		max  int
		want bool
	}{
		{"7456789012345678901", 64, true},
		{"a-b_c.D9", 8, true},
		{"a-b_c.D9", 7, false},
		{"", 64, false},
		{"1 2", 64, false},
		{"a:b", 64, false},
		{"é", 64, false},
	} {
		if got := IsToken(tt.s, tt.max); got != tt.want {
			t.Errorf("IsToken(%q, %d) = %v, want %v", tt.s, tt.max, got, tt.want)
		}
	}
}

func TestType(t *testing.T) {
	for xml, want := range map[string]string{
		"<xml><MsgType>text</MsgType></xml>":                      "text",
		"<xml><MsgType>event</MsgType><Event>CLICK</Event></xml>": "CLICK",
		"<xml><MsgType>event</MsgType></xml>":                     "",
		"<xml><Event>CLICK</Event></xml>":                         "",
		"<xml><InfoType>suite_ticket</InfoType></xml>":            "",
	} {
		if got := Type(convert(t, xml)); got != want {
			t.Errorf("Type(%s) = %q, want %q", xml, got, want)
		}
	}
}

func TestNewEvent(t *testing.T) {
	raw := []byte("<xml><CreateTime>1767225700</CreateTime><MsgType>text</MsgType></xml>")
	doc := convert(t, string(raw))
	ev := NewEvent(raw, doc, "text")
	if ev.Type != "text" || string(ev.Raw) != string(raw) || string(ev.JSON) != string(doc.JSON) || ev.DedupKey != "" {
		t.Errorf("event = %+v", ev)
	}
	if want := time.Unix(1767225700, 0).UTC(); ev.OccurredAt != want {
		t.Errorf("OccurredAt = %v, want %v", ev.OccurredAt, want)
	}
	if len(ev.PayloadHash) != 64 || strings.ToLower(ev.PayloadHash) != ev.PayloadHash {
		t.Errorf("PayloadHash = %q, want 64 lowercase hex", ev.PayloadHash)
	}
	for _, ct := range []string{"", "0", "-5", "soon", "99999999999999999999"} {
		raw := []byte("<xml><CreateTime>" + ct + "</CreateTime></xml>")
		if ev := NewEvent(raw, convert(t, string(raw)), "x"); !ev.OccurredAt.IsZero() {
			t.Errorf("CreateTime %q: OccurredAt = %v, want zero", ct, ev.OccurredAt)
		}
	}
}

func convert(t *testing.T, xml string) *xmljson.Doc {
	t.Helper()
	doc, err := xmljson.Convert([]byte(xml))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

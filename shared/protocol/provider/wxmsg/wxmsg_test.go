package wxmsg

import (
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/protocol/provider/wxcrypto"
	"github.com/hookwall/hookwall/shared/protocol/provider/xmljson"
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
		{"zero tolerance is the default: at +default", "1767225914", 0, false},
		{"zero tolerance is the default: past -default", "1767225313", 0, true},
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

func TestAccountOpenCiphertext(t *testing.T) {
	const token, encodingAESKey, corp = "tok", "jWmYm7qr5nMoAUwZRjGtBxmz3KA1tkAj3ykkR6q2B2C", "ww123"
	key, err := wxcrypto.ParseKey(encodingAESKey)
	if err != nil {
		t.Fatal(err)
	}
	acct := Account{Token: token, Key: key, ReceiveID: corp, Tolerance: time.Minute}
	now := time.Unix(1767225600, 0)
	ct, err := wxcrypto.Encrypt(key, []byte("0123456789abcdef"), []byte("hello"), corp)
	if err != nil {
		t.Fatal(err)
	}
	query := func(sig, ts string) url.Values {
		return url.Values{"msg_signature": {sig}, "timestamp": {ts}, "nonce": {"n"}}
	}
	good := wxcrypto.Signature(token, "1767225600", "n", ct)
	if plain, err := acct.OpenCiphertext(query(good, "1767225600"), ct, now); err != nil || string(plain) != "hello" {
		t.Fatalf("OpenCiphertext = %q, %v", plain, err)
	}
	body := []byte("<xml><ToUserName><![CDATA[anyone]]></ToUserName><Encrypt><![CDATA[" + ct + "]]></Encrypt></xml>")
	if plain, err := acct.OpenEnvelope(query(good, "1767225600"), body, now); err != nil || string(plain) != "hello" {
		t.Fatalf("OpenEnvelope = %q, %v", plain, err)
	}
	stale := wxcrypto.Signature(token, "1767225000", "n", ct)
	other := Account{Token: token, Key: key, ReceiveID: "ww999", Tolerance: time.Minute}
	for name, c := range map[string]struct {
		err  error
		open func() ([]byte, error)
	}{
		"bad signature": {webhook.ErrBadSignature, func() ([]byte, error) { return acct.OpenCiphertext(query("0"+good[1:], "1767225600"), ct, now) }},
		"missing nonce": {webhook.ErrBadSignature, func() ([]byte, error) {
			return acct.OpenCiphertext(url.Values{"msg_signature": {good}, "timestamp": {"1767225600"}}, ct, now)
		}},
		"stale":          {webhook.ErrStaleTimestamp, func() ([]byte, error) { return acct.OpenCiphertext(query(stale, "1767225000"), ct, now) }},
		"other receiver": {webhook.ErrBadSignature, func() ([]byte, error) { return other.OpenCiphertext(query(good, "1767225600"), ct, now) }},
		"no Encrypt": {webhook.ErrMalformed, func() ([]byte, error) {
			return acct.OpenEnvelope(query(good, "1767225600"), []byte("<xml><ToUserName>x</ToUserName></xml>"), now)
		}},
	} {
		if _, err := c.open(); !errors.Is(err, c.err) {
			t.Errorf("%s: err = %v, want %v", name, err, c.err)
		}
	}
}

func TestValidKey(t *testing.T) {
	for k, want := range map[string]bool{
		"msg:1000002:7456789012345678901":  true,
		"evt:_:" + strings.Repeat("f", 32): true,
		strings.Repeat("k", MaxKeyLen):     true,
		"":                                 false,
		strings.Repeat("k", MaxKeyLen+1):   false,
		"msg:1 2":                          false,
		"msg:1\n":                          false,
		"msg:1\t":                          false,
		"msg:\x7f":                         false,
		"msg:é":                            false,
		"msg:\xff":                         false,
	} {
		if got := ValidKey(k); got != want {
			t.Errorf("ValidKey(%q) = %v, want %v", k, got, want)
		}
	}
}

// Ack is 200 text/plain with the body, whose capacity is cut: appending to
// one reply's body never writes into the shared acknowledgement.
func TestAckDoesNotShareSpareCapacity(t *testing.T) {
	shared := []byte("success--")[:7]
	r := Ack(shared)
	if r.Status != 200 || r.ContentType != "text/plain; charset=utf-8" || string(r.Body) != "success" {
		t.Fatalf("Ack = %d %q %q", r.Status, r.ContentType, r.Body)
	}
	_ = append(r.Body, 'X')
	if got := string(shared[:cap(shared)]); got != "success--" {
		t.Errorf("appending to the reply wrote into the shared body: %q", got)
	}
	if b := Ack([]byte{}).Body; b == nil || len(b) != 0 {
		t.Errorf("an empty body stays empty, not nil: %#v", b)
	}
}

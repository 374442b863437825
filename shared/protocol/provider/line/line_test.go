package line_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/protocol/provider/line"
)

const testSecret = "4ff9d63e71e500b545dff84ca23787f3"

// parseSigned signs body with testSecret and parses it.
func parseSigned(t *testing.T, body string) (*webhook.Delivery, error) {
	t.Helper()
	p := mustNew(t, testSecret)
	return p.Parse(context.Background(), post([]byte(body), sign(testSecret, []byte(body))))
}

func TestNewRequiresSecret(t *testing.T) {
	if _, err := line.New(line.Config{}); err == nil {
		t.Fatal("New with an empty secret: got nil error")
	}
}

func TestParseRejectsGET(t *testing.T) {
	c := caseNamed(t, "single_text_message")
	req := post([]byte(c.Body), c.SignatureHeader)
	req.Method = http.MethodGet
	_, err := mustNew(t, c.ChannelSecret).Parse(context.Background(), req)
	if !errors.Is(err, webhook.ErrMethodNotAllowed) {
		t.Fatalf("got %v, want ErrMethodNotAllowed", err)
	}
}

func TestParseNilRequest(t *testing.T) {
	_, err := mustNew(t, testSecret).Parse(context.Background(), nil)
	if !errors.Is(err, webhook.ErrMalformed) {
		t.Fatalf("got %v, want ErrMalformed", err)
	}
}

func TestParseMalformed(t *testing.T) {
	const ev = `"type":"message","timestamp":1,"mode":"active","deliveryContext":{"isRedelivery":false}`
	for _, tc := range []struct{ name, body string }{
		{"body not JSON", `not json`},
		{"empty body", ``},
		{"body is an array", `[]`},
		{"truncated JSON", `{"destination":"U1","events":[`},
		{"trailing garbage", `{"events":[]} x`},
		{"events missing", `{"destination":"U1"}`},
		{"events null", `{"destination":"U1","events":null}`},
		{"events not an array", `{"destination":"U1","events":{}}`},
		{"event not an object", `{"destination":"U1","events":["x"]}`},
		{"event missing webhookEventId", `{"events":[{` + ev + `}]}`},
		{"event with empty webhookEventId", `{"events":[{"webhookEventId":"",` + ev + `}]}`},
		{"webhookEventId not a string", `{"events":[{"webhookEventId":12,` + ev + `}]}`},
		{"second event missing webhookEventId", `{"events":[{"webhookEventId":"A",` + ev + `},{` + ev + `}]}`},
		{"event missing type", `{"events":[{"webhookEventId":"A","timestamp":1}]}`},
		{"timestamp not an integer", `{"events":[{"webhookEventId":"A","type":"follow","timestamp":"1"}]}`},
		{"bad escape", `{"events":[{"webhookEventId":"A\x","type":"follow"}]}`},
		{"nested too deeply", `{"events":[{"webhookEventId":"A","type":"follow","x":` + strings.Repeat("[", 1000) + strings.Repeat("]", 1000) + `}]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := parseSigned(t, tc.body)
			if !errors.Is(err, webhook.ErrMalformed) {
				t.Fatalf("got %v (delivery %+v), want ErrMalformed", err, d)
			}
		})
	}
}

func TestParseEmptyEventsIsVerification(t *testing.T) {
	d, err := parseSigned(t, ` { "destination" : "Ub8b2d8e5add3e2eaff4ad4451caab599", "events" : [ ] } `)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if !d.Verification || len(d.Events) != 0 || d.Reply.Status != http.StatusOK {
		t.Fatalf("got %+v, want a 200 verification with no events", d)
	}
}

func TestParseEventFields(t *testing.T) {
	body := `{"destination":"U1","events":[ {"type" : "message","webhookEventId":"01H\u0041","timestamp":1735689600123,` +
		`"message":{"type":"text","id":"4561255354251345929","text":"hi"},"deliveryContext":{"isRedelivery":false}}]}`
	d, err := parseSigned(t, body)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	ev := d.Events[0]
	if ev.DedupKey != "01HA" {
		t.Errorf("DedupKey = %q, want %q (escapes decoded)", ev.DedupKey, "01HA")
	}
	if ev.Type != "message" {
		t.Errorf("Type = %q, want message", ev.Type)
	}
	if want := time.UnixMilli(1735689600123).UTC(); !ev.OccurredAt.Equal(want) {
		t.Errorf("OccurredAt = %v, want %v", ev.OccurredAt, want)
	}
	wantRaw := `{"type" : "message","webhookEventId":"01H\u0041","timestamp":1735689600123,` +
		`"message":{"type":"text","id":"4561255354251345929","text":"hi"},"deliveryContext":{"isRedelivery":false}}`
	if string(ev.Raw) != wantRaw {
		t.Errorf("Raw = %s, want %s", ev.Raw, wantRaw)
	}
	wantJSON := strings.Replace(wantRaw, `"type" : "message"`, `"type":"message"`, 1)
	if string(ev.JSON) != wantJSON {
		t.Errorf("JSON = %s, want %s", ev.JSON, wantJSON)
	}
}

func TestNineteenDigitMessageIDPreserved(t *testing.T) {
	const id = "4561255354251345929" // > 2^53
	for _, tc := range []struct{ name, idJSON string }{
		{"as a string", `"` + id + `"`},
		{"as a bare number", id},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := `{"destination":"U1","events":[{"type":"message","webhookEventId":"E1","timestamp":1,` +
				`"message":{"type":"text","id":` + tc.idJSON + `,"text":"x"}}]}`
			d, err := parseSigned(t, body)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if !strings.Contains(string(d.Events[0].JSON), `"id":`+tc.idJSON) {
				t.Fatalf("JSON %s lost the id %s", d.Events[0].JSON, tc.idJSON)
			}
			if tc.idJSON[0] == '"' {
				var m line.MessageEvent
				if err := json.Unmarshal(d.Events[0].JSON, &m); err != nil {
					t.Fatalf("decode MessageEvent: %v", err)
				}
				if m.Message.ID != id {
					t.Fatalf("Message.ID = %q, want %q", m.Message.ID, id)
				}
			}
		})
	}
}

func TestPayloadHash(t *testing.T) {
	base := `{"type":"follow","webhookEventId":"E1","timestamp":1,"source":{"type":"user","userId":"U1"},"deliveryContext":{"isRedelivery":false}}`
	hash := func(t *testing.T, event string) string {
		t.Helper()
		d, err := parseSigned(t, `{"destination":"U1","events":[`+event+`]}`)
		if err != nil {
			t.Fatalf("Parse: %v", err)
		}
		return d.Events[0].PayloadHash
	}
	want := hash(t, base)
	for _, tc := range []struct {
		name, event string
		same        bool
	}{
		{"redelivery", strings.Replace(base, "false", "true", 1), true},
		{"deliveryContext absent", `{"type":"follow","webhookEventId":"E1","timestamp":1,"source":{"type":"user","userId":"U1"}}`, true},
		{"keys reordered and spaced", `{ "deliveryContext":{"isRedelivery":true}, "source":{"userId":"U1","type":"user"},"timestamp":1,"webhookEventId":"E1","type":"follow" }`, true},
		{"escaped spelling", `{"type":"f\u006fllow","webhookEventId":"E1","timestamp":1,"source":{"type":"user","userId":"U\u0031"}}`, true},
		{"different user", strings.Replace(base, `"U1"`, `"U2"`, 1), false},
		{"different timestamp", strings.Replace(base, `"timestamp":1`, `"timestamp":2`, 1), false},
		{"nested deliveryContext kept", strings.Replace(base, `"userId":"U1"`, `"userId":"U1","deliveryContext":1`, 1), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := hash(t, tc.event)
			if (got == want) != tc.same {
				t.Fatalf("hash %s vs original %s: same = %v, want %v", got, want, got == want, tc.same)
			}
		})
	}
}

func TestTypedDecode(t *testing.T) {
	c := caseNamed(t, "multi_event_body")
	d, err := mustNew(t, c.ChannelSecret).Parse(context.Background(), post([]byte(c.Body), c.SignatureHeader))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	byType := map[string][]byte{}
	for _, ev := range d.Events {
		byType[ev.Type] = ev.JSON
	}
	for _, tp := range []struct{ got, want string }{
		{line.Message.Name, "message"}, {line.Follow.Name, "follow"},
		{line.Unfollow.Name, "unfollow"}, {line.Postback.Name, "postback"},
		{line.Message.Provider, line.Name},
	} {
		if tp.got != tp.want {
			t.Errorf("type name %q, want %q", tp.got, tp.want)
		}
	}

	var f line.FollowEvent
	if err := json.Unmarshal(byType[line.Follow.Name], &f); err != nil {
		t.Fatalf("decode FollowEvent: %v", err)
	}
	if f.Source.UserID != "U28702022fae3efeba93b938e3254b352" || f.Follow.IsUnblocked || f.WebhookEventID != "0AQ4927AQ0F21JEJ9252QRT0G6" || f.Timestamp != 1735689601000 || f.ReplyToken == "" {
		t.Errorf("FollowEvent = %+v", f)
	}

	var m line.MessageEvent
	if err := json.Unmarshal(byType[line.Message.Name], &m); err != nil {
		t.Fatalf("decode MessageEvent: %v", err)
	}
	if m.Message.ID != "685744944186065249" || m.Message.Text != "order #42 please" || m.Message.Type != "text" ||
		m.Source.Type != "group" || m.Source.GroupID != "C66b4ba087fdfa1502e45f27740b8c99c" || m.Mode != "active" {
		t.Errorf("MessageEvent = %+v", m)
	}

	var pb line.PostbackEvent
	if err := json.Unmarshal(byType[line.Postback.Name], &pb); err != nil {
		t.Fatalf("decode PostbackEvent: %v", err)
	}
	if pb.Postback.Data != "action=buy&itemid=111" || pb.Source.UserID != "U28702022fae3efeba93b938e3254b352" {
		t.Errorf("PostbackEvent = %+v", pb)
	}

	var u line.UnfollowEvent
	if err := json.Unmarshal(byType[line.Unfollow.Name], &u); err != nil {
		t.Fatalf("decode UnfollowEvent: %v", err)
	}
	if u.Source.UserID != "U1f31c2a4c885ab0273b18b8b6a799b72" || u.DeliveryContext.IsRedelivery {
		t.Errorf("UnfollowEvent = %+v", u)
	}
}

func TestPostbackParams(t *testing.T) {
	body := `{"destination":"U1","events":[{"type":"postback","webhookEventId":"E1","timestamp":1,` +
		`"postback":{"data":"d","params":{"datetime":"2025-01-01T10:00"}}}]}`
	d, err := parseSigned(t, body)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	var pb line.PostbackEvent
	if err := json.Unmarshal(d.Events[0].JSON, &pb); err != nil {
		t.Fatalf("decode: %v", err)
	}
	if pb.Postback.Params["datetime"] != "2025-01-01T10:00" {
		t.Fatalf("Params = %v", pb.Postback.Params)
	}
}

func TestVerify(t *testing.T) {
	c := caseNamed(t, "single_text_message")
	secret, body, good := []byte(c.ChannelSecret), []byte(c.Body), c.SignatureHeader
	flipped := []byte(good)
	flipped[10] ^= 1
	for _, tc := range []struct {
		name, sig string
		ok        bool
	}{
		{"canonical", good, true},
		{"missing", "", false},
		{"one character changed", string(flipped), false},
		{"truncated", good[:40], false},
		{"no padding", strings.TrimSuffix(good, "="), false},
		{"trailing newline", good + "\n", false},
		{"embedded CRLF", good[:20] + "\r\n" + good[20:], false},
		{"URL-safe alphabet", strings.NewReplacer("+", "-", "/", "_").Replace(good), false},
		{"leading space", " " + good, false},
		{"hex digest", strings.Repeat("a", 64), false},
		{"all A", strings.Repeat("A", 43) + "=", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := line.Verify(secret, body, tc.sig)
			if tc.ok && err != nil {
				t.Fatalf("Verify: %v", err)
			}
			if !tc.ok && !errors.Is(err, webhook.ErrBadSignature) {
				t.Fatalf("got %v, want ErrBadSignature", err)
			}
		})
	}
	if err := line.Verify([]byte("other"), body, good); !errors.Is(err, webhook.ErrBadSignature) {
		t.Fatalf("wrong secret: got %v, want ErrBadSignature", err)
	}
}

func TestErrorsDoNotLeakBodyOrSecret(t *testing.T) {
	body := `{"events":[{"webhookEventId":"","type":"message","text":"TOPSECRETTEXT"}]}`
	_, err := parseSigned(t, body)
	if err == nil || strings.Contains(err.Error(), "TOPSECRETTEXT") || strings.Contains(err.Error(), testSecret) {
		t.Fatalf("error %v leaks input or is nil", err)
	}
}

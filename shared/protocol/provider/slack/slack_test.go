package slack_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/config/tenants"
	"github.com/hookwall/hookwall/shared/engine/intake/intaketest"
	"github.com/hookwall/hookwall/shared/protocol/provider/slack"
)

// Slack's worked example (https://api.slack.com/authentication/verifying-requests-from-slack).
const (
	docSecret = "8f742231b10e8888abcd99yyyzzz85a5"
	docTS     = "1531420618"
	docBody   = "token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c"
	docSig    = "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503"
)

// Slack's app_mention example (https://api.slack.com/events/app_mention),
// compacted; its event_time is written in microseconds there.
const mention = `{"token":"ZZZZZZWSxiZZZ2yIvs3peJ","team_id":"T061EG9R6","api_app_id":"A0MDYCDME","event":{"type":"app_mention","user":"U061F7AUR","text":"What is the hour of the pearl, <@U0LAN0Z89>?","ts":"1515449522.000016","channel":"C0LAN2Q65","event_ts":"1515449522000016"},"type":"event_callback","event_id":"Ev0LAN670R","event_time":1515449522000016,"authed_users":["U0LAN0Z89"]}`

func TestSignatureIsSlacksDocumentedExample(t *testing.T) {
	if got := slack.Signature(docSecret, docTS, []byte(docBody)); got != docSig {
		t.Fatalf("Signature = %s, want Slack's %s", got, docSig)
	}
}

// The vectors, built from Slack's documentation, through the real receiver
// (intake over HTTP, in-memory store): valid, tampered, stale, challenge,
// retry, ...
func TestVectorsThroughTheReceiver(t *testing.T) {
	intaketest.RunVectors(t, "testdata/vectors.json")
}

// The registration alone drives the receiver: demo event, duplicate,
// marked retry, tampered body, handshake.
func TestConformance(t *testing.T) {
	intaketest.Conformance(t, slack.Name)
}

func parser(t *testing.T) *slack.Parser {
	t.Helper()
	p, err := slack.New(slack.Config{SigningSecret: docSecret})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// request returns body signed at ts, received at now.
func request(body string, ts int64, now time.Time) *webhook.Request {
	h := http.Header{}
	h.Set(slack.TimestampHeader, itoa(ts))
	h.Set(slack.SignatureHeader, slack.Signature(docSecret, itoa(ts), []byte(body)))
	return &webhook.Request{Method: http.MethodPost, Provider: slack.Name, Tenant: "acme", Header: h, Body: []byte(body), Now: now}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func TestParseEvent(t *testing.T) {
	ts := int64(1515449530)
	d, err := parser(t).Parse(context.Background(), request(mention, ts, time.Unix(ts+1, 0)))
	if err != nil {
		t.Fatal(err)
	}
	if d.Verification || len(d.Events) != 1 || d.Reply.Status != http.StatusOK {
		t.Fatalf("delivery %+v", d)
	}
	ev := d.Events[0]
	if ev.DedupKey != "Ev0LAN670R" || ev.Type != "app_mention" {
		t.Errorf("key %q type %q", ev.DedupKey, ev.Type)
	}
	if want := time.Date(2018, 1, 8, 22, 12, 2, 16000, time.UTC); !ev.OccurredAt.Equal(want) {
		t.Errorf("occurred at %s, want %s (event_time in microseconds)", ev.OccurredAt, want)
	}
	// JSON is the body compacted without the legacy verification token (a
	// tenant secret), its members in their order; Raw is the body.
	if want := strings.Replace(mention, `"token":"ZZZZZZWSxiZZZ2yIvs3peJ",`, "", 1); string(ev.JSON) != want ||
		string(ev.Raw) != mention || len(ev.PayloadHash) != 64 {
		t.Errorf("JSON %s, hash %s\nwant JSON %s", ev.JSON, ev.PayloadHash, want)
	}
	// A retry is the same body: the same key and hash, whatever its headers.
	retry := request(strings.Replace(mention, `,"type"`, `, "type"`, 1), ts+60, time.Unix(ts+61, 0))
	retry.Header.Set(slack.RetryNumHeader, "1")
	retry.Header.Set(slack.RetryReasonHeader, "http_timeout")
	d2, err := parser(t).Parse(context.Background(), retry)
	if err != nil {
		t.Fatal(err)
	}
	if d2.Events[0].DedupKey != ev.DedupKey || d2.Events[0].PayloadHash != ev.PayloadHash {
		t.Errorf("the retry's key %s hash %s differ from %s %s", d2.Events[0].DedupKey, d2.Events[0].PayloadHash, ev.DedupKey, ev.PayloadHash)
	}
	if n, reason, ok := slack.Retry(retry); !ok || n != 1 || reason != "http_timeout" {
		t.Errorf("Retry = %d %q %v", n, reason, ok)
	}
	if _, _, ok := slack.Retry(request(mention, ts, time.Unix(ts, 0))); ok {
		t.Error("a first delivery reads as a retry")
	}
}

// Slack's legacy verification token (the envelope's token) is a tenant
// secret: whatever its spelling or place among the members, it is not in
// the stored (and forwarded) JSON, and the rest of the body is.
func TestLegacyTokenNeverStored(t *testing.T) {
	const tok = "ZZZZZZWSxiZZZ2yIvs3peJ"
	ts := int64(1515449530)
	for _, body := range []string{
		mention,
		strings.Replace(mention, `"token"`, `"Token"`, 1),
		strings.Replace(mention, `"token"`, `"TOKEN"`, 1),
		strings.Replace(mention, `"token"`, `"\u0074oken"`, 1),
		`{"type":"event_callback","event_id":"Ev1","event":{"type":"message","text":"a<b&c"},"token":"` + tok + `","token":"` + tok + `"}`,
		"{\n  \"token\" : \"" + tok + "\",\n  \"type\": \"event_callback\", \"event_id\": \"Ev1\", \"event\": {\"type\": \"message\"}}",
	} {
		d, err := parser(t).Parse(context.Background(), request(body, ts, time.Unix(ts, 0)))
		if err != nil {
			t.Errorf("%s: %v", body, err)
			continue
		}
		ev := d.Events[0]
		if strings.Contains(string(ev.JSON), tok) || !json.Valid(ev.JSON) || !strings.Contains(string(ev.JSON), `"type":"event_callback"`) {
			t.Errorf("%s: stored JSON %s", body, ev.JSON)
		}
	}
}

// The typed events decode the event's JSON, as a processor handler gets it.
func TestTypedEvents(t *testing.T) {
	ts := int64(1515449530)
	d, err := parser(t).Parse(context.Background(), request(mention, ts, time.Unix(ts, 0)))
	if err != nil {
		t.Fatal(err)
	}
	ev := d.Events[0]
	if ev.Type != slack.AppMention.Name || slack.AppMention.Provider != slack.Name || slack.Message.Name != "message" {
		t.Fatalf("types %+v %+v for event type %s", slack.AppMention, slack.Message, ev.Type)
	}
	var env slack.Envelope[slack.AppMentionEvent]
	if err := json.Unmarshal(ev.JSON, &env); err != nil {
		t.Fatal(err)
	}
	if env.EventID != "Ev0LAN670R" || env.TeamID != "T061EG9R6" || env.Event.User != "U061F7AUR" ||
		env.Event.Channel != "C0LAN2Q65" || !strings.Contains(env.Event.Text, "hour of the pearl") {
		t.Errorf("envelope %+v", env)
	}
}

func TestEventTimeUnits(t *testing.T) {
	for _, c := range []struct {
		eventTime string
		want      time.Time
	}{
		{"1515449522", time.Unix(1515449522, 0)},
		{"1515449522000", time.UnixMilli(1515449522000)},
		{"1515449522000016", time.UnixMicro(1515449522000016)},
		{"0", time.Time{}},
		{"-5", time.Time{}},
		{"1.5", time.Time{}},
		{`"1515449522"`, time.Unix(1515449522, 0)}, // read as Go reads a number in quotes
	} {
		body := `{"type":"event_callback","event_id":"Ev1","event_time":` + c.eventTime + `,"event":{"type":"message"}}`
		d, err := parser(t).Parse(context.Background(), request(body, 1515449530, time.Unix(1515449530, 0)))
		if err != nil {
			t.Errorf("event_time %s: %v", c.eventTime, err)
			continue
		}
		if got := d.Events[0].OccurredAt; !got.Equal(c.want) {
			t.Errorf("event_time %s: occurred at %s, want %s", c.eventTime, got, c.want)
		}
	}
}

func TestParseHandshakes(t *testing.T) {
	now := time.Unix(1515449530, 0)
	d, err := parser(t).Parse(context.Background(), request(`{"token":"Jhj5dZrVaK7ZwHHjRyZWjbDl","challenge":"3eZbrw1a","type":"url_verification"}`, now.Unix(), now))
	if err != nil || !d.Verification || string(d.Reply.Body) != "3eZbrw1a" || d.Reply.Status != 200 || !strings.HasPrefix(d.Reply.ContentType, "text/plain") {
		t.Fatalf("url_verification: %+v, %v", d, err)
	}
	d, err = parser(t).Parse(context.Background(), request(`{"type":"app_rate_limited","team_id":"T1","minute_rate_limited":1518467820,"api_app_id":"A1"}`, now.Unix(), now))
	if err != nil || !d.Verification || len(d.Events) != 0 || d.Reply.Status != 200 {
		t.Fatalf("app_rate_limited: %+v, %v", d, err)
	}
}

func TestParseRefuses(t *testing.T) {
	now := time.Unix(1515449530, 0)
	signed := func(body string) *webhook.Request { return request(body, now.Unix(), now) }
	header := func(k, v string) *webhook.Request {
		r := signed(mention)
		r.Header.Set(k, v)
		return r
	}
	for _, c := range []struct {
		name string
		req  *webhook.Request
		want error
	}{
		{"GET", func() *webhook.Request { r := signed(mention); r.Method = http.MethodGet; return r }(), webhook.ErrMethodNotAllowed},
		{"no signature", header(slack.SignatureHeader, ""), webhook.ErrBadSignature},
		{"no timestamp", header(slack.TimestampHeader, ""), webhook.ErrBadSignature},
		{"timestamp not a number", header(slack.TimestampHeader, "15154495a0"), webhook.ErrBadSignature},
		{"another version", header(slack.SignatureHeader, strings.Replace(signed(mention).Header.Get(slack.SignatureHeader), "v0=", "v1=", 1)), webhook.ErrBadSignature},
		{"signature not hex", header(slack.SignatureHeader, "v0=zz"), webhook.ErrBadSignature},
		{"signature for another timestamp", header(slack.TimestampHeader, "1515449531"), webhook.ErrBadSignature},
		{"stale", request(mention, now.Unix()-301, now), webhook.ErrStaleTimestamp},
		{"not UTF-8", signed("{\"type\":\"event_callback\",\"event_id\":\"E\xff\",\"event\":{\"type\":\"m\"}}"), webhook.ErrMalformed},
		{"not JSON", signed(docBody), webhook.ErrMalformed},
		{"an array", signed(`[]`), webhook.ErrMalformed},
		{"trailing data", signed(mention + ` {}`), webhook.ErrMalformed},
		{"unknown type", signed(`{"type":"block_actions"}`), webhook.ErrMalformed},
		{"no event_id", signed(`{"type":"event_callback","event":{"type":"message"}}`), webhook.ErrMalformed},
		{"empty event_id", signed(`{"type":"event_callback","event_id":"","event":{"type":"message"}}`), webhook.ErrMalformed},
		{"event_id with a control character", signed(`{"type":"event_callback","event_id":"Ev\u0001","event":{"type":"message"}}`), webhook.ErrMalformed},
		{"event_id with a noncharacter (refused by the receiver's key check too)", signed(`{"type":"event_callback","event_id":"Ev\ufffe","event":{"type":"message"}}`), webhook.ErrMalformed},
		{"event_id too long", signed(`{"type":"event_callback","event_id":"` + strings.Repeat("E", webhook.MaxDedupKeyBytes+1) + `","event":{"type":"message"}}`), webhook.ErrMalformed},
		{"no event", signed(`{"type":"event_callback","event_id":"Ev1"}`), webhook.ErrMalformed},
		{"event not an object", signed(`{"type":"event_callback","event_id":"Ev1","event":"message"}`), webhook.ErrMalformed},
		{"event without a type", signed(`{"type":"event_callback","event_id":"Ev1","event":{"user":"U1"}}`), webhook.ErrMalformed},
		{"url_verification without a challenge", signed(`{"type":"url_verification"}`), webhook.ErrMalformed},
		{"challenge with a newline", signed(`{"type":"url_verification","challenge":"a\nb"}`), webhook.ErrMalformed},
		{"challenge too long", signed(`{"type":"url_verification","challenge":"` + strings.Repeat("c", slack.MaxChallengeBytes+1) + `"}`), webhook.ErrMalformed},
	} {
		t.Run(c.name, func(t *testing.T) {
			d, err := parser(t).Parse(context.Background(), c.req)
			if !errors.Is(err, c.want) {
				t.Fatalf("Parse = %+v, %v; want %v", d, err, c.want)
			}
			if strings.Contains(err.Error(), docSecret) || strings.Contains(err.Error(), "pearl") {
				t.Errorf("the error leaks the secret or the body: %v", err)
			}
		})
	}
}

// The tenants document's "slack" section: the signing secret, required.
func TestTenantsSection(t *testing.T) {
	ts, err := tenants.Parse([]byte(`{"tenants":{"acme":{"slack":{"signingSecret":"` + docSecret + `"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	tn, _ := ts.Tenant("acme")
	s, ok := tn.Settings(slack.Name)
	if !ok || s.(*slack.Settings).SigningSecret.Reveal() != docSecret {
		t.Fatalf("settings %+v", s)
	}
	for doc, want := range map[string]string{
		`{"tenants":{"acme":{"slack":{}}}}`:                              `tenant "acme": slack.signingSecret: required`,
		`{"tenants":{"acme":{"slack":{"secret":"x"}}}}`:                  `unknown field "secret"`,
		`{"tenants":{"acme":{"slack":{"signingSecret":["TOPSECRET"]}}}}`: "invalid document",
	} {
		if _, err := tenants.Parse([]byte(doc)); err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "TOPSECRET") {
			t.Errorf("%s: error %v, want it to mention %q", doc, err, want)
		}
	}
}

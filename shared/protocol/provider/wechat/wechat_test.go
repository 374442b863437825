package wechat

import (
	"context"
	"errors"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/protocol/provider/wxcrypto"
	"github.com/hookwall/hookwall/shared/protocol/provider/wxmsg/wxmsgtest"
)

const (
	testToken = "tL1C5EJa0D26c4ldulpx2Xf8"
	testKey   = "Qj3wj1npwg9PaCaK10ABhYwAI6EvUiu5NFl3DuF1FYH"
	testAppID = "wx1eb8434985c577d2"
	testTS    = int64(1767312077)
	textXML   = `<xml><ToUserName><![CDATA[gh_b91768ca0897]]></ToUserName><FromUserName><![CDATA[oKzKivH6hwSntH4tXK9ieGIoh47G]]></FromUserName><CreateTime>1767312100</CreateTime><MsgType><![CDATA[text]]></MsgType><Content><![CDATA[hello]]></Content><MsgId>7312345678901234567</MsgId></xml>`
)

func newParser(t testing.TB, key string, tol time.Duration) *Parser {
	t.Helper()
	p, err := New(Config{Token: testToken, AppID: testAppID, EncodingAESKey: key, Tolerance: tol})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// plainPost signs a plaintext-mode POST of body.
func plainPost(body string, ts int64) *webhook.Request {
	tss, nonce := strconv.FormatInt(ts, 10), "2469118121"
	q := url.Values{"signature": {wxcrypto.Signature(testToken, tss, nonce)}, "timestamp": {tss}, "nonce": {nonce}, "openid": {"o1"}}
	return &webhook.Request{Method: "POST", Query: q, Body: []byte(body), Now: time.Unix(ts, 0)}
}

// safePost encrypts plain for receiveID and signs it as safe mode does. With
// compat, the envelope also carries the plaintext fields of compatXML.
func safePost(t testing.TB, plain, receiveID, compatXML string, ts int64) *webhook.Request {
	t.Helper()
	enc := wxmsgtest.Encrypt(t, testKey, plain, receiveID)
	req := plainPost("", ts)
	req.Query.Set("encrypt_type", "aes")
	req.Query.Set("msg_signature", wxcrypto.Signature(testToken, req.Query.Get("timestamp"), req.Query.Get("nonce"), enc))
	inner := "<ToUserName><![CDATA[gh_b91768ca0897]]></ToUserName>"
	if compatXML != "" {
		inner = strings.TrimSuffix(strings.TrimPrefix(compatXML, "<xml>"), "</xml>")
	}
	req.Body = []byte("<xml>" + inner + "<Encrypt><![CDATA[" + enc + "]]></Encrypt></xml>")
	return req
}

func parseOne(t *testing.T, p *Parser, req *webhook.Request) webhook.Event {
	t.Helper()
	d, err := p.Parse(context.Background(), req)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if len(d.Events) != 1 || d.Reply.Status != 200 || string(d.Reply.Body) != "success" {
		t.Fatalf("Delivery = %+v, want one event and 200 success", d)
	}
	return d.Events[0]
}

func TestNew(t *testing.T) {
	for name, c := range map[string]Config{
		"no token":        {AppID: testAppID},
		"key but no app":  {Token: testToken, EncodingAESKey: testKey},
		"malformed key":   {Token: testToken, AppID: testAppID, EncodingAESKey: testKey[1:]},
		"key with a dash": {Token: testToken, AppID: testAppID, EncodingAESKey: "-" + testKey[1:]},
	} {
		if _, err := New(c); err == nil {
			t.Errorf("%s: New accepted an invalid config", name)
		}
	}
	if _, err := New(Config{Token: testToken}); err != nil {
		t.Errorf("plaintext-only config: %v", err)
	}
}

func TestPlaintextMode(t *testing.T) {
	p := newParser(t, "", 0)
	ev := parseOne(t, p, plainPost(textXML, testTS))
	if ev.Type != "text" || ev.DedupKey != "msg:7312345678901234567" || string(ev.Raw) != textXML {
		t.Errorf("event = %q %q %q", ev.Type, ev.DedupKey, ev.Raw)
	}
	if !ev.OccurredAt.Equal(time.Unix(1767312100, 0)) {
		t.Errorf("OccurredAt = %v", ev.OccurredAt)
	}
	raw := plainPost(textXML, testTS)
	raw.Query.Set("encrypt_type", "raw")
	if e := parseOne(t, p, raw); e.DedupKey != ev.DedupKey {
		t.Errorf("encrypt_type=raw: key %q, want %q", e.DedupKey, ev.DedupKey)
	}
}

func TestPlaintextRejectedWhenKeyConfigured(t *testing.T) {
	p := newParser(t, testKey, 0)
	for _, et := range []string{"", "raw"} {
		req := plainPost(textXML, testTS)
		if et != "" {
			req.Query.Set("encrypt_type", et)
		}
		if _, err := p.Parse(context.Background(), req); !errors.Is(err, webhook.ErrBadSignature) {
			t.Errorf("encrypt_type %q: Parse error = %v, want ErrBadSignature", et, err)
		}
	}
}

func TestSafeMode(t *testing.T) {
	p := newParser(t, testKey, 0)
	ev := parseOne(t, p, safePost(t, textXML, testAppID, "", testTS))
	if string(ev.Raw) != textXML || ev.DedupKey != "msg:7312345678901234567" {
		t.Errorf("event = %q %q", ev.DedupKey, ev.Raw)
	}
	tests := []struct {
		name   string
		mutate func(r *webhook.Request)
		want   error
	}{
		{"missing msg_signature falls back to nothing", func(r *webhook.Request) { r.Query.Del("msg_signature") }, webhook.ErrBadSignature},
		{"msg_signature replaced by signature", func(r *webhook.Request) { r.Query.Set("msg_signature", r.Query.Get("signature")) }, webhook.ErrBadSignature},
		{"missing timestamp", func(r *webhook.Request) { r.Query.Del("timestamp") }, webhook.ErrBadSignature},
		{"missing nonce", func(r *webhook.Request) { r.Query.Del("nonce") }, webhook.ErrBadSignature},
		{"upper-case msg_signature", func(r *webhook.Request) { r.Query.Set("msg_signature", strings.ToUpper(r.Query.Get("msg_signature"))) }, webhook.ErrBadSignature},
		{"unknown encrypt_type", func(r *webhook.Request) { r.Query.Set("encrypt_type", "des") }, webhook.ErrBadSignature},
		{"encrypt_type dropped", func(r *webhook.Request) { r.Query.Del("encrypt_type") }, webhook.ErrBadSignature},
		{"no Encrypt", func(r *webhook.Request) { r.Body = []byte("<xml><ToUserName>x</ToUserName></xml>") }, webhook.ErrMalformed},
		{"body not XML", func(r *webhook.Request) { r.Body = []byte("Encrypt=x") }, webhook.ErrMalformed},
		{"PUT", func(r *webhook.Request) { r.Method = "PUT" }, webhook.ErrMethodNotAllowed},
		{"DELETE", func(r *webhook.Request) { r.Method = "DELETE" }, webhook.ErrMethodNotAllowed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := safePost(t, textXML, testAppID, "", testTS)
			tt.mutate(req)
			if d, err := p.Parse(context.Background(), req); !errors.Is(err, tt.want) || d != nil {
				t.Errorf("Parse = %v, %v; want nil, %v", d, err, tt.want)
			}
		})
	}
	t.Run("encrypted message without a configured key", func(t *testing.T) {
		_, err := newParser(t, "", 0).Parse(context.Background(), safePost(t, textXML, testAppID, "", testTS))
		if !errors.Is(err, webhook.ErrBadSignature) {
			t.Errorf("Parse error = %v, want ErrBadSignature", err)
		}
	})
	t.Run("wrong receiveid", func(t *testing.T) {
		for _, rid := range []string{"wx0000000000000000", testAppID + "x", ""} {
			_, err := p.Parse(context.Background(), safePost(t, textXML, rid, "", testTS))
			if !errors.Is(err, webhook.ErrBadSignature) || !errors.Is(err, wxcrypto.ErrDecrypt) {
				t.Errorf("receiveid %q: Parse error = %v, want ErrDecrypt", rid, err)
			}
		}
	})
	t.Run("decrypted body not XML", func(t *testing.T) {
		if _, err := p.Parse(context.Background(), safePost(t, "我是中文abcd123", testAppID, "", testTS)); !errors.Is(err, webhook.ErrMalformed) || strings.Contains(err.Error(), "中文") {
			t.Errorf("Parse error = %v, want ErrMalformed without the plaintext", err)
		}
	})
}

func TestCompatibleModeTrustsOnlyCiphertext(t *testing.T) {
	p := newParser(t, testKey, 0)
	forged := strings.NewReplacer("hello", "FORGED", "7312345678901234567", "1").Replace(textXML)
	ev := parseOne(t, p, safePost(t, textXML, testAppID, forged, testTS))
	if string(ev.Raw) != textXML || ev.DedupKey != "msg:7312345678901234567" || strings.Contains(string(ev.JSON), "FORGED") {
		t.Errorf("compatible mode used the plaintext copy: key %q JSON %s", ev.DedupKey, ev.JSON)
	}
}

func TestGet(t *testing.T) {
	p := newParser(t, testKey, 0)
	tss := strconv.FormatInt(testTS, 10)
	q := url.Values{"signature": {wxcrypto.Signature(testToken, tss, "9")}, "timestamp": {tss}, "nonce": {"9"}, "echostr": {"a+b/c= d"}}
	req := &webhook.Request{Method: "GET", Query: q, Now: time.Unix(testTS, 0)}
	d, err := p.Parse(context.Background(), req)
	if err != nil || !d.Verification || string(d.Reply.Body) != "a+b/c= d" || len(d.Events) != 0 {
		t.Fatalf("Parse = %+v, %v; want echostr verbatim", d, err)
	}
	req.Query.Del("echostr")
	if _, err := p.Parse(context.Background(), req); !errors.Is(err, webhook.ErrMalformed) {
		t.Errorf("no echostr: error = %v, want ErrMalformed", err)
	}
	req.Query.Set("echostr", "x")
	req.Query.Set("signature", strings.ToUpper(req.Query.Get("signature")))
	if _, err := p.Parse(context.Background(), req); !errors.Is(err, webhook.ErrBadSignature) {
		t.Errorf("upper-case signature: error = %v, want ErrBadSignature", err)
	}
	req.Query.Del("signature")
	if _, err := p.Parse(context.Background(), req); !errors.Is(err, webhook.ErrBadSignature) {
		t.Errorf("no signature: error = %v, want ErrBadSignature", err)
	}
}

func TestStaleTimestamp(t *testing.T) {
	for _, tt := range []struct {
		name  string
		now   int64
		stale bool
	}{
		{"now = ts+300s", testTS + 300, false},
		{"now = ts-300s", testTS - 300, false},
		{"now = ts+301s", testTS + 301, true},
		{"now = ts-301s", testTS - 301, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tss := strconv.FormatInt(testTS, 10)
			get := &webhook.Request{Method: "GET", Query: url.Values{"signature": {wxcrypto.Signature(testToken, tss, "9")}, "timestamp": {tss}, "nonce": {"9"}, "echostr": {"e"}}}
			for _, c := range []struct {
				p   *Parser
				req *webhook.Request
			}{
				{newParser(t, "", 0), plainPost(textXML, testTS)},
				{newParser(t, testKey, 0), safePost(t, textXML, testAppID, "", testTS)},
				{newParser(t, "", 0), get},
			} {
				c.req.Now = time.Unix(tt.now, 0)
				_, err := c.p.Parse(context.Background(), c.req)
				if tt.stale != errors.Is(err, webhook.ErrStaleTimestamp) || (!tt.stale && err != nil) {
					t.Errorf("%s %s: error = %v, want stale = %v", c.req.Method, c.req.Query.Get("encrypt_type"), err, tt.stale)
				}
			}
		})
	}
	req := plainPost(textXML, testTS)
	req.Now = time.Unix(testTS+86400, 0)
	if _, err := newParser(t, "", -1).Parse(context.Background(), req); err != nil {
		t.Errorf("negative tolerance: %v", err)
	}
}

func event(from, created, ev, key string) string {
	return `<xml><ToUserName><![CDATA[gh_b91768ca0897]]></ToUserName><FromUserName><![CDATA[` + from + `]]></FromUserName><CreateTime>` + created +
		`</CreateTime><MsgType><![CDATA[event]]></MsgType><Event><![CDATA[` + ev + `]]></Event><EventKey><![CDATA[` + key + `]]></EventKey></xml>`
}

func TestDedupKeys(t *testing.T) {
	p := newParser(t, "", -1)
	key := func(x string) string {
		t.Helper()
		return parseOne(t, p, plainPost(x, testTS)).DedupKey
	}
	sub := key(event("oUser", "1767312200", "subscribe", "qrscene_a"))
	// One user triggering subscribe and LOCATION in the same second: the
	// official FromUserName+CreateTime key collides; ours must not.
	loc := key(`<xml><ToUserName><![CDATA[gh_b91768ca0897]]></ToUserName><FromUserName><![CDATA[oUser]]></FromUserName><CreateTime>1767312200</CreateTime><MsgType><![CDATA[event]]></MsgType><Event><![CDATA[LOCATION]]></Event><Latitude>23.137466</Latitude><Longitude>113.352425</Longitude><Precision>119.385040</Precision></xml>`)
	if sub == loc {
		t.Errorf("subscribe and LOCATION in one second share key %q", sub)
	}
	if !strings.HasPrefix(sub, "evt:") || len(sub) != 4+32 {
		t.Errorf("event key %q, want evt:<32 hex>", sub)
	}
	if k := key(event("oUser", "1767312200", "CLICK", "A")); k == key(event("oUser", "1767312200", "CLICK", "B")) {
		t.Error("two menu clicks with different keys in one second collide")
	}
	if sub != key(event("oUser", "1767312200", "subscribe", "qrscene_a")) {
		t.Error("the same event gives different keys")
	}
	for _, other := range []string{event("oOther", "1767312200", "subscribe", "qrscene_a"), event("oUser", "1767312201", "subscribe", "qrscene_a")} {
		if key(other) == sub {
			t.Error("different events share a key")
		}
	}
	job := func(id string) string {
		return `<xml><ToUserName>gh_1</ToUserName><FromUserName>oUser</FromUserName><CreateTime>1</CreateTime><MsgType>event</MsgType><Event>TEMPLATESENDJOBFINISH</Event><MsgID>` + id + `</MsgID><Status>success</Status></xml>`
	}
	if key(job("200163836")) == key(job("200163840")) {
		t.Error("two template job reports in one second collide")
	}
	if k := key(`<xml><MsgType>text</MsgType><MsgId>1 2</MsgId></xml>`); !strings.HasPrefix(k, "msgh:") {
		t.Errorf("key = %q, want msgh:<hash>", k)
	}
}

func TestTypedPayloads(t *testing.T) {
	p := newParser(t, "", -1)
	ev := parseOne(t, p, plainPost(event("oUser", "1", "CLICK", "MENU_1"), testTS))
	var c ClickEvent
	wxmsgtest.Decode(t, ev.JSON, &c)
	if ev.Type != Click.Name || c.EventKey != "MENU_1" || c.FromUserName != "oUser" {
		t.Errorf("Type %q, ClickEvent %+v", ev.Type, c)
	}
	ev = parseOne(t, p, plainPost(event("oUser", "1", "subscribe", "qrscene_x"), testTS))
	var s SubscribeEvent
	wxmsgtest.Decode(t, ev.JSON, &s)
	if ev.Type != Subscribe.Name || s.EventKey != "qrscene_x" {
		t.Errorf("Type %q, SubscribeEvent %+v", ev.Type, s)
	}
	ev = parseOne(t, p, plainPost(textXML, testTS))
	var m TextMessage
	wxmsgtest.Decode(t, ev.JSON, &m)
	if ev.Type != Text.Name || m.MsgID != "7312345678901234567" || m.Content != "hello" {
		t.Errorf("Type %q, TextMessage %+v", ev.Type, m)
	}
}

func FuzzParse(f *testing.F) {
	for _, c := range loadVectors(f) {
		f.Add(c.Method, c.RawQuery, []byte(c.Body), byte(0))
	}
	f.Add("POST", "", []byte(textXML), byte(1))
	f.Add("POST", "", []byte(textXML), byte(2))
	f.Add("POST", "", []byte(event("o", "1", "subscribe", "k")), byte(1))
	plain := newParser(f, "", -1)
	safe := newParser(f, testKey, -1)
	f.Fuzz(func(t *testing.T, method, rawQuery string, body []byte, mode byte) {
		var (
			p   *Parser
			req *webhook.Request
		)
		switch mode % 3 {
		case 1: // signed plaintext POST: parsing runs past verification
			p, req = plain, plainPost(string(body), testTS)
		case 2: // encrypted and signed POST
			p, req = safe, safePost(t, string(body), testAppID, "", testTS)
		default:
			q, _ := url.ParseQuery(rawQuery)
			p, req = safe, &webhook.Request{Query: q, Body: body}
			if mode&4 != 0 {
				p = plain
			}
		}
		req.Method = method
		d, err := p.Parse(context.Background(), req)
		if err != nil {
			if !errors.Is(err, webhook.ErrBadSignature) && !errors.Is(err, webhook.ErrMalformed) &&
				!errors.Is(err, webhook.ErrMethodNotAllowed) && !errors.Is(err, webhook.ErrStaleTimestamp) {
				t.Fatalf("error %v wraps no webhook sentinel", err)
			}
			return
		}
		for _, ev := range d.Events {
			wxmsgtest.CheckKey(t, ev.DedupKey)
			if ev.Type == "" || len(ev.PayloadHash) != 64 {
				t.Fatalf("event type %q hash %q", ev.Type, ev.PayloadHash)
			}
			if mode%3 != 0 && string(ev.Raw) != string(body) {
				t.Fatal("Raw is not the signed message")
			}
		}
	})
}

func BenchmarkParse(b *testing.B) {
	ctx := context.Background()
	for _, bc := range []struct {
		name string
		p    *Parser
		req  *webhook.Request
	}{
		{"plaintext", newParser(b, "", 0), plainPost(textXML, testTS)},
		{"safe", newParser(b, testKey, 0), safePost(b, textXML, testAppID, "", testTS)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.req.Body)))
			for b.Loop() {
				if _, err := bc.p.Parse(ctx, bc.req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

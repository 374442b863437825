package wecom

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
	testToken = "ZoBShluHO12fcxNQaRU58s3IoZhxg8aJ"
	testKey   = "9Fhbus9vGcz2PWcLtV0u6HyuCsCwTyYfPiVLMDF1Y0Q"
	testCorp  = "ww8763a2c9851f8563"
	testTS    = int64(1767225614)
	textXML   = `<xml><ToUserName><![CDATA[ww8763a2c9851f8563]]></ToUserName><FromUserName><![CDATA[ZhangSan]]></FromUserName><CreateTime>1767225700</CreateTime><MsgType><![CDATA[text]]></MsgType><Content><![CDATA[hello]]></Content><MsgId>7456789012345678901</MsgId><AgentID>1000002</AgentID></xml>`
)

func newParser(t testing.TB, tol time.Duration) *Parser {
	t.Helper()
	p, err := New(Config{Token: testToken, EncodingAESKey: testKey, CorpID: testCorp, Tolerance: tol})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// signedPost encrypts plain for receiveID and signs it as WeCom would, with
// envelope ToUserName/AgentID as given.
func signedPost(t testing.TB, plain, receiveID, envTo, envAgent string, ts int64) *webhook.Request {
	t.Helper()
	enc := wxmsgtest.Encrypt(t, testKey, plain, receiveID)
	tss, nonce := strconv.FormatInt(ts, 10), "1243106303"
	q := url.Values{}
	q.Set("msg_signature", wxcrypto.Signature(testToken, tss, nonce, enc))
	q.Set("timestamp", tss)
	q.Set("nonce", nonce)
	body := "<xml><ToUserName><![CDATA[" + envTo + "]]></ToUserName><Encrypt><![CDATA[" + enc + "]]></Encrypt><AgentID><![CDATA[" + envAgent + "]]></AgentID></xml>"
	return &webhook.Request{Method: "POST", Query: q, Body: []byte(body), Now: time.Unix(ts, 0)}
}

func signedGet(t testing.TB, echo string, ts int64) *webhook.Request {
	t.Helper()
	enc := wxmsgtest.Encrypt(t, testKey, echo, testCorp)
	tss := strconv.FormatInt(ts, 10)
	q := url.Values{"msg_signature": {wxcrypto.Signature(testToken, tss, "42", enc)}, "timestamp": {tss}, "nonce": {"42"}, "echostr": {enc}}
	return &webhook.Request{Method: "GET", Query: q, Now: time.Unix(ts, 0)}
}

func parseOne(t *testing.T, p *Parser, req *webhook.Request) webhook.Event {
	t.Helper()
	d, err := p.Parse(context.Background(), req)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if len(d.Events) != 1 {
		t.Fatalf("got %d events, want 1", len(d.Events))
	}
	return d.Events[0]
}

func TestNew(t *testing.T) {
	for name, c := range map[string]Config{
		"no token":   {EncodingAESKey: testKey, CorpID: testCorp},
		"no corp id": {Token: testToken, EncodingAESKey: testKey},
		"short key":  {Token: testToken, EncodingAESKey: testKey[:42], CorpID: testCorp},
		"no key":     {Token: testToken, CorpID: testCorp},
	} {
		if _, err := New(c); err == nil {
			t.Errorf("%s: New accepted an invalid config", name)
		} else if strings.Contains(err.Error(), testToken) {
			t.Errorf("%s: error %q contains the token", name, err)
		}
	}
	// Tolerance 0 is DefaultTolerance: TestStaleTimestamp checks its window.
}

func TestEvent(t *testing.T) {
	ev := parseOne(t, newParser(t, 0), signedPost(t, textXML, testCorp, testCorp, "1000002", testTS))
	if ev.Type != "text" || ev.DedupKey != "msg:1000002:7456789012345678901" {
		t.Errorf("Type, DedupKey = %q, %q; want text, msg:1000002:7456789012345678901", ev.Type, ev.DedupKey)
	}
	if want := time.Unix(1767225700, 0); !ev.OccurredAt.Equal(want) {
		t.Errorf("OccurredAt = %v, want %v", ev.OccurredAt, want)
	}
	if !strings.Contains(string(ev.JSON), `"MsgId":"7456789012345678901"`) {
		t.Errorf("JSON = %s, want MsgId as an exact string", ev.JSON)
	}
}

func TestStaleTimestamp(t *testing.T) {
	p := newParser(t, 0)
	for _, tt := range []struct {
		name  string
		now   int64
		stale bool
	}{
		{"now = ts", testTS, false},
		{"now = ts+300s", testTS + 300, false},
		{"now = ts-300s", testTS - 300, false},
		{"now = ts+301s", testTS + 301, true},
		{"now = ts-301s", testTS - 301, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, req := range []*webhook.Request{signedPost(t, textXML, testCorp, testCorp, "", testTS), signedGet(t, "echo", testTS)} {
				req.Now = time.Unix(tt.now, 0)
				_, err := p.Parse(context.Background(), req)
				if tt.stale != errors.Is(err, webhook.ErrStaleTimestamp) || (!tt.stale && err != nil) {
					t.Errorf("%s: Parse error = %v, want stale = %v", req.Method, err, tt.stale)
				}
			}
		})
	}
	t.Run("negative tolerance disables the window", func(t *testing.T) {
		req := signedPost(t, textXML, testCorp, testCorp, "", testTS)
		req.Now = time.Unix(testTS+10*86400, 0)
		if _, err := newParser(t, -1).Parse(context.Background(), req); err != nil {
			t.Errorf("Parse: %v", err)
		}
	})
	t.Run("custom tolerance", func(t *testing.T) {
		req := signedPost(t, textXML, testCorp, testCorp, "", testTS)
		req.Now = time.Unix(testTS+3601, 0)
		if _, err := newParser(t, time.Hour).Parse(context.Background(), req); !errors.Is(err, webhook.ErrStaleTimestamp) {
			t.Errorf("Parse error = %v, want ErrStaleTimestamp", err)
		}
		req.Now = time.Unix(testTS+3600, 0)
		if _, err := newParser(t, time.Hour).Parse(context.Background(), req); err != nil {
			t.Errorf("Parse: %v", err)
		}
	})
	t.Run("signed non-numeric timestamp", func(t *testing.T) {
		req := signedPost(t, textXML, testCorp, testCorp, "", testTS)
		enc := encryptOf(t, req)
		req.Query.Set("timestamp", "soon")
		req.Query.Set("msg_signature", wxcrypto.Signature(testToken, "soon", req.Query.Get("nonce"), enc))
		if _, err := p.Parse(context.Background(), req); !errors.Is(err, webhook.ErrStaleTimestamp) {
			t.Errorf("Parse error = %v, want ErrStaleTimestamp", err)
		}
	})
	t.Run("huge timestamp does not overflow", func(t *testing.T) {
		req := signedPost(t, textXML, testCorp, testCorp, "", -9223372036854775808)
		req.Now = time.Unix(testTS, 0)
		if _, err := p.Parse(context.Background(), req); !errors.Is(err, webhook.ErrStaleTimestamp) {
			t.Errorf("Parse error = %v, want ErrStaleTimestamp", err)
		}
	})
}

// encryptOf returns the <Encrypt> value of a request built by signedPost.
func encryptOf(t *testing.T, req *webhook.Request) string {
	t.Helper()
	s := string(req.Body)
	i := strings.Index(s, "<Encrypt><![CDATA[") + len("<Encrypt><![CDATA[")
	j := strings.Index(s, "]]></Encrypt>")
	return s[i:j]
}

func TestRejects(t *testing.T) {
	p := newParser(t, 0)
	tests := []struct {
		name   string
		mutate func(r *webhook.Request)
		want   error
	}{
		{"missing msg_signature", func(r *webhook.Request) { r.Query.Del("msg_signature") }, webhook.ErrBadSignature},
		{"missing timestamp", func(r *webhook.Request) { r.Query.Del("timestamp") }, webhook.ErrBadSignature},
		{"missing nonce", func(r *webhook.Request) { r.Query.Del("nonce") }, webhook.ErrBadSignature},
		{"signature of another nonce", func(r *webhook.Request) { r.Query.Set("nonce", "1") }, webhook.ErrBadSignature},
		{"upper-case signature", func(r *webhook.Request) { r.Query.Set("msg_signature", strings.ToUpper(r.Query.Get("msg_signature"))) }, webhook.ErrBadSignature},
		{"plaintext signature instead of msg_signature", func(r *webhook.Request) {
			r.Query.Set("signature", r.Query.Get("msg_signature"))
			r.Query.Del("msg_signature")
		}, webhook.ErrBadSignature},
		{"no Encrypt", func(r *webhook.Request) { r.Body = []byte("<xml><ToUserName>x</ToUserName></xml>") }, webhook.ErrMalformed},
		{"body not XML", func(r *webhook.Request) { r.Body = []byte(`{"Encrypt":"x"}`) }, webhook.ErrMalformed},
		{"empty body", func(r *webhook.Request) { r.Body = nil }, webhook.ErrMalformed},
		{"PUT", func(r *webhook.Request) { r.Method = "PUT" }, webhook.ErrMethodNotAllowed},
		{"lower-case post", func(r *webhook.Request) { r.Method = "post" }, webhook.ErrMethodNotAllowed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := signedPost(t, textXML, testCorp, testCorp, "1000002", testTS)
			tt.mutate(req)
			d, err := p.Parse(context.Background(), req)
			if !errors.Is(err, tt.want) || d != nil {
				t.Errorf("Parse = %v, %v; want nil, %v", d, err, tt.want)
			}
		})
	}
	t.Run("GET without echostr", func(t *testing.T) {
		req := signedGet(t, "echo", testTS)
		req.Query.Del("echostr")
		if _, err := p.Parse(context.Background(), req); !errors.Is(err, webhook.ErrBadSignature) {
			t.Errorf("Parse error = %v, want ErrBadSignature", err)
		}
	})
	t.Run("GET with a space for +", func(t *testing.T) {
		for i := 0; i < 50; i++ {
			req := signedGet(t, "echo"+strconv.Itoa(i), testTS)
			e := req.Query.Get("echostr")
			if !strings.Contains(e, "+") {
				continue
			}
			req.Query.Set("echostr", strings.ReplaceAll(e, "+", " "))
			if _, err := p.Parse(context.Background(), req); !errors.Is(err, webhook.ErrBadSignature) {
				t.Errorf("Parse error = %v, want ErrBadSignature", err)
			}
			return
		}
		t.Fatal("no echostr with + generated")
	})
	t.Run("nil request", func(t *testing.T) {
		if _, err := p.Parse(context.Background(), nil); !errors.Is(err, webhook.ErrMalformed) {
			t.Errorf("Parse(nil) error = %v, want ErrMalformed", err)
		}
	})
}

func TestWrongReceiveID(t *testing.T) {
	p := newParser(t, 0)
	for _, rid := range []string{"ww0000000000000000", testCorp + "x", testCorp[:17], ""} {
		req := signedPost(t, textXML, rid, testCorp, "1000002", testTS)
		_, err := p.Parse(context.Background(), req)
		if !errors.Is(err, webhook.ErrBadSignature) || !errors.Is(err, wxcrypto.ErrDecrypt) {
			t.Errorf("receiveid %q: Parse error = %v, want ErrDecrypt (ErrBadSignature)", rid, err)
		}
	}
}

func TestDecryptedNotXML(t *testing.T) {
	for _, plain := range []string{"我是中文abcd123", "<xml><Content>no type</Content></xml>", "<root/>"} {
		_, err := newParser(t, 0).Parse(context.Background(), signedPost(t, plain, testCorp, testCorp, "", testTS))
		if !errors.Is(err, webhook.ErrMalformed) {
			t.Errorf("plaintext %q: error = %v, want ErrMalformed", plain, err)
		}
		if err != nil && strings.Contains(err.Error(), "中文") {
			t.Errorf("error %q contains the plaintext", err)
		}
	}
}

func TestEnvelopeNotTrusted(t *testing.T) {
	p := newParser(t, 0)
	orig := parseOne(t, p, signedPost(t, textXML, testCorp, testCorp, "1000002", testTS))
	// The envelope's ToUserName and AgentID are unsigned: tampering with them
	// changes nothing, and identity comes from the decrypted XML.
	forged := signedPost(t, textXML, testCorp, "wwATTACKER", "999", testTS)
	ev := parseOne(t, p, forged)
	if ev.DedupKey != orig.DedupKey || string(ev.Raw) != textXML {
		t.Errorf("tampered envelope: key %q raw %q; want %q and the original XML", ev.DedupKey, ev.Raw, orig.DedupKey)
	}
	if strings.Contains(string(ev.JSON), "ATTACKER") || strings.Contains(ev.DedupKey, "999") {
		t.Errorf("envelope fields leaked into the event: %s / %s", ev.JSON, ev.DedupKey)
	}
	// An envelope without ToUserName/AgentID is fine too.
	body := "<xml><Encrypt><![CDATA[" + encryptOf(t, forged) + "]]></Encrypt></xml>"
	forged.Body = []byte(body)
	if ev := parseOne(t, p, forged); ev.DedupKey != orig.DedupKey {
		t.Errorf("bare envelope: key %q, want %q", ev.DedupKey, orig.DedupKey)
	}
}

func TestURLVerification(t *testing.T) {
	d, err := newParser(t, 0).Parse(context.Background(), signedGet(t, "1616140317555161061", testTS))
	if err != nil {
		t.Fatal(err)
	}
	if !d.Verification || d.Reply.Status != 200 || string(d.Reply.Body) != "1616140317555161061" || !strings.HasPrefix(d.Reply.ContentType, "text/plain") {
		t.Errorf("Delivery = %+v", d)
	}
}

func TestDedupKeys(t *testing.T) {
	p := newParser(t, 0)
	key := func(xml string) string {
		t.Helper()
		return parseOne(t, p, signedPost(t, xml, testCorp, testCorp, "", testTS)).DedupKey
	}
	contact := func(ct, user, id, created string) string {
		return `<xml><ToUserName><![CDATA[ww8763a2c9851f8563]]></ToUserName><FromUserName><![CDATA[sys]]></FromUserName><CreateTime>` + created +
			`</CreateTime><MsgType><![CDATA[event]]></MsgType><Event><![CDATA[change_contact]]></Event><ChangeType>` + ct +
			`</ChangeType><UserID><![CDATA[` + user + `]]></UserID><Id>` + id + `</Id><Name><![CDATA[n]]></Name></xml>`
	}
	a := key(contact("create_user", "zhangsan", "", "1767226000"))
	if !strings.HasPrefix(a, "evt:change_contact:") || len(a) != len("evt:change_contact:")+32 {
		t.Errorf("contact key %q: want evt:change_contact:<32 hex>", a)
	}
	if b := key(contact("create_user", "lisi", "", "1767226000")); a == b {
		t.Errorf("two users created in the same second share key %q", a)
	}
	if b := key(contact("update_user", "zhangsan", "", "1767226000")); a == b {
		t.Error("create_user and update_user of one user in one second share a key")
	}
	if b := key(contact("create_party", "", "7", "1767226000")); b == key(contact("create_party", "", "8", "1767226000")) {
		t.Error("two departments created in the same second share a key")
	}
	// Only identity fields count: a non-identity field changing keeps the key.
	if b := key(strings.Replace(contact("create_user", "zhangsan", "", "1767226000"), "<Name><![CDATA[n]]>", "<Name><![CDATA[m]]>", 1)); a != b {
		t.Error("change_contact key depends on Name")
	}

	ext := func(user, ext, state string) string {
		return `<xml><ToUserName><![CDATA[ww8763a2c9851f8563]]></ToUserName><FromUserName><![CDATA[sys]]></FromUserName><CreateTime>1767226000</CreateTime><MsgType><![CDATA[event]]></MsgType><Event><![CDATA[change_external_contact]]></Event><ChangeType><![CDATA[add_external_contact]]></ChangeType><UserID><![CDATA[` +
			user + `]]></UserID><ExternalUserID><![CDATA[` + ext + `]]></ExternalUserID><State><![CDATA[` + state + `]]></State><WelcomeCode><![CDATA[WC]]></WelcomeCode></xml>`
	}
	e1 := key(ext("zhangsan", "wmABC", "s1"))
	if !strings.HasPrefix(e1, "evt:change_external_contact:") {
		t.Errorf("external contact key %q", e1)
	}
	for _, other := range []string{ext("lisi", "wmABC", "s1"), ext("zhangsan", "wmDEF", "s1"), ext("zhangsan", "wmABC", "s2")} {
		if key(other) == e1 {
			t.Error("different external-contact events share a key")
		}
	}

	// Generic events fall back to a content hash.
	g := `<xml><ToUserName>ww8763a2c9851f8563</ToUserName><FromUserName>sys</FromUserName><CreateTime>1767226000</CreateTime><MsgType>event</MsgType><Event>batch_job_result</Event><BatchJob><JobId>J1</JobId></BatchJob></xml>`
	g1 := key(g)
	if !strings.HasPrefix(g1, "evt:batch_job_result:") || g1 == key(strings.Replace(g, "J1", "J2", 1)) || g1 != key(g) {
		t.Errorf("generic key %q: want evt:batch_job_result:<hash>, content-dependent and stable", g1)
	}

	// Messages: AgentID may be empty; odd ids are hashed, keeping keys ASCII.
	if k := key(`<xml><MsgType>text</MsgType><MsgId>123</MsgId></xml>`); k != "msg::123" {
		t.Errorf("key = %q, want msg::123", k)
	}
	odd := key(`<xml><MsgType>text</MsgType><MsgId>一二三 #` + strings.Repeat("9", 300) + `</MsgId><AgentID>1</AgentID></xml>`)
	if !strings.HasPrefix(odd, "msgh:") {
		t.Errorf("key = %q, want msgh:<hash>", odd)
	}
	wxmsgtest.CheckKey(t, odd)
	if k := key(`<xml><MsgType>event</MsgType><Event>` + strings.Repeat("é", 100) + `</Event></xml>`); !strings.HasPrefix(k, "evt:_:") {
		t.Errorf("key = %q, want evt:_:<hash>", k)
	}
	// Suite callbacks carry InfoType instead of MsgType.
	if ev := parseOne(t, p, signedPost(t, `<xml><SuiteId>s</SuiteId><InfoType>suite_ticket</InfoType><TimeStamp>1</TimeStamp><SuiteTicket>T</SuiteTicket></xml>`, testCorp, testCorp, "", testTS)); ev.Type != "suite_ticket" || !strings.HasPrefix(ev.DedupKey, "evt:suite_ticket:") {
		t.Errorf("suite ticket: Type %q key %q", ev.Type, ev.DedupKey)
	}
}

func TestApprovalTransitions(t *testing.T) {
	p := newParser(t, 0)
	approval := func(status, change, created string) string {
		return `<xml><ToUserName><![CDATA[ww8763a2c9851f8563]]></ToUserName><FromUserName><![CDATA[sys]]></FromUserName><CreateTime>` + created + `</CreateTime><MsgType><![CDATA[event]]></MsgType><Event><![CDATA[sys_approval_change]]></Event><AgentID>3010040</AgentID><ApprovalInfo><SpNo>202601010007</SpNo><SpStatus>` + status + `</SpStatus><StatuChangeEvent>` + change + `</StatuChangeEvent><TemplateId>T</TemplateId><Applyer><UserId>LiSi</UserId></Applyer></ApprovalInfo></xml>`
	}
	seen := map[string]bool{}
	for _, x := range []string{approval("1", "1", "100"), approval("1", "10", "100"), approval("2", "2", "100"), approval("2", "2", "101")} {
		ev := parseOne(t, p, signedPost(t, x, testCorp, testCorp, "", testTS))
		if seen[ev.DedupKey] {
			t.Errorf("approval transitions share key %q", ev.DedupKey)
		}
		seen[ev.DedupKey] = true
		var m ApprovalChange
		wxmsgtest.Decode(t, ev.JSON, &m)
		if m.ApprovalInfo.SpNo != "202601010007" || m.ApprovalInfo.Applyer.UserID != "LiSi" || m.ApprovalInfo.TemplateID != "T" {
			t.Errorf("ApprovalChange = %+v", m)
		}
	}
}

// maxFuzzBody keeps the fuzzer on inputs it can run thousands of times a
// second (encrypting and parsing a megabyte takes tens of milliseconds).
const maxFuzzBody = 8 << 10

func FuzzParse(f *testing.F) {
	for _, c := range loadVectors(f) {
		f.Add(c.Method, c.RawQuery, []byte(c.Body), false)
	}
	f.Add("POST", "", []byte(textXML), true)
	f.Add("POST", "", []byte(`<xml><MsgType>event</MsgType><Event>change_contact</Event><Id>1</Id></xml>`), true)
	f.Add("GET", "", []byte("1616140317555161061"), true)
	p := newParser(f, -1)
	f.Fuzz(func(t *testing.T, method, rawQuery string, body []byte, sign bool) {
		if len(body) > maxFuzzBody {
			return // structure, not size, is what breaks parsers; size is capped by the receiver
		}
		var req *webhook.Request
		if sign {
			// Encrypt and sign the fuzzed plaintext so parsing runs past verification.
			if method == "GET" {
				req = signedGet(t, string(body), testTS)
			} else {
				req = signedPost(t, string(body), testCorp, testCorp, "1", testTS)
				req.Method = method
			}
		} else {
			q, _ := url.ParseQuery(rawQuery)
			req = &webhook.Request{Method: method, Query: q, Body: body, Now: time.Unix(testTS, 0)}
		}
		d, err := p.Parse(context.Background(), req)
		if err != nil {
			if !errors.Is(err, webhook.ErrBadSignature) && !errors.Is(err, webhook.ErrMalformed) &&
				!errors.Is(err, webhook.ErrMethodNotAllowed) && !errors.Is(err, webhook.ErrStaleTimestamp) {
				t.Fatalf("error %v wraps no webhook sentinel", err)
			}
			return
		}
		if sign && method == "GET" && string(d.Reply.Body) != string(body) {
			t.Fatalf("echo %q, want %q", d.Reply.Body, body)
		}
		for _, ev := range d.Events {
			wxmsgtest.CheckKey(t, ev.DedupKey)
			if ev.Type == "" || len(ev.PayloadHash) != 64 {
				t.Fatalf("event type %q hash %q", ev.Type, ev.PayloadHash)
			}
		}
	})
}

func BenchmarkParse(b *testing.B) {
	p := newParser(b, 0)
	req := signedPost(b, textXML, testCorp, testCorp, "1000002", testTS)
	ctx := context.Background()
	b.SetBytes(int64(len(req.Body)))
	for b.Loop() {
		if _, err := p.Parse(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}

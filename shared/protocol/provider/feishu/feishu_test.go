package feishu

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/protocol/provider"
)

const (
	testToken = "tok-123"
	testKey   = "enc-key"
)

var testNow = time.Unix(1700000000, 0)

// v2 returns a schema 2.0 event body with the given event_id and token.
func v2(id, token string) []byte {
	return []byte(`{"schema":"2.0","header":{"event_id":"` + id + `","event_type":"im.message.receive_v1","create_time":"1700000000123","token":"` + token + `","app_id":"cli_a","tenant_key":"t"},"event":{"n":12345678901234567890,"s":"<&>"}}`)
}

func newParser(t *testing.T, c Config) *Parser {
	t.Helper()
	p, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// post is a request carrying body and header at testNow.
func post(body []byte, h http.Header) *webhook.Request {
	if h == nil {
		h = http.Header{}
	}
	return &webhook.Request{Method: http.MethodPost, Provider: Name, Tenant: "t1", Header: h, Body: body, Now: testNow}
}

// sign is what Feishu sends for plaintext to a tenant with settings s.
func sign(t *testing.T, s *Settings, plaintext []byte) *webhook.Request {
	t.Helper()
	r, err := s.Sign(plaintext, provider.SignOptions{Now: testNow, Random: rand.Reader})
	if err != nil {
		t.Fatal(err)
	}
	if r.Method != http.MethodPost || len(r.Query) != 0 {
		t.Fatalf("signed request %s ?%s", r.Method, r.Query.Encode())
	}
	return post(r.Body, r.Header)
}

// signedReq is what Feishu sends for plaintext to a tenant with testKey.
func signedReq(t *testing.T, plaintext []byte) *webhook.Request {
	t.Helper()
	return sign(t, &Settings{VerificationToken: testToken, EncryptKey: testKey}, plaintext)
}

func TestNew(t *testing.T) {
	if _, err := New(Config{}); err == nil {
		t.Error("New accepted a config without a verification token")
	}
	if p := newParser(t, Config{VerificationToken: "x"}); p.tolerance != DefaultTolerance || p.block != nil {
		t.Errorf("defaults: tolerance %s, block %v", p.tolerance, p.block)
	}
}

func TestParseRequestShape(t *testing.T) {
	p := newParser(t, Config{VerificationToken: testToken})
	if _, err := p.Parse(context.Background(), nil); !errors.Is(err, webhook.ErrMalformed) {
		t.Errorf("nil request: %v", err)
	}
	r := post(v2("e1", testToken), nil)
	r.Method = http.MethodGet
	if _, err := p.Parse(context.Background(), r); !errors.Is(err, webhook.ErrMethodNotAllowed) {
		t.Errorf("GET: %v", err)
	}
}

func TestPlaintextTenant(t *testing.T) {
	p := newParser(t, Config{VerificationToken: testToken})
	parse := func(body string) (*webhook.Delivery, error) {
		return p.Parse(context.Background(), post([]byte(body), nil))
	}
	// Anything that does not carry the token is unauthenticated (401),
	// whatever it holds; only an authentic body can be malformed (400).
	for _, body := range []string{
		``, `not json`, `[]`, `{}`, `{"token":123}`, `{"token":"tok-12"}`,
		`{"schema":"2.0","token":"tok-123","header":{"event_id":"e"}}`, // 2.0 takes header.token only
		`{"schema":"2.0","header":"tok-123"}`,
		`{"schema":"2.0","token":"tok-123"}`,
		`{"schema":"2.0","token":"tok-123","header":"x"}`,
		`{"encrypt":"abc","token":"tok-123"}`,
	} {
		if _, err := parse(body); !errors.Is(err, webhook.ErrBadSignature) {
			t.Errorf("%s: error = %v, want ErrBadSignature", body, err)
		}
	}
	for _, body := range []string{
		`{"token":"tok-123"}`,
		`{"token":"tok-123","type":"url_verification"}`,
		`{"token":"tok-123","type":"url_verification","challenge":""}`,
		`{"token":"tok-123","type":"event_callback","uuid":"u"}`,
		`{"token":"tok-123","type":"event_callback","event":{"type":"x"}}`,
		`{"schema":"3.0","header":{"token":"tok-123"}}`,
		`{"schema":"2.0","header":{"token":"tok-123","event_type":"x"}}`,
		`{"schema":"2.0","header":{"token":"tok-123","event_id":"e"}}`,
		`{"schema":"2.0","header":{"token":"tok-123","event_id":"e\u0001","event_type":"x"}}`,
		`{"schema":"2.0","header":{"token":"tok-123","event_id":"` + strings.Repeat("e", 257) + `","event_type":"x"}}`,
		`{"schema":"2.0","header":{"token":"tok-123","event_id":1,"event_type":"x"}}`,
		"{\"schema\":\"2.0\",\"header\":{\"token\":\"tok-123\",\"event_id\":\"e\",\"event_type\":\"x\"},\"x\":\"\xff\"}",
	} {
		if _, err := parse(body); !errors.Is(err, webhook.ErrMalformed) {
			t.Errorf("%s: error = %v, want ErrMalformed", body, err)
		}
	}
}

func TestEventFields(t *testing.T) {
	p := newParser(t, Config{VerificationToken: testToken})
	d, err := p.Parse(context.Background(), post(v2("e1", testToken), nil))
	if err != nil {
		t.Fatal(err)
	}
	ev := d.Events[0]
	if ev.DedupKey != "e1" || ev.Type != "im.message.receive_v1" || ev.OccurredAt.UnixMilli() != 1700000000123 {
		t.Errorf("event = %q %q %s", ev.DedupKey, ev.Type, ev.OccurredAt)
	}
	// Canonical: sorted keys, numbers as written, no HTML escaping, no token.
	want := `{"event":{"n":12345678901234567890,"s":"<&>"},"header":{"app_id":"cli_a","create_time":"1700000000123","event_id":"e1","event_type":"im.message.receive_v1","tenant_key":"t"},"schema":"2.0"}`
	if string(ev.JSON) != want {
		t.Errorf("JSON = %s\nwant   %s", ev.JSON, want)
	}
	if !bytes.Equal(ev.Raw, v2("e1", testToken)) {
		t.Errorf("Raw = %s, want the body", ev.Raw)
	}
	if d.Reply.ContentType != "application/json; charset=utf-8" {
		t.Errorf("content type %q", d.Reply.ContentType)
	}
	// The same event with other spacing and key order hashes the same.
	var doc map[string]any
	dec := json.NewDecoder(bytes.NewReader(v2("e1", testToken)))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	again, _ := json.MarshalIndent(doc, "", "  ")
	d2, err := p.Parse(context.Background(), post(again, nil))
	if err != nil {
		t.Fatal(err)
	}
	if d2.Events[0].PayloadHash != ev.PayloadHash {
		t.Error("a reformatted retry hashes differently")
	}
	d3, _ := p.Parse(context.Background(), post(bytes.Replace(v2("e1", testToken), []byte(`"s":"<&>"`), []byte(`"s":"<&>!"`), 1), nil))
	if d3.Events[0].PayloadHash == ev.PayloadHash {
		t.Error("another payload under the same key hashes the same")
	}
}

func TestSchema1Time(t *testing.T) {
	for in, want := range map[string]int64{
		`"1502199207.7171419"`:    1502199207717,
		`"1502199207"`:            1502199207000,
		`1502199207.5`:            1502199207500,
		`"x"`:                     0,
		`"1.2.3"`:                 0,
		`"1502199207.1234567891"`: 0,
	} {
		got := v1Time(json.RawMessage(in))
		if want == 0 {
			if !got.IsZero() {
				t.Errorf("%s: %s, want zero", in, got)
			}
			continue
		}
		if got.UnixMilli() != want {
			t.Errorf("%s: %d ms, want %d", in, got.UnixMilli(), want)
		}
	}
	if !v1Time(nil).IsZero() {
		t.Error("absent ts is not zero")
	}
}

func TestEncryptedTenant(t *testing.T) {
	p := newParser(t, Config{VerificationToken: testToken, EncryptKey: testKey})
	ctx := context.Background()
	if _, err := p.Parse(ctx, signedReq(t, v2("e1", testToken))); err != nil {
		t.Fatalf("signed event: %v", err)
	}
	// Authentic (signed) but unusable bodies are malformed.
	for name, body := range map[string]string{
		"no encrypt member": `{"schema":"2.0"}`,
		"not base64":        `{"encrypt":"%%%"}`,
		"bad padding":       `{"encrypt":"` + rawCBC(testKey, bytes.Repeat([]byte{'a'}, 16)) + `"}`,
	} {
		h := http.Header{}
		ts := strconv.FormatInt(testNow.Unix(), 10)
		h.Set(TimestampHeader, ts)
		h.Set(NonceHeader, "n")
		h.Set(SignatureHeader, Signature(ts, "n", testKey, []byte(body)))
		if _, err := p.Parse(ctx, post([]byte(body), h)); !errors.Is(err, webhook.ErrMalformed) {
			t.Errorf("signed, %s: error = %v, want ErrMalformed", name, err)
		}
		// Unsigned, the same bodies are not authenticated.
		if _, err := p.Parse(ctx, post([]byte(body), nil)); !errors.Is(err, webhook.ErrBadSignature) {
			t.Errorf("unsigned, %s: error = %v, want ErrBadSignature", name, err)
		}
	}
	// An unsigned body is decrypted only if it is small.
	big := signedReq(t, []byte(`{"challenge":"`+strings.Repeat("c", MaxUnsignedBody)+`","type":"url_verification"}`))
	if _, err := p.Parse(ctx, post(big.Body, nil)); !errors.Is(err, webhook.ErrBadSignature) {
		t.Errorf("large unsigned handshake: %v", err)
	}
	// Missing or malformed signature headers.
	good := signedReq(t, v2("e1", testToken))
	for name, edit := range map[string]func(h http.Header){
		"no timestamp":       func(h http.Header) { h.Del(TimestampHeader) },
		"no nonce":           func(h http.Header) { h.Del(NonceHeader) },
		"short signature":    func(h http.Header) { h.Set(SignatureHeader, "abc") },
		"uppercase hex":      func(h http.Header) { h.Set(SignatureHeader, strings.ToUpper(h.Get(SignatureHeader))) },
		"timestamp in ms":    func(h http.Header) { h.Set(TimestampHeader, h.Get(TimestampHeader)+"000") },
		"negative timestamp": func(h http.Header) { h.Set(TimestampHeader, "-1") },
		"other nonce":        func(h http.Header) { h.Set(NonceHeader, "other") },
	} {
		h := good.Header.Clone()
		edit(h)
		if _, err := p.Parse(ctx, post(good.Body, h)); !errors.Is(err, webhook.ErrBadSignature) {
			t.Errorf("%s: error = %v, want ErrBadSignature", name, err)
		}
	}
}

func TestWindow(t *testing.T) {
	ctx := context.Background()
	r := signedReq(t, v2("e1", testToken))
	for _, tc := range []struct {
		tol  time.Duration
		skew time.Duration
		ok   bool
	}{
		{0, DefaultTolerance, true}, {0, DefaultTolerance + time.Second, false}, {0, -DefaultTolerance - time.Second, false},
		{time.Minute, 61 * time.Second, false}, {time.Minute, 60 * time.Second, true},
		{-1, 1000 * time.Hour, true},
	} {
		p := newParser(t, Config{VerificationToken: testToken, EncryptKey: testKey, Tolerance: tc.tol})
		req := *r
		req.Now = testNow.Add(tc.skew)
		_, err := p.Parse(ctx, &req)
		if tc.ok != (err == nil) || (!tc.ok && !errors.Is(err, webhook.ErrStaleTimestamp)) {
			t.Errorf("tolerance %s, skew %s: error = %v", tc.tol, tc.skew, err)
		}
	}
}

func TestSignatureKnownValue(t *testing.T) {
	// hex(SHA-256("1" + "n" + "k" + "{}")), computed independently with
	// printf '1nk{}' | sha256sum.
	const want = "fbd3ecb62fa42b9df3d6535b48b10c06baffa1d019f207aa63dc69364da02a05"
	if got := Signature("1", "n", "k", []byte("{}")); got != want {
		t.Errorf("Signature = %s, want %s", got, want)
	}
}

func TestChallengeReplyEscapes(t *testing.T) {
	p := newParser(t, Config{VerificationToken: testToken})
	body := `{"challenge":"a\"b<c>\u2028","token":"tok-123","type":"url_verification"}`
	d, err := p.Parse(context.Background(), post([]byte(body), nil))
	if err != nil {
		t.Fatal(err)
	}
	var got struct{ Challenge string }
	if err := json.Unmarshal(d.Reply.Body, &got); err != nil || got.Challenge != "a\"b<c>\u2028" {
		t.Errorf("reply %s does not echo the challenge: %v", d.Reply.Body, err)
	}
}

func TestSign(t *testing.T) {
	ctx := context.Background()
	for _, s := range []*Settings{{VerificationToken: testToken}, {VerificationToken: testToken, EncryptKey: testKey}} {
		p, err := s.Parser(provider.ParserOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// The token is put in where it is missing or wrong, and kept where right.
		for _, in := range [][]byte{v2("e1", ""), v2("e1", "wrong"), v2("e1", testToken)} {
			r := sign(t, s, in)
			d, err := p.Parse(ctx, r)
			if err != nil || d.Events[0].DedupKey != "e1" {
				t.Errorf("Sign → Parse: %v", err)
			}
			if s.EncryptKey == "" && bytes.Contains(in, []byte(testToken)) && !bytes.Equal(r.Body, in) {
				t.Error("a body with the right token was rewritten")
			}
			if (s.EncryptKey != "") != (r.Header.Get(SignatureHeader) != "") {
				t.Errorf("encrypt key %q: signature %q", s.EncryptKey, r.Header.Get(SignatureHeader))
			}
		}
		// The handshake: encrypted and unsigned with a key, as Feishu sends it.
		hs := sign(t, s, []byte(`{"challenge":"chal-1","type":"url_verification"}`))
		if hs.Header.Get(SignatureHeader) != "" {
			t.Errorf("handshake signed: %q", hs.Header.Get(SignatureHeader))
		}
		d, err := p.Parse(ctx, hs)
		if err != nil || !d.Verification || string(d.Reply.Body) != `{"challenge":"chal-1"}` {
			t.Errorf("handshake → Parse: %v", err)
		}
		if s.EncryptKey != "" && bytes.Contains(hs.Body, []byte("chal-1")) {
			t.Error("the handshake of an encrypted tenant is in clear")
		}
	}
	s := &Settings{VerificationToken: testToken, EncryptKey: testKey}
	for _, bad := range []string{``, `[]`, `{"a":1} x`, `{"schema":"2.0","header":1}`} {
		if _, err := s.Sign([]byte(bad), provider.SignOptions{Now: testNow}); !errors.Is(err, provider.ErrBadBody) {
			t.Errorf("Sign(%q) = %v, want ErrBadBody", bad, err)
		}
	}
	if _, err := new(Settings).Sign(v2("e", ""), provider.SignOptions{}); !errors.Is(err, provider.ErrNotConfigured) {
		t.Errorf("Sign without a token: %v", err)
	}
	if _, err := s.Sign(v2("e", ""), provider.SignOptions{Random: bytes.NewReader(nil)}); err == nil {
		t.Error("Sign without randomness succeeded")
	}
	// No Random: crypto/rand, never a panic.
	if _, err := s.Sign(v2("e", ""), provider.SignOptions{Now: testNow}); err != nil {
		t.Errorf("Sign with a nil Random: %v", err)
	}
}

// TestHandshake: the url_verification that Handshake builds carries the
// challenge and the tenant's token, plain without an Encrypt Key and
// encrypted but unsigned with one (as Feishu sends it); the parser answers
// it with HandshakeReply, {"challenge": ...}.
func TestHandshake(t *testing.T) {
	const challenge = "ajls384kdjx98XX"
	for _, s := range []*Settings{{VerificationToken: testToken}, {VerificationToken: testToken, EncryptKey: testKey}} {
		r, err := s.Handshake(challenge, provider.SignOptions{Now: testNow, Random: rand.Reader})
		if err != nil {
			t.Fatal(err)
		}
		if r.Method != http.MethodPost || r.Header.Get(SignatureHeader) != "" {
			t.Errorf("encrypt key %q: %s, signature %q; want an unsigned POST", s.EncryptKey, r.Method, r.Header.Get(SignatureHeader))
		}
		const plain = `{"challenge":"ajls384kdjx98XX","token":"tok-123","type":"url_verification"}`
		if encrypted := s.EncryptKey != ""; encrypted == (string(r.Body) == plain) || encrypted == bytes.Contains(r.Body, []byte(challenge)) {
			t.Errorf("encrypt key %q: body %s", s.EncryptKey, r.Body)
		}
		d, err := newParser(t, s.config(0)).Parse(context.Background(), post(r.Body, r.Header))
		if err != nil || !d.Verification || len(d.Events) != 0 {
			t.Fatalf("encrypt key %q: Parse: %+v, %v", s.EncryptKey, d, err)
		}
		want := s.HandshakeReply(challenge)
		if string(want.Body) != `{"challenge":"ajls384kdjx98XX"}` || want.Status != http.StatusOK || want.ContentType != contentType {
			t.Errorf("HandshakeReply %d %q %s", want.Status, want.ContentType, want.Body)
		}
		if d.Reply.Status != want.Status || d.Reply.ContentType != want.ContentType || !bytes.Equal(d.Reply.Body, want.Body) {
			t.Errorf("encrypt key %q: reply %+v, want HandshakeReply %+v", s.EncryptKey, d.Reply, want)
		}
	}
	if _, err := new(Settings).Handshake(challenge, provider.SignOptions{Now: testNow}); !errors.Is(err, provider.ErrNotConfigured) {
		t.Errorf("Handshake without a token: %v", err)
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		s    Settings
		want []string
	}{
		{Settings{VerificationToken: "t"}, nil},
		{Settings{VerificationToken: "t", EncryptKey: "k"}, nil},
		{Settings{}, []string{"verificationToken"}},
		{Settings{EncryptKey: "k"}, []string{"verificationToken"}},
		{Settings{VerificationToken: " t"}, []string{"verificationToken"}},
		{Settings{VerificationToken: "t", EncryptKey: "k\n"}, []string{"encryptKey"}},
	} {
		var got []string
		for _, p := range tc.s.Validate() {
			if p.Why == "" {
				t.Errorf("problem %+v", p)
			}
			got = append(got, p.Field)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("Validate(%q, %q) fields = %q, want %q", tc.s.VerificationToken.Reveal(), tc.s.EncryptKey.Reveal(), got, tc.want)
		}
	}
}

// The verification token is found under every spelling encoding/json
// matches (any case, the Kelvin sign for k, header.token when "schema" is
// present even as null), so it must be removed under every one of them:
// the stored (and forwarded) JSON never holds it.
func TestTokenNeverStored(t *testing.T) {
	const rest = `"event_id":"e","event_type":"x"`
	for _, body := range []string{
		`{"schema":"2.0","header":{` + rest + `,"token":"tok-123"}}`,
		`{"schema":"2.0","header":{` + rest + `,"Token":"tok-123"}}`,
		`{"schema":"2.0","header":{` + rest + `,"TOKEN":"tok-123"}}`,
		`{"schema":"2.0","header":{` + rest + `,"to` + "\u212a" + `en":"tok-123"}}`,
		`{"schema":"2.0","header":{` + rest + `,"token":"tok-123","Token":"tok-123"}}`,
		`{"schema":"2.0","Header":{` + rest + `,"token":"tok-123"}}`,
		`{"Schema":"2.0","HEADER":{` + rest + `,"Token":"tok-123"}}`,
		`{"schema":"2.0","header":{` + rest + `},"header":{` + rest + `,"token":"tok-123"}}`,
		`{"schema":null,"header":{"token":"tok-123"},"type":"event_callback","uuid":"u","event":{"type":"x"}}`,
		`{"token":"tok-123","type":"event_callback","uuid":"u","event":{"type":"x"}}`,
		`{"Token":"tok-123","type":"event_callback","uuid":"u","event":{"type":"x"}}`,
		`{"TOKEN":"tok-123","type":"event_callback","uuid":"u","event":{"type":"x"}}`,
		`{"token":"tok-123","Token":"tok-123","type":"event_callback","uuid":"u","event":{"type":"x"}}`,
	} {
		for _, tenant := range []struct {
			name string
			req  func() *webhook.Request
			p    *Parser
		}{
			{"plaintext", func() *webhook.Request { return post([]byte(body), nil) }, newParser(t, Config{VerificationToken: testToken})},
			{"encrypted", func() *webhook.Request { return signedReq(t, []byte(body)) }, newParser(t, Config{VerificationToken: testToken, EncryptKey: testKey, Tolerance: -1})},
		} {
			d, err := tenant.p.Parse(context.Background(), tenant.req())
			if err != nil {
				t.Errorf("%s %s: %v", tenant.name, body, err)
				continue
			}
			if ev := d.Events[0]; bytes.Contains(ev.JSON, []byte(testToken)) {
				t.Errorf("%s %s: stored JSON %s holds the token", tenant.name, body, ev.JSON)
			}
		}
	}
}

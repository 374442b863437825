package standard_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"filippo.io/edwards25519"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/config/tenants"
	"github.com/hookwall/hookwall/shared/protocol/provider/standard"
)

// signedKey returns a request for body with webhook-id id, signed with the
// raw key at ts and checked at ts.
func signedKey(key []byte, id string, ts int64, body string) *webhook.Request {
	tsS := strconv.FormatInt(ts, 10)
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id + "." + tsS + "." + body))
	h := http.Header{}
	h.Set("webhook-id", id)
	h.Set("webhook-timestamp", tsS)
	h.Set("webhook-signature", "v1,"+base64.StdEncoding.EncodeToString(m.Sum(nil)))
	return &webhook.Request{Method: http.MethodPost, Header: h, Body: []byte(body), Now: time.Unix(ts, 0)}
}

// testKey is 32 bytes whose standard Base64 has '+', '/', padding and two
// unused bits in its last character.
var testKey = []byte("\xfb\xff\xbf0123456789abcdefghijklmnopqrstu"[:32])

func TestParseRejectsInvalidUTF8Body(t *testing.T) {
	p, err := standard.New(standard.Config{RawSecrets: [][]byte{testKey}})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	for _, tc := range []struct{ name, body string }{
		{"in a string", `{"type":"invoice.paid","note":"` + "\xff" + `"}`},
		{"in type", `{"type":"invoice.` + "\xc3\x28" + `"}`},
		{"in a key", `{"` + "\x80" + `":1}`},
		{"truncated sequence", `["` + "\xe3\x81" + `"]`},
		{"overlong encoding", `"` + "\xc0\xaf" + `"`},
		{"UTF-8 encoded surrogate", `{"a":"` + "\xed\xa0\x80" + `"}`},
		{"beyond U+10FFFF", `{"a":"` + "\xf4\x90\x80\x80" + `"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := p.Parse(context.Background(), signedKey(testKey, "msg_1", 1614265330, tc.body))
			if !errors.Is(err, webhook.ErrMalformed) {
				t.Fatalf("got %v (delivery %+v), want ErrMalformed", err, d)
			}
		})
	}
}

func TestParseWebhookIDRules(t *testing.T) {
	p, err := standard.New(standard.Config{RawSecrets: [][]byte{testKey}})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	for _, tc := range []struct {
		name, id string
		ok       bool
	}{
		{"Svix style", "msg_2Qx4demo0001", true},
		{"MaxIDBytes", strings.Repeat("a", standard.MaxIDBytes), true},
		{"MaxIDBytes of two-byte characters", strings.Repeat("é", standard.MaxIDBytes/2), true},
		{"one byte too long", strings.Repeat("a", standard.MaxIDBytes+1), false},
		{"invalid UTF-8", "msg_\xff", false},
		{"truncated UTF-8", "msg_\xc3", false},
		{"NUL", "msg_\x00", false},
		{"tab", "msg\t1", false},
		{"DEL", "msg_\x7f", false},
		{"C1 control", "msg_\u0085", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := p.Parse(context.Background(), signedKey(testKey, tc.id, 1614265330, `{}`))
			if tc.ok {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				if d.Events[0].DedupKey != tc.id {
					t.Fatalf("DedupKey = %q", d.Events[0].DedupKey)
				}
				return
			}
			if !errors.Is(err, webhook.ErrMalformed) {
				t.Fatalf("got %v (delivery %+v), want ErrMalformed", err, d)
			}
		})
	}
}

// TestInvalidInputNeedsSignature checks that the signature is verified first:
// unsigned junk is a bad signature (401), not a bad request.
func TestInvalidInputNeedsSignature(t *testing.T) {
	p, err := standard.New(standard.Config{RawSecrets: [][]byte{testKey}})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	other := []byte("another key of some thirty bytes")
	for _, req := range []*webhook.Request{
		signedKey(other, "msg_1", 1614265330, `{"a":"`+"\xff"+`"}`),
		signedKey(other, "msg_\xff", 1614265330, `{}`),
		signedKey(other, "msg_\x01", 1614265330, `{}`),
		signedKey(other, strings.Repeat("a", standard.MaxIDBytes+1), 1614265330, `{}`),
	} {
		if _, err := p.Parse(context.Background(), req); !errors.Is(err, webhook.ErrBadSignature) {
			t.Errorf("id %.20q body %q: got %v, want ErrBadSignature", req.Header.Get("webhook-id"), req.Body, err)
		}
	}
}

// TestSecretForms checks that every spelling of a secret that the reference
// libraries decode to the same key verifies that key's signatures.
func TestSecretForms(t *testing.T) {
	padded := base64.StdEncoding.EncodeToString(testKey) // 43 characters and '='
	if !strings.ContainsAny(padded, "+/") || !strings.HasSuffix(padded, "=") {
		t.Fatalf("testKey's Base64 %q lacks '+', '/' or padding", padded)
	}
	unpadded := strings.TrimRight(padded, "=")
	// The last character carries two unused bits; set them.
	last := strings.IndexByte("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", unpadded[len(unpadded)-1])
	dirty := unpadded[:len(unpadded)-1] + string("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"[last|3])
	if dirty == unpadded {
		t.Fatal("no unused bits to set")
	}
	for _, tc := range []struct{ name, secret string }{
		{"whsec_ and padded Base64 (the specification's form)", "whsec_" + padded},
		{"whsec_ and unpadded Base64", "whsec_" + unpadded},
		{"padded Base64 without whsec_", padded},
		{"unpadded Base64 without whsec_", unpadded},
		{"excess padding", "whsec_" + padded + "=="},
		{"trailing newline", "whsec_" + padded + "\n"},
		{"CRLF inside", "whsec_" + padded[:20] + "\r\n" + padded[20:]},
		{"surrounding spaces and tabs", " \twhsec_" + padded + " \t"},
		{"space inside", "whsec_" + padded[:10] + " " + padded[10:]},
		{"unused bits set", "whsec_" + dirty},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key, err := standard.DecodeSecret(tc.secret)
			if err != nil || !bytes.Equal(key, testKey) {
				t.Fatalf("DecodeSecret(%q) = %x, %v; want %x", tc.secret, key, err, testKey)
			}
			p, err := standard.New(standard.Config{Secrets: []string{tc.secret}})
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			if _, err := p.Parse(context.Background(), signedKey(testKey, "msg_1", 1614265330, `{}`)); err != nil {
				t.Fatalf("Parse: %v", err)
			}
			sig, err := standard.Sign(tc.secret, "msg_1", 1614265330, []byte(`{}`))
			if err != nil || sig != signedKey(testKey, "msg_1", 1614265330, `{}`).Header.Get("webhook-signature") {
				t.Fatalf("Sign = %q, %v", sig, err)
			}
		})
	}
	// A key whose Base64 ends in "==", with one '=' only.
	short := testKey[:31]
	secret := "whsec_" + strings.TrimSuffix(base64.StdEncoding.EncodeToString(short), "=")
	if key, err := standard.DecodeSecret(secret); err != nil || !bytes.Equal(key, short) {
		t.Errorf("short padding: DecodeSecret(%q) = %x, %v; want %x", secret, key, err, short)
	}
}

// TestSecretFormsRejected checks the spellings on which the reference
// libraries do not agree on one key, or that hold no key.
func TestSecretFormsRejected(t *testing.T) {
	padded := base64.StdEncoding.EncodeToString(testKey)
	for _, tc := range []struct{ name, secret string }{
		{"URL-safe alphabet", "whsec_" + base64.URLEncoding.EncodeToString(testKey)},
		{"padding inside", "whsec_" + padded[:8] + "=" + padded[8:]},
		{"impossible length", "whsec_" + padded[:41]},
		{"other characters", "whsec_" + padded[:10] + "!" + padded[10:]},
		{"prefix only", "whsec_"},
		{"padding only", "whsec_=="},
		{"empty", ""},
		{"whitespace only", " \n"},
		{"whpk_ public key", "whpk_" + padded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if key, err := standard.DecodeSecret(tc.secret); err == nil {
				t.Fatalf("DecodeSecret(%q) = %x, want an error", tc.secret, key)
			}
			if _, err := standard.New(standard.Config{Secrets: []string{tc.secret}}); err == nil {
				t.Fatal("New: got nil error")
			}
		})
	}
}

// TestRawSecrets checks keys given as bytes, as the reference libraries'
// raw constructors take them, alone and next to encoded secrets.
func TestRawSecrets(t *testing.T) {
	spec := caseNamed(t, "spec_vector")
	raw := []byte("not base64: any bytes \x00\xff")
	for _, tc := range []struct {
		name string
		cfg  standard.Config
		req  *webhook.Request
	}{
		{"raw key", standard.Config{RawSecrets: [][]byte{raw}}, signedKey(raw, "msg_1", 1614265330, `{}`)},
		{"raw key that looks like Base64", standard.Config{RawSecrets: [][]byte{[]byte("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")}},
			signedKey([]byte("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"), "msg_1", 1614265330, `{}`)},
		{"encoded secret next to a raw key", standard.Config{Secrets: []string{spec.Secret}, RawSecrets: [][]byte{raw}}, request(spec)},
		{"raw key next to an encoded secret", standard.Config{Secrets: []string{spec.Secret}, RawSecrets: [][]byte{nil, raw}}, signedKey(raw, "msg_1", 1614265330, `{}`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := standard.New(tc.cfg)
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			if _, err := p.Parse(context.Background(), tc.req); err != nil {
				t.Fatalf("Parse: %v", err)
			}
		})
	}
	if _, err := standard.New(standard.Config{RawSecrets: [][]byte{nil, {}}}); err == nil {
		t.Fatal("New with only empty raw keys: got nil error")
	}
	// The key is copied: changing the caller's slice afterwards has no effect.
	key := bytes.Clone(raw)
	p, err := standard.New(standard.Config{RawSecrets: [][]byte{key}})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	key[0] ^= 1
	if _, err := p.Parse(context.Background(), signedKey(raw, "msg_1", 1614265330, `{}`)); err != nil {
		t.Fatalf("Parse after the caller changed its slice: %v", err)
	}
}

// whpk is the "whpk_" serialisation of the 32 bytes b.
func whpk(b []byte) string { return "whpk_" + base64.StdEncoding.EncodeToString(b) }

// weakKeys returns every 32-byte encoding that decodes to a point of small
// order (the 8 torsion points, each with either sign bit, and their
// non-canonical encodings y+p), and the non-canonical encodings y+p of the
// other points with y < 19 that are on the curve: none of them may be a
// public key.
func weakKeys(t *testing.T) map[string][]byte {
	t.Helper()
	// An order-8 point (libsodium's list of small-order encodings).
	order8, err := new(edwards25519.Point).SetBytes([]byte{0xc7, 0x17, 0x6a, 0x70, 0x3d, 0x4d, 0xd8, 0x4f, 0xba, 0x3c, 0x0b, 0x76,
		0x0d, 0x10, 0x67, 0x0f, 0x2a, 0x20, 0x53, 0xfa, 0x2c, 0x39, 0xcc, 0xc6, 0x4e, 0xc7, 0xfd, 0x77, 0x92, 0xac, 0x03, 0x7a})
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string][]byte{}
	add := func(what string, b []byte) {
		for _, sign := range []byte{0, 0x80} {
			c := bytes.Clone(b)
			c[31] |= sign
			keys[what+" sign "+strconv.Itoa(int(sign>>7))] = c
		}
	}
	p := edwards25519.NewIdentityPoint()
	for k := range 8 {
		add("torsion "+strconv.Itoa(k), p.Bytes())
		p.Add(p, order8)
	}
	if p.Equal(edwards25519.NewIdentityPoint()) != 1 {
		t.Fatal("8 times an order-8 point is not the identity")
	}
	// y+p for y from 0 to 18: 2^255-19+y, little-endian, fits in 255 bits.
	for y := range 19 {
		b := bytes.Repeat([]byte{0xff}, 32)
		b[0], b[31] = byte(0xed+y), 0x7f
		add("y+p, y="+strconv.Itoa(y), b)
	}
	return keys
}

// A small-order public key (the identity point, above all) makes one
// fixed signature verify any body: Ed25519 checks [S]B = R + [k]A, which
// for A of order 1 is R = [S]B, so R the identity and S zero sign every
// message. Such keys, and the non-canonical spellings of any key, are
// refused when the tenants document is loaded, with the field named and
// why; a parser is never built on them.
func TestWeakPublicKeysRefused(t *testing.T) {
	identity := make([]byte, 32)
	identity[0] = 1
	forged := append(bytes.Clone(identity), make([]byte, 32)...) // R = identity, S = 0
	if !ed25519.Verify(identity, []byte("any body at all"), forged) {
		t.Fatal("the forgery this test guards against does not verify: the test proves nothing")
	}
	doc := func(key string) []byte {
		return []byte(`{"tenants":{"t1":{"standard":{"publicKeys":["` + keyAPublic + `","` + key + `"]}}}}`)
	}
	for what, b := range weakKeys(t) {
		for _, form := range []struct{ name, key string }{
			{"raw", whpk(b)},
			{"SPKI", whpk(append([]byte{0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00}, b...))},
		} {
			if _, err := standard.DecodePublicKey(form.key); err == nil {
				t.Errorf("%s (%s, %x): DecodePublicKey accepted it", what, form.name, b)
			}
			_, err := tenants.Parse(doc(form.key))
			if err == nil || !strings.Contains(err.Error(), "standard.publicKeys[1]: ") ||
				!(strings.Contains(err.Error(), "small order") || strings.Contains(err.Error(), "not canonical") ||
					strings.Contains(err.Error(), "not a point")) {
				t.Errorf("%s (%s, %x): tenants document error %v; want publicKeys[1] refused as small order, not canonical or not a point", what, form.name, b, err)
			}
		}
		if p, err := standard.New(standard.Config{PublicKeys: []string{whpk(b)}}); err == nil {
			t.Errorf("%s (%x): New built a parser on it", what, b)
			h := http.Header{}
			h.Set("webhook-id", "msg_1")
			h.Set("webhook-timestamp", "1614265330")
			h.Set("webhook-signature", "v1a,"+base64.StdEncoding.EncodeToString(forged))
			if _, err := p.Parse(context.Background(), &webhook.Request{Method: http.MethodPost, Header: h,
				Body: []byte(`{"type":"forged"}`), Now: time.Unix(1614265330, 0)}); err == nil && bytes.Equal(b, identity) {
				t.Errorf("%s: the fixed signature verified a body of the attacker's choice", what)
			}
		}
	}
	// The error says why the identity is refused.
	_, err := tenants.Parse(doc(whpk(identity)))
	if err == nil || !strings.Contains(err.Error(), "small order") {
		t.Errorf("identity key: %v; want small order named", err)
	}
	// Real keys still load (keyA, and 100 fresh ones).
	for range 100 {
		pub, _, err := ed25519.GenerateKey(nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tenants.Parse(doc(whpk(pub))); err != nil {
			t.Fatalf("key %x: %v", []byte(pub), err)
		}
	}
}

package feishu_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/engine/intake/intaketest"
	"github.com/hookwall/hookwall/shared/protocol/provider/feishu"
)

// FuzzParse feeds arbitrary bodies and signature headers, seeded from the
// vectors, to a tenant with an Encrypt Key and one without. Parse must
// never panic, must fail only with the sentinels, and what it accepts must
// be storable.
func FuzzParse(f *testing.F) {
	for _, c := range intaketest.LoadVectors(f, vectorsFile).Cases {
		for _, r := range c.Requests {
			f.Add(r.Body, r.Headers[feishu.TimestampHeader], r.Headers[feishu.NonceHeader], r.Headers[feishu.SignatureHeader])
		}
	}
	var tenants []*feishu.Parser
	for _, c := range []feishu.Config{
		{VerificationToken: "rvaYgkND1GOiu5MM0E1rncYC6PLtF7JV", EncryptKey: "test key", Tolerance: -1},
		{VerificationToken: "l802sPhp2r1AMSPDTaJc5eYZOEnKyp"},
	} {
		p, err := feishu.New(c)
		if err != nil {
			f.Fatal(err)
		}
		tenants = append(tenants, p)
	}
	f.Fuzz(func(t *testing.T, body, ts, nonce, sig string) {
		h := http.Header{}
		h.Set(feishu.TimestampHeader, ts)
		h.Set(feishu.NonceHeader, nonce)
		h.Set(feishu.SignatureHeader, sig)
		for _, p := range tenants {
			req := &webhook.Request{Method: http.MethodPost, Header: h, Body: []byte(body), Now: time.Unix(1608725990, 0)}
			d, err := p.Parse(context.Background(), req)
			if err != nil {
				if !errors.Is(err, webhook.ErrBadSignature) && !errors.Is(err, webhook.ErrMalformed) && !errors.Is(err, webhook.ErrStaleTimestamp) {
					t.Fatalf("error %v wraps no sentinel", err)
				}
				continue
			}
			if d.Reply.Status != http.StatusOK {
				t.Fatalf("reply status %d", d.Reply.Status)
			}
			for _, ev := range d.Events {
				if webhook.CheckID("key", ev.DedupKey, webhook.MaxDedupKeyBytes) != nil || webhook.CheckID("type", ev.Type, webhook.MaxTypeBytes) != nil {
					t.Fatalf("accepted key %q, type %q", ev.DedupKey, ev.Type)
				}
				if !utf8.Valid(ev.JSON) || len(ev.PayloadHash) != 64 {
					t.Fatalf("accepted JSON %q, hash %q", ev.JSON, ev.PayloadHash)
				}
			}
		}
	})
}

// FuzzDecrypt checks that Decrypt never panics and that what it returns
// encrypts back to a value that decrypts to the same bytes.
func FuzzDecrypt(f *testing.F) {
	f.Add("test key", "P37w+VZImNgPEO1RBhJ6RtKl7n6zymIbEG1pReEzghk=")
	f.Add("k", "")
	f.Add("k", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=")
	f.Fuzz(func(t *testing.T, key, enc string) {
		plain, err := feishu.Decrypt(key, enc)
		if err != nil || key == "" {
			return
		}
		again, err := feishu.Encrypt(key, plain, nil)
		if err != nil {
			t.Fatal(err)
		}
		back, err := feishu.Decrypt(key, again)
		if err != nil || string(back) != string(plain) {
			t.Fatalf("round trip of %q: %q, %v", plain, back, err)
		}
	})
}

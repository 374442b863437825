package feishu_test

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/config/tenants"
	"github.com/hookwall/hookwall/shared/engine/intake/intaketest"
	"github.com/hookwall/hookwall/shared/protocol/provider"
	"github.com/hookwall/hookwall/shared/protocol/provider/feishu"
)

// The vectors, the registration and the signer through the real receiver
// over HTTP: the tenants document, the parsers the registry builds, the
// claim in an in-memory store, the hand-off to an in-memory queue.

func TestVectorsThroughReceiver(t *testing.T) {
	intaketest.RunVectors(t, "testdata/vectors.json")
}

func TestConformance(t *testing.T) {
	intaketest.Conformance(t, feishu.Name)
}

// tenantsDoc is a tenants document whose tenant t1 has section as its
// feishu settings.
func tenantsDoc(section string) []byte {
	return []byte(`{"tenants":{"t1":{"feishu":` + section + `}}}`)
}

// TestTenantsDocument checks the feishu section of the tenants document:
// what loads, and what is refused with the field named and no secret shown.
func TestTenantsDocument(t *testing.T) {
	for section, want := range map[string]string{
		`{"verificationToken":"v-token"}`:                      "",
		`{"verificationToken":"v-token","encryptKey":"k-key"}`: "",
		`{}`:                                `tenant "t1": feishu.verificationToken: required`,
		`{"encryptKey":"k-key"}`:            `tenant "t1": feishu.verificationToken: required`,
		`{"verificationToken":"v-token\n"}`: `tenant "t1": feishu.verificationToken: must not begin or end with white space`,
		`{"verificationToken":"v-token","encryptKey":" k-key"}`: `tenant "t1": feishu.encryptKey: must not begin or end with white space`,
		`{"verificationToken":"v-token","token":"x"}`:           `unknown field "token"`,
		`{"verificationToken":7}`:                               `tenants document`,
	} {
		_, err := tenants.Parse(tenantsDoc(section))
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: %v", section, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%s: error %v, want %q", section, err, want)
		case err != nil && (strings.Contains(err.Error(), "v-token") || strings.Contains(err.Error(), "k-key")):
			t.Errorf("%s: error %q shows a secret", section, err)
		}
	}
	ts, err := tenants.Parse(tenantsDoc(`{"verificationToken":"v-token","encryptKey":"k-key"}`))
	if err != nil {
		t.Fatal(err)
	}
	tn, _ := ts.Tenant("t1")
	s, ok := tn.Settings(feishu.Name)
	if !ok {
		t.Fatal("t1 has no feishu settings")
	}
	if got := s.(*feishu.Settings); got.VerificationToken.Reveal() != "v-token" || got.EncryptKey.Reveal() != "k-key" {
		t.Errorf("settings %#v", got)
	}
}

// TestSignerThroughReceiver sends events and handshakes signed by the
// provider's signer to a tenant without an Encrypt Key (Conformance covers
// the demo tenant, which has one): the event → the reply and its key; the
// same event with another token → 401, nothing stored; Feishu's retry 15 s
// later → 200, nothing new; the handshake → its JSON echo, nothing stored.
func TestSignerThroughReceiver(t *testing.T) {
	p := feishu.Provider()
	for _, section := range []string{`{"verificationToken":"v-token"}`, `{"verificationToken":"v-token","encryptKey":"k-key"}`} {
		t.Run(section, func(t *testing.T) {
			now := time.Unix(1700000000, 0)
			r := intaketest.NewReceiver(t, tenantsDoc(section), now)
			s := p.NewSettings()
			if err := json.Unmarshal([]byte(section), s); err != nil {
				t.Fatal(err)
			}
			sign := func(body []byte) *http.Request {
				t.Helper()
				req, err := s.Sign(body, provider.SignOptions{Now: r.Clock.Now(), Random: rand.Reader})
				if err != nil {
					t.Fatal(err)
				}
				return r.Request(t, feishu.Name, "t1", req)
			}
			id := p.Demo.ID("signer", 1)
			body := p.Demo.Body([]string{id}, now, false)

			wrong := *s.(*feishu.Settings) // the same Encrypt Key, another token
			wrong.VerificationToken = "x-token"
			other, err := wrong.Sign(body, provider.SignOptions{Now: now, Random: rand.Reader})
			if err != nil {
				t.Fatal(err)
			}
			if got := r.Do(t, r.Request(t, feishu.Name, "t1", other)); got.Status != http.StatusUnauthorized || r.Records() != 0 {
				t.Errorf("wrong token: %d, %d records", got.Status, r.Records())
			}
			got := r.Do(t, sign(body))
			if got.Status != 200 || !bytes.Equal(got.Body, p.Reply.Body) || len(got.Sent) != 1 || got.Sent[0].Key != webhook.Key(feishu.Name, "t1", id) {
				t.Fatalf("event: %d %q, sent %d", got.Status, got.Body, len(got.Sent))
			}
			r.Process(t)
			r.Clock.AdvanceTo(now.Add(15 * time.Second))
			if got := r.Do(t, sign(p.Demo.Body([]string{id}, now, true))); got.Status != 200 || len(got.Sent) != 0 || r.Records() != 1 {
				t.Errorf("retry: %d, sent %d, %d records", got.Status, len(got.Sent), r.Records())
			}
			hs, err := s.(provider.Handshaker).Handshake("chal-42", provider.SignOptions{Now: r.Clock.Now(), Random: rand.Reader})
			if err != nil {
				t.Fatal(err)
			}
			got = r.Do(t, r.Request(t, feishu.Name, "t1", hs))
			if got.Status != 200 || string(got.Body) != `{"challenge":"chal-42"}` || len(got.Sent) != 0 || r.Records() != 1 {
				t.Errorf("handshake: %d %q, sent %d, %d records", got.Status, got.Body, len(got.Sent), r.Records())
			}
		})
	}
}

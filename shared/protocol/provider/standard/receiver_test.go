package standard_test

import (
	"crypto/rand"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/config/tenants"
	"github.com/hookwall/hookwall/shared/engine/intake/intaketest"
	"github.com/hookwall/hookwall/shared/protocol/provider"
	"github.com/hookwall/hookwall/shared/protocol/provider/standard"
)

// The v1a and tolerance vectors, the registration and the signer through
// the real receiver over HTTP: the tenants document, the parsers the
// registry builds, the claim in an in-memory store, the hand-off to an
// in-memory queue.

func TestVectorsThroughReceiver(t *testing.T) {
	intaketest.RunVectors(t, "testdata/vectors.json")
}

func TestConformance(t *testing.T) {
	intaketest.Conformance(t, standard.Name)
}

// Keys of the tests: the generator's key A (testdata/gen-vectors.mjs), in
// every form, and a whsec_ secret.
const (
	keyAPublic     = "whpk_+K1jd4Iy8P1QOZfNes7M5V7r8q03tiFzbkDbP0Sok9E="
	keyASPKI       = "whpk_MCowBQYDK2VwAyEA+K1jd4Iy8P1QOZfNes7M5V7r8q03tiFzbkDbP0Sok9E="
	keyASeed       = "whsk_IRh3yhWsBdk6VhFoVWmYOO2+WnkWxQGpETPRCV8V6XU="
	keyAFull       = "whsk_IRh3yhWsBdk6VhFoVWmYOO2+WnkWxQGpETPRCV8V6XX4rWN3gjLw/VA5l816zszlXuvyrTe2IXNuQNs/RKiT0Q=="
	testSecret     = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	tenantsPrefix  = `{"tenants":{"t1":{"standard":`
	tenantsSuffix  = `}}}`
	secretSentinel = "IRh3yhWs" // a fragment of the signing key: never in an error
)

// tenantsDoc is a tenants document whose tenant t1 has section as its
// standard settings.
func tenantsDoc(section string) []byte { return []byte(tenantsPrefix + section + tenantsSuffix) }

// TestTenantsDocument checks the standard section of the tenants document:
// what loads (the existing forms too), and what is refused with the field
// named, a message that says what to do, and no key shown.
func TestTenantsDocument(t *testing.T) {
	for _, tc := range []struct{ section, want string }{
		// Loads.
		{`{"secrets":["` + testSecret + `"]}`, ""},
		{`{"rawSecrets":["a raw key"]}`, ""},
		{`{"publicKeys":["` + keyAPublic + `"]}`, ""},
		{`{"publicKeys":["` + keyASPKI + `"," ` + keyAPublic + "\\n" + `"]}`, ""},
		{`{"signingKey":"` + keyASeed + `"}`, ""},
		{`{"signingKey":"` + keyAFull + `"}`, ""},
		{`{"secrets":["` + testSecret + `"],"publicKeys":["` + keyAPublic + `"],"signingKey":"` + keyASeed + `","toleranceSeconds":300}`, ""},
		{`{"publicKeys":["` + keyAPublic + `"],"toleranceSeconds":30}`, ""},
		{`{"publicKeys":["` + keyAPublic + `"],"toleranceSeconds":3600}`, ""},
		// Refused.
		{`{}`, `tenant "t1": standard.secrets: at least one secret (or rawSecrets, publicKeys or signingKey entry) required`},
		{`{"toleranceSeconds":60}`, `standard.secrets: at least one secret`},
		{`{"secrets":["whsec_!!!"]}`, `standard.secrets[0]: must be Base64 ("whsec_" prefix optional)`},
		{`{"secrets":["` + keyAPublic + `"]}`, `standard.secrets[0]: is a whpk_ public key: it belongs in publicKeys`},
		{`{"secrets":["` + keyASeed + `"]}`, `standard.secrets[0]: is a whsk_ signing key: it belongs in signingKey`},
		{`{"publicKeys":["` + keyASeed + `"]}`, `standard.publicKeys[0]: is a whsk_ signing key: it belongs in signingKey`},
		{`{"publicKeys":["` + testSecret + `"]}`, `standard.publicKeys[0]: is a whsec_ secret: it belongs in secrets`},
		{`{"publicKeys":["` + strings.TrimPrefix(keyAPublic, "whpk_") + `"]}`, `standard.publicKeys[0]: must be "whpk_" and the Base64 of a 32-byte Ed25519 public key`},
		{`{"publicKeys":["whpk_AAAA"]}`, `standard.publicKeys[0]: must be "whpk_" and the Base64 of a 32-byte Ed25519 public key`},
		{`{"publicKeys":["` + keyAPublic + `","whpk_` + strings.Repeat("-", 43) + `"]}`, `standard.publicKeys[1]: must be "whpk_"`},
		{`{"signingKey":"` + keyAPublic + `"}`, `standard.signingKey: is a whpk_ public key: it belongs in publicKeys`},
		{`{"signingKey":"` + testSecret + `"}`, `standard.signingKey: is a whsec_ secret: it belongs in secrets`},
		{`{"signingKey":"` + keyASeed[:20] + `"}`, `standard.signingKey: must be "whsk_" and the Base64 of a 32-byte Ed25519 seed, or of the 64-byte seed and public key`},
		{`{"signingKey":"` + keyAFull[:50] + "AAAA" + keyAFull[54:] + `"}`, `standard.signingKey: its last 32 bytes are not the public key of its first 32`},
		{`{"publicKeys":["` + keyAPublic + `"],"toleranceSeconds":29}`, `standard.toleranceSeconds: must be from 30 to 3600 (seconds; unset: the receiver's HOOKWALL_TIMESTAMP_TOLERANCE, default 300)`},
		{`{"publicKeys":["` + keyAPublic + `"],"toleranceSeconds":3601}`, `standard.toleranceSeconds: must be from 30 to 3600`},
		{`{"publicKeys":["` + keyAPublic + `"],"toleranceSeconds":0}`, `standard.toleranceSeconds: must be from 30 to 3600`},
		{`{"publicKeys":["` + keyAPublic + `"],"toleranceSeconds":-300}`, `standard.toleranceSeconds: must be from 30 to 3600`},
		{`{"publicKeys":["` + keyAPublic + `"],"toleranceSeconds":"300"}`, `tenants document: field`},
		{`{"publicKeys":["` + keyAPublic + `"],"toleranceSeconds":300.5}`, `tenants document: field`},
		{`{"publicKey":"` + keyAPublic + `"}`, `unknown field "publicKey"`},
	} {
		_, err := tenants.Parse(tenantsDoc(tc.section))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.section, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s:\n error %v\n want  %q", tc.section, err, tc.want)
		case err != nil && strings.Contains(err.Error(), secretSentinel):
			t.Errorf("%s: error %q shows a key", tc.section, err)
		}
	}
}

// TestSignV1a checks that settings with a signing key sign v1a (alone, or
// after the v1 entry of their secret) and that the receiver accepts what
// they sign; settings with public keys only cannot sign.
func TestSignV1a(t *testing.T) {
	now := time.Unix(1767225600, 0)
	body := []byte(`{"type":"invoice.paid","data":{"id":"in_1"}}`)
	for _, tc := range []struct {
		name, section string
		entries       []string // versions of the header's entries, in order
	}{
		{"signing key only", `{"signingKey":"` + keyASeed + `"}`, []string{"v1a"}},
		{"64-byte signing key", `{"signingKey":"` + keyAFull + `"}`, []string{"v1a"}},
		{"secret and signing key", `{"secrets":["` + testSecret + `"],"signingKey":"` + keyASeed + `"}`, []string{"v1", "v1a"}},
		{"secret only", `{"secrets":["` + testSecret + `"]}`, []string{"v1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := tenantsDoc(tc.section)
			ts, err := tenants.Parse(doc)
			if err != nil {
				t.Fatal(err)
			}
			tn, _ := ts.Tenant("t1")
			s, _ := tn.Settings(standard.Name)
			req, err := s.Sign(body, provider.SignOptions{Now: now, MessageID: "msg_sign_1", Random: rand.Reader})
			if err != nil {
				t.Fatalf("Sign: %v", err)
			}
			var versions []string
			for _, e := range strings.Fields(req.Header.Get(standard.SignatureHeader)) {
				v, _, _ := strings.Cut(e, ",")
				versions = append(versions, v)
			}
			if strings.Join(versions, " ") != strings.Join(tc.entries, " ") {
				t.Fatalf("webhook-signature %q: versions %q, want %q", req.Header.Get(standard.SignatureHeader), versions, tc.entries)
			}
			// Public keys only verify what the signing key signed.
			r := intaketest.NewReceiver(t, []byte(`{"tenants":{"t1":{"standard":{"publicKeys":["`+keyAPublic+`"]}},"t2":{"standard":`+tc.section+`}}}`), now)
			for _, tenant := range []string{"t1", "t2"} {
				want := http.StatusOK
				if tenant == "t1" && !strings.Contains(tc.section, "signingKey") {
					want = http.StatusUnauthorized
				}
				if got := r.Do(t, r.Request(t, standard.Name, tenant, req)); got.Status != want {
					t.Errorf("tenant %s: status %d (%s), want %d", tenant, got.Status, got.Body, want)
				}
			}
		})
	}
	// The signature of the 32-byte and 64-byte forms of one key are equal
	// (Ed25519 is deterministic), and equal the generator's.
	a, err1 := standard.SignAsymmetric(keyASeed, "msg_v1a_valid", 1767225600, []byte(`{"type":"invoice.paid","timestamp":"2026-01-01T00:00:00Z","data":{"id":"in_1"}}`))
	b, err2 := standard.SignAsymmetric(keyAFull, "msg_v1a_valid", 1767225600, []byte(`{"type":"invoice.paid","timestamp":"2026-01-01T00:00:00Z","data":{"id":"in_1"}}`))
	const want = "v1a,LQNzFSrOU62O80SjAOOdvPLjn5IVeKpU+MHjTuNGwd7X5vXmiEFMWddE3WoMy+pSRKc45NpgV8R6J7TJ/KJjBQ=="
	if err1 != nil || err2 != nil || a != want || b != want {
		t.Errorf("SignAsymmetric = %q, %v; %q, %v; want %q (testdata/vectors.json, first request)", a, err1, b, err2, want)
	}
	if pub, err := standard.PublicKeyOf(keyAFull); err != nil || pub != keyAPublic {
		t.Errorf("PublicKeyOf = %q, %v; want %q", pub, err, keyAPublic)
	}
	// Public keys cannot sign.
	ts, err := tenants.Parse(tenantsDoc(`{"publicKeys":["` + keyAPublic + `"]}`))
	if err != nil {
		t.Fatal(err)
	}
	tn, _ := ts.Tenant("t1")
	s, _ := tn.Settings(standard.Name)
	if _, err := s.Sign(body, provider.SignOptions{Now: now, Random: rand.Reader}); err == nil || !strings.Contains(err.Error(), "cannot sign") {
		t.Errorf("Sign with public keys only: %v, want ErrNotConfigured saying public keys cannot sign", err)
	}
}

// TestTenantTolerance checks that a tenant's toleranceSeconds overrides
// the receiver's tolerance, in both directions, and that without it the
// receiver's applies (a negative one meaning the default).
func TestTenantTolerance(t *testing.T) {
	const id, ts = "msg_tol", 1767225600
	body := []byte(`{}`)
	sig, err := standard.SignAsymmetric(keyASeed, id, ts, body)
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{}
	h.Set("webhook-id", id)
	h.Set("webhook-timestamp", "1767225600")
	h.Set("webhook-signature", sig)
	for _, tc := range []struct {
		name     string
		section  string
		receiver time.Duration
		late     time.Duration
		ok       bool
	}{
		{"receiver default, 300 s late", `{"publicKeys":["` + keyAPublic + `"]}`, 0, 300 * time.Second, true},
		{"receiver default, 301 s late", `{"publicKeys":["` + keyAPublic + `"]}`, 0, 301 * time.Second, false},
		{"receiver negative means default", `{"publicKeys":["` + keyAPublic + `"]}`, -time.Second, 301 * time.Second, false},
		{"receiver 10 min", `{"publicKeys":["` + keyAPublic + `"]}`, 10 * time.Minute, 600 * time.Second, true},
		{"tenant 60 s beats receiver 10 min", `{"publicKeys":["` + keyAPublic + `"],"toleranceSeconds":60}`, 10 * time.Minute, 61 * time.Second, false},
		{"tenant 3600 s beats receiver default", `{"publicKeys":["` + keyAPublic + `"],"toleranceSeconds":3600}`, 0, -3600 * time.Second, true},
		{"tenant 3600 s, one more second", `{"publicKeys":["` + keyAPublic + `"],"toleranceSeconds":3600}`, 0, -3601 * time.Second, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts, err := tenants.Parse(tenantsDoc(tc.section))
			if err != nil {
				t.Fatal(err)
			}
			tn, _ := ts.Tenant("t1")
			s, _ := tn.Settings(standard.Name)
			p, err := s.Parser(provider.ParserOptions{Tolerance: tc.receiver})
			if err != nil {
				t.Fatal(err)
			}
			_, err = p.Parse(t.Context(), &webhook.Request{Method: http.MethodPost, Header: h, Body: body,
				Now: time.Unix(1767225600, 0).Add(tc.late)})
			if tc.ok != (err == nil) {
				t.Fatalf("got %v, want ok = %v", err, tc.ok)
			}
		})
	}
}

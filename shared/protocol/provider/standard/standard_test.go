package standard_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/base/webhook/webhooktest"
	"github.com/hookwall/hookwall/shared/protocol/provider/standard"
)

// swCase is one case of shared/vectors/standardwebhooks.json.
type swCase struct {
	Name             string            `json:"name"`
	Secret           string            `json:"secret"`
	Headers          map[string]string `json:"headers"`
	Body             string            `json:"body"`
	Now              int64             `json:"now"`
	ToleranceSeconds int64             `json:"toleranceSeconds"`
	Valid            bool              `json:"valid"`
	LenientOK        bool              `json:"lenientOk"`
	FailureReason    string            `json:"failureReason"`
	ExpectedDedupKey string            `json:"expectedDedupKey"`
}

func loadCases(t testing.TB) []swCase {
	t.Helper()
	path := filepath.Join(webhooktest.VectorsDir(t), "standardwebhooks.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read Standard Webhooks vectors: %v", err)
	}
	var file struct {
		Cases []swCase `json:"cases"`
	}
	if err := json.Unmarshal(data, &file); err != nil {
		t.Fatalf("decode %s: %v", path, err)
	}
	if len(file.Cases) == 0 {
		t.Fatalf("%s has no cases", path)
	}
	return file.Cases
}

func caseNamed(t testing.TB, name string) swCase {
	t.Helper()
	for _, c := range loadCases(t) {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("standardwebhooks.json has no case %q", name)
	return swCase{}
}

// request builds the POST of c.
func request(c swCase) *webhook.Request {
	h := http.Header{}
	for k, v := range c.Headers {
		h.Set(k, v)
	}
	return &webhook.Request{
		Method:   http.MethodPost,
		Provider: standard.Name,
		Tenant:   "acme",
		Header:   h,
		Body:     []byte(c.Body),
		Now:      time.Unix(c.Now, 0),
	}
}

func mustNew(t testing.TB, secrets ...string) *standard.Parser {
	t.Helper()
	p, err := standard.New(standard.Config{Secrets: secrets})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return p
}

// sign returns the v1 signature of id.ts.body under the whsec_ secret.
func sign(t testing.TB, secret, id, ts string, body []byte) string {
	t.Helper()
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		t.Fatalf("decode secret: %v", err)
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id + "." + ts + "."))
	m.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(m.Sum(nil))
}

func TestVectors(t *testing.T) {
	for _, c := range loadCases(t) {
		t.Run(c.Name, func(t *testing.T) {
			p, err := standard.New(standard.Config{
				Secrets:   []string{c.Secret},
				Tolerance: time.Duration(c.ToleranceSeconds) * time.Second,
			})
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			d, err := p.Parse(context.Background(), request(c))
			if c.LenientOK && err == nil {
				return
			}
			if !c.Valid || c.LenientOK {
				if err == nil {
					t.Fatalf("Parse accepted a case that must be rejected (%s)", c.FailureReason)
				}
				want := webhook.ErrBadSignature
				if strings.HasPrefix(c.FailureReason, "timestamp") {
					want = webhook.ErrStaleTimestamp
				}
				if !errors.Is(err, want) {
					t.Fatalf("Parse error = %v, want %v (%s)", err, want, c.FailureReason)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if len(d.Events) != 1 {
				t.Fatalf("got %d events, want 1", len(d.Events))
			}
			ev := d.Events[0]
			if ev.DedupKey != c.ExpectedDedupKey {
				t.Errorf("DedupKey = %q, want %q", ev.DedupKey, c.ExpectedDedupKey)
			}
			sum := sha256.Sum256([]byte(c.Body))
			if ev.PayloadHash != hex.EncodeToString(sum[:]) {
				t.Errorf("PayloadHash = %s, want SHA-256 of the body", ev.PayloadHash)
			}
			if string(ev.Raw) != c.Body || !json.Valid(ev.JSON) {
				t.Errorf("Raw = %q, JSON = %q", ev.Raw, ev.JSON)
			}
			if d.Reply.Status != http.StatusOK || d.Verification {
				t.Errorf("reply %+v, verification %v", d.Reply, d.Verification)
			}
		})
	}
}

func TestEventFields(t *testing.T) {
	c := caseNamed(t, "multiple_signatures_second_matches")
	d, err := mustNew(t, c.Secret).Parse(context.Background(), request(c))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	ev := d.Events[0]
	if ev.Type != "invoice.paid" {
		t.Errorf("Type = %q, want invoice.paid", ev.Type)
	}
	if want := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC); !ev.OccurredAt.Equal(want) {
		t.Errorf("OccurredAt = %v, want %v", ev.OccurredAt, want)
	}

	spec := caseNamed(t, "spec_vector")
	d, err = mustNew(t, spec.Secret).Parse(context.Background(), request(spec))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	ev = d.Events[0]
	if ev.Type != standard.DefaultType {
		t.Errorf("Type = %q, want %q", ev.Type, standard.DefaultType)
	}
	if want := time.Unix(1614265330, 0); !ev.OccurredAt.Equal(want) {
		t.Errorf("OccurredAt = %v, want header time %v", ev.OccurredAt, want)
	}
	if string(ev.JSON) != `{"test":2432232314}` {
		t.Errorf("JSON = %s, want compacted body", ev.JSON)
	}
}

// signed returns a request for body signed with secret at ts, checked at now.
func signed(t *testing.T, secret, id string, ts, now int64, body string) *webhook.Request {
	t.Helper()
	tsS := strconv.FormatInt(ts, 10)
	return request(swCase{
		Headers: map[string]string{
			"webhook-id":        id,
			"webhook-timestamp": tsS,
			"webhook-signature": sign(t, secret, id, tsS, []byte(body)),
		},
		Body: body,
		Now:  now,
	})
}

func TestParseErrors(t *testing.T) {
	spec := caseNamed(t, "spec_vector")
	const other = "whsec_" + "c2Vjb25kIHNlY3JldCBvZiB0aGlydHkgdHdvIGJ5dGVzIQ=="
	p := mustNew(t, spec.Secret)
	mod := func(f func(r *webhook.Request)) *webhook.Request {
		r := request(spec)
		f(r)
		return r
	}
	sig := spec.Headers["webhook-signature"]
	for _, tc := range []struct {
		name string
		req  *webhook.Request
		want error
	}{
		{"GET", mod(func(r *webhook.Request) { r.Method = http.MethodGet }), webhook.ErrMethodNotAllowed},
		{"nil request", nil, webhook.ErrMalformed},
		{"missing id", mod(func(r *webhook.Request) { r.Header.Del("webhook-id") }), webhook.ErrBadSignature},
		{"missing timestamp", mod(func(r *webhook.Request) { r.Header.Del("webhook-timestamp") }), webhook.ErrBadSignature},
		{"missing signature", mod(func(r *webhook.Request) { r.Header.Del("webhook-signature") }), webhook.ErrBadSignature},
		{"non-integer timestamp", mod(func(r *webhook.Request) { r.Header.Set("webhook-timestamp", "1614265330.0") }), webhook.ErrBadSignature},
		{"other id", mod(func(r *webhook.Request) { r.Header.Set("webhook-id", "msg_other") }), webhook.ErrBadSignature},
		{"only v1a", mod(func(r *webhook.Request) { r.Header.Set("webhook-signature", "v1a,"+strings.TrimPrefix(sig, "v1,")) }), webhook.ErrBadSignature},
		{"v2 entry", mod(func(r *webhook.Request) { r.Header.Set("webhook-signature", "v2,"+strings.TrimPrefix(sig, "v1,")) }), webhook.ErrBadSignature},
		{"no comma", mod(func(r *webhook.Request) { r.Header.Set("webhook-signature", strings.Replace(sig, ",", "", 1)) }), webhook.ErrBadSignature},
		{"unpadded base64", mod(func(r *webhook.Request) { r.Header.Set("webhook-signature", strings.TrimSuffix(sig, "=")) }), webhook.ErrBadSignature},
		{"URL-safe base64", mod(func(r *webhook.Request) { r.Header.Set("webhook-signature", strings.ReplaceAll(sig, "+", "-")) }), webhook.ErrBadSignature},
		{"signed with another secret", signed(t, other, "msg_1", 1614265330, 1614265330, `{}`), webhook.ErrBadSignature},
		{"older than tolerance", signed(t, spec.Secret, "msg_1", 1614265330, 1614265330+301, `{}`), webhook.ErrStaleTimestamp},
		{"newer than tolerance", signed(t, spec.Secret, "msg_1", 1614265330+301, 1614265330, `{}`), webhook.ErrStaleTimestamp},
		{"far future", signed(t, spec.Secret, "msg_1", 1<<62, 1614265330, `{}`), webhook.ErrStaleTimestamp},
		{"far past", signed(t, spec.Secret, "msg_1", -1<<62, 1614265330, `{}`), webhook.ErrStaleTimestamp},
		{"body not JSON", signed(t, spec.Secret, "msg_1", 1614265330, 1614265330, `not json`), webhook.ErrMalformed},
		{"empty body", signed(t, spec.Secret, "msg_1", 1614265330, 1614265330, ``), webhook.ErrMalformed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := p.Parse(context.Background(), tc.req)
			if !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
		})
	}
}

func TestParseAccepts(t *testing.T) {
	spec := caseNamed(t, "spec_vector")
	const other = "whsec_" + "c2Vjb25kIHNlY3JldCBvZiB0aGlydHkgdHdvIGJ5dGVzIQ=="
	sig := spec.Headers["webhook-signature"]
	withSig := func(v string) *webhook.Request {
		r := request(spec)
		r.Header.Set("webhook-signature", v)
		return r
	}
	for _, tc := range []struct {
		name    string
		secrets []string
		req     *webhook.Request
	}{
		{"v1a entries ignored without public keys", []string{spec.Secret}, withSig("v1a,AAAA " + sig)},
		{"malformed entries ignored", []string{spec.Secret}, withSig("garbage v1, ,v1 v1,short  " + sig + " v2,x")},
		{"second configured secret", []string{other, spec.Secret}, request(spec)},
		{"invalid secret skipped", []string{"whsec_!!!", spec.Secret}, request(spec)},
		{"secret without whsec_ prefix", []string{strings.TrimPrefix(spec.Secret, "whsec_")}, request(spec)},
		{"exactly at the tolerance", []string{spec.Secret}, signed(t, spec.Secret, "msg_1", 1614265330, 1614265330+300, `{}`)},
		{"future within tolerance", []string{spec.Secret}, signed(t, spec.Secret, "msg_1", 1614265330+300, 1614265330, `{}`)},
		{"non-object JSON body", []string{spec.Secret}, signed(t, spec.Secret, "msg_1", 1614265330, 1614265330, `[1,"a"]`)},
		{"non-string type", []string{spec.Secret}, signed(t, spec.Secret, "msg_1", 1614265330, 1614265330, `{"type":7,"timestamp":"x"}`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := mustNew(t, tc.secrets...).Parse(context.Background(), tc.req)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if len(d.Events) != 1 || d.Events[0].Type == "" {
				t.Fatalf("got %+v", d.Events)
			}
		})
	}
}

func TestNew(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  standard.Config
	}{
		{"no secrets", standard.Config{}},
		{"only invalid secrets", standard.Config{Secrets: []string{"whsec_!!!", "", "whsec_"}}},
		{"negative tolerance", standard.Config{Secrets: []string{"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}, Tolerance: -time.Second}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := standard.New(tc.cfg); err == nil {
				t.Fatal("got nil error")
			}
		})
	}
}

func TestDefaultTolerance(t *testing.T) {
	c := caseNamed(t, "spec_vector")
	p := mustNew(t, c.Secret) // Tolerance 0
	for _, tc := range []struct {
		delta int64
		ok    bool
	}{{300, true}, {-300, true}, {301, false}, {-301, false}} {
		r := request(c)
		r.Now = time.Unix(c.Now+tc.delta, 0)
		_, err := p.Parse(context.Background(), r)
		if tc.ok != (err == nil) || (!tc.ok && !errors.Is(err, webhook.ErrStaleTimestamp)) {
			t.Errorf("now = ts%+d: got %v, want ok = %v", tc.delta, err, tc.ok)
		}
	}
}

func TestSignIsVerifiedByParse(t *testing.T) {
	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	// The published vector: Sign must reproduce it exactly.
	got, err := standard.Sign(secret, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, []byte(`{"test": 2432232314}`))
	if err != nil || got != "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=" {
		t.Fatalf("Sign = %q, %v", got, err)
	}
	if _, err := standard.Sign("whsec_!!!", "id", 1, nil); err == nil {
		t.Fatal("invalid secret: want an error")
	}
}

package line_test

import (
	"bytes"
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
	"slices"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/base/webhook/webhooktest"
	"github.com/hookwall/hookwall/shared/protocol/provider/line"
)

// lineCase is one case of shared/vectors/line.json.
type lineCase struct {
	Name                          string   `json:"name"`
	ChannelSecret                 string   `json:"channelSecret"`
	Body                          string   `json:"body"`
	BodyBase64                    string   `json:"bodyBase64"`
	BodySha256Hex                 string   `json:"bodySha256Hex"`
	SignatureHeader               string   `json:"signatureHeader"`
	Valid                         bool     `json:"valid"`
	LenientOK                     bool     `json:"lenientOk"`
	FailureReason                 string   `json:"failureReason"`
	ExpectedEventIDs              []string `json:"expectedEventIds"`
	ExpectedIsVerificationRequest bool     `json:"expectedIsVerificationRequest"`
}

// loadCases reads every case of line.json, failing the test if it cannot.
func loadCases(t testing.TB) []lineCase {
	t.Helper()
	path := filepath.Join(webhooktest.VectorsDir(t), "line.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read LINE vectors: %v", err)
	}
	var file struct {
		Cases []lineCase `json:"cases"`
	}
	if err := json.Unmarshal(data, &file); err != nil {
		t.Fatalf("decode %s: %v", path, err)
	}
	if len(file.Cases) == 0 {
		t.Fatalf("%s has no cases", path)
	}
	return file.Cases
}

// caseNamed returns the case called name.
func caseNamed(t testing.TB, name string) lineCase {
	t.Helper()
	for _, c := range loadCases(t) {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("line.json has no case %q", name)
	return lineCase{}
}

// sign returns the X-Line-Signature for body under secret.
func sign(secret string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// post builds a POST request carrying body and the signature header.
func post(body []byte, sig string) *webhook.Request {
	h := http.Header{}
	h.Set("x-line-signature", sig)
	return &webhook.Request{
		Method:   http.MethodPost,
		Provider: line.Name,
		Tenant:   "acme",
		Header:   h,
		Body:     body,
		Now:      time.Unix(1735689600, 0),
	}
}

func mustNew(t testing.TB, secret string) *line.Parser {
	t.Helper()
	p, err := line.New(line.Config{ChannelSecret: secret})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return p
}

func TestVectors(t *testing.T) {
	for _, c := range loadCases(t) {
		t.Run(c.Name, func(t *testing.T) {
			body := []byte(c.Body)
			if c.BodyBase64 != "" {
				b, err := base64.StdEncoding.DecodeString(c.BodyBase64)
				if err != nil || !bytes.Equal(b, body) {
					t.Fatalf("bodyBase64 does not decode to body (err %v)", err)
				}
			}
			if c.BodySha256Hex != "" {
				if sum := sha256.Sum256(body); hex.EncodeToString(sum[:]) != c.BodySha256Hex {
					t.Fatalf("body SHA-256 differs from bodySha256Hex")
				}
			}
			p := mustNew(t, c.ChannelSecret)
			d, err := p.Parse(context.Background(), post(body, c.SignatureHeader))
			if c.LenientOK && err == nil {
				t.Logf("lenient case accepted")
				return
			}
			if !c.Valid || c.LenientOK {
				if err == nil {
					t.Fatalf("Parse accepted a case that must be rejected (%s)", c.FailureReason)
				}
				if !errors.Is(err, webhook.ErrBadSignature) {
					t.Fatalf("Parse error = %v, want ErrBadSignature", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			var ids []string
			for _, ev := range d.Events {
				ids = append(ids, ev.DedupKey)
			}
			if !slices.Equal(ids, c.ExpectedEventIDs) {
				t.Errorf("event ids = %q, want %q", ids, c.ExpectedEventIDs)
			}
			if d.Verification != c.ExpectedIsVerificationRequest {
				t.Errorf("Verification = %v, want %v", d.Verification, c.ExpectedIsVerificationRequest)
			}
			if d.Reply.Status != http.StatusOK {
				t.Errorf("reply status = %d, want 200", d.Reply.Status)
			}
			for i, ev := range d.Events {
				if ev.Type == "" || len(ev.PayloadHash) != 64 || ev.OccurredAt.IsZero() {
					t.Errorf("event %d: incomplete: type %q hash %q occurredAt %v", i, ev.Type, ev.PayloadHash, ev.OccurredAt)
				}
				if !bytes.Contains(body, ev.Raw) || !json.Valid(ev.JSON) {
					t.Errorf("event %d: Raw is not a slice of the body or JSON is invalid", i)
				}
			}
		})
	}
}

// redeliver returns body with every "isRedelivery":false flipped to true.
func redeliver(t *testing.T, body []byte) []byte {
	t.Helper()
	out := bytes.ReplaceAll(body, []byte(`"isRedelivery":false`), []byte(`"isRedelivery":true`))
	if bytes.Equal(out, body) {
		t.Fatalf("body has no isRedelivery:false to flip")
	}
	return out
}

func TestRedeliveryCollidesWithOriginal(t *testing.T) {
	orig := caseNamed(t, "single_text_message")
	redelivered := redeliver(t, []byte(orig.Body))
	redeliveredSig := sign(orig.ChannelSecret, redelivered)
	for _, c := range loadCases(t) {
		if c.Name == "redelivery_of_single_text_message" { // prefer the vector when it exists
			redelivered, redeliveredSig = []byte(c.Body), c.SignatureHeader
		}
	}
	p := mustNew(t, orig.ChannelSecret)
	d1, err := p.Parse(context.Background(), post([]byte(orig.Body), orig.SignatureHeader))
	if err != nil {
		t.Fatalf("Parse original: %v", err)
	}
	d2, err := p.Parse(context.Background(), post(redelivered, redeliveredSig))
	if err != nil {
		t.Fatalf("Parse redelivery: %v", err)
	}
	if len(d1.Events) != 1 || len(d2.Events) != 1 {
		t.Fatalf("got %d and %d events, want 1 and 1", len(d1.Events), len(d2.Events))
	}
	a, b := d1.Events[0], d2.Events[0]
	if a.DedupKey != b.DedupKey {
		t.Errorf("dedup keys differ: %q vs %q", a.DedupKey, b.DedupKey)
	}
	if a.PayloadHash != b.PayloadHash {
		t.Errorf("payload hashes differ: %s vs %s", a.PayloadHash, b.PayloadHash)
	}
	if bytes.Equal(a.Raw, b.Raw) {
		t.Errorf("Raw should keep the redelivery flag as received")
	}
}

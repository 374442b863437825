package standard

import (
	"crypto/rand"
	"encoding/base32"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/hookwall/hookwall/shared/provider"
	"github.com/hookwall/hookwall/shared/webhook"
)

// Name is Standard Webhooks' route name: /webhooks/standard/{tenant}.
const Name = "standard"

func init() {
	provider.Register[Settings](provider.Provider{
		Name:         Name,
		Label:        "Standard Webhooks",
		Docs:         "https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md",
		Signature:    "webhook-id, webhook-timestamp, webhook-signature (the tenant's first secret)",
		DedupKey:     "the webhook-id header",
		Reply:        webhook.Reply{Status: http.StatusOK, ContentType: "text/plain; charset=utf-8"},
		AnswerWithin: 15 * time.Second,
		Demo: provider.Demo{
			Settings: map[string][]string{"secrets": {"whsec_gaTG2ftU1oeRGcKSkQLETLLJ3aPA+Hbw"}},
			ID:       func(tag string, n uint64) string { return fmt.Sprintf("msg_%s_%07d", tag, n) },
			Body:     demoBody,
			// Senders back off exponentially (compressed).
			Retry: provider.Retry{Policy: "standard exponential", Waits: []time.Duration{500 * time.Millisecond,
				time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second}},
		},
	})
}

// Settings is a tenant's Standard Webhooks secrets: its "standard" section
// of the tenants document. Several during a rotation; any may match.
// Secrets are Base64, with or without the "whsec_" prefix, padding
// optional, whitespace ignored (see [DecodeSecret]). RawSecrets are keys
// used as they are (their UTF-8 bytes), as the libraries' raw constructors
// take.
type Settings struct {
	Secrets    []provider.Secret `json:"secrets,omitempty"`
	RawSecrets []provider.Secret `json:"rawSecrets,omitempty"`
}

// Validate reports no secret at all, and every secret that is unusable.
func (s *Settings) Validate() []provider.Problem {
	var ps []provider.Problem
	if len(s.Secrets) == 0 && len(s.RawSecrets) == 0 {
		ps = append(ps, provider.Problem{Field: "secrets", Why: "at least one secret (or rawSecrets entry) required"})
	}
	for i, sec := range s.Secrets {
		if _, err := DecodeSecret(sec.Reveal()); err != nil {
			ps = append(ps, provider.Problem{Field: fmt.Sprintf("secrets[%d]", i), Why: `must be Base64 ("whsec_" prefix optional)`})
		}
	}
	for i, sec := range s.RawSecrets {
		if sec == "" {
			ps = append(ps, provider.Problem{Field: fmt.Sprintf("rawSecrets[%d]", i), Why: "must not be empty"})
		}
	}
	return ps
}

// Parser returns the tenant's [Parser]. Standard Webhooks always checks its
// timestamp (the specification's replay defence): a negative tolerance
// means the default.
func (s *Settings) Parser(opts provider.ParserOptions) (webhook.Parser, error) {
	secrets := make([]string, len(s.Secrets))
	for i, sec := range s.Secrets {
		secrets[i] = sec.Reveal()
	}
	raw := make([][]byte, len(s.RawSecrets))
	for i, sec := range s.RawSecrets {
		raw[i] = []byte(sec.Reveal())
	}
	return New(Config{Secrets: secrets, RawSecrets: raw, Tolerance: max(opts.Tolerance, 0)})
}

// Sign returns the POST of the JSON body signed with the first secret, with
// webhook-id opts.MessageID (default "msg_" and a random id) and
// webhook-timestamp opts.Now.
func (s *Settings) Sign(body []byte, opts provider.SignOptions) (*provider.Request, error) {
	if !json.Valid(body) {
		return nil, fmt.Errorf("a Standard Webhooks body is JSON: %w", provider.ErrBadBody)
	}
	var secret string
	switch {
	case len(s.Secrets) > 0:
		secret = s.Secrets[0].Reveal()
	case len(s.RawSecrets) > 0: // a raw key, as its Base64 spelling
		secret = base64.StdEncoding.EncodeToString([]byte(s.RawSecrets[0].Reveal()))
	default:
		return nil, fmt.Errorf("no standard secret: %w", provider.ErrNotConfigured)
	}
	id := opts.MessageID
	if id == "" {
		rid, err := randomID(opts.Random)
		if err != nil {
			return nil, err
		}
		id = "msg_" + rid
	}
	sig, err := Sign(secret, id, opts.Now.Unix(), body)
	if err != nil {
		return nil, fmt.Errorf("standard secret: %w", err)
	}
	r := provider.NewRequest(http.MethodPost)
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set(IDHeader, id)
	r.Header.Set(TimestampHeader, strconv.FormatInt(opts.Now.Unix(), 10))
	r.Header.Set(SignatureHeader, sig)
	r.Body = body
	return r, nil
}

// randomID returns 26 characters of Base32 (A–Z, 2–7) of 16 bytes read
// from random (crypto/rand when nil).
func randomID(random io.Reader) (string, error) {
	if random == nil {
		random = rand.Reader
	}
	var b [16]byte
	if _, err := io.ReadFull(random, b[:]); err != nil {
		return "", fmt.Errorf("standard: random id: %w", err)
	}
	return base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b[:]), nil
}

// demoBody returns an order.paid event whose order id is the first id.
func demoBody(ids []string, at time.Time, _ bool) []byte {
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	return []byte(`{"type":"order.paid","timestamp":` + q(at.UTC().Format(time.RFC3339)) +
		`,"data":{"orderId":` + q(ids[0]) + `,"amount":4200}}`)
}

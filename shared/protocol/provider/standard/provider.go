package standard

import (
	"crypto/rand"
	"encoding/base32"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/protocol/provider"
)

// Name is Standard Webhooks' route name: /webhooks/standard/{tenant}.
const Name = "standard"

// Provider returns the provider (its line in shared/protocol/providers).
func Provider() *provider.Provider {
	return provider.New[Settings](provider.Provider{
		Name:         Name,
		Label:        "Standard Webhooks",
		Docs:         "https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md",
		Signature:    "webhook-id, webhook-timestamp, webhook-signature (v1: the tenant's first secret; v1a: its signingKey)",
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

// Bounds of a tenant's toleranceSeconds (see [Settings]). Senders sign
// each attempt when they send it (the specification renews
// webhook-timestamp on every retry), so the window only covers transit and
// clock skew, and a replay inside it is a duplicate of its webhook-id
// anyway: a narrower window buys little. Below MinToleranceSeconds a
// receiver cold start plus an unsynchronised clock would refuse genuine
// deliveries (each refusal costs the sender a retry); above
// MaxToleranceSeconds the window no longer covers skew but a sender that
// does not re-sign its retries, which the specification does not allow.
const (
	MinToleranceSeconds = 30
	MaxToleranceSeconds = 3600
)

// Settings is a tenant's Standard Webhooks keys: its "standard" section of
// the tenants document. Any configured key may verify a delivery: a v1
// (HMAC) entry of webhook-signature against Secrets and RawSecrets, a v1a
// (Ed25519) entry against PublicKeys and the public key of SigningKey.
// Several keys allow rotation. Secrets are Base64, with or without the
// "whsec_" prefix, padding optional, whitespace ignored (see
// [DecodeSecret]). RawSecrets are keys used as they are (their UTF-8
// bytes), as the libraries' raw constructors take.
type Settings struct {
	Secrets    []provider.Secret `json:"secrets,omitempty"`
	RawSecrets []provider.Secret `json:"rawSecrets,omitempty"`
	// PublicKeys are "whpk_" keys (see [DecodePublicKey]): the sender's
	// Ed25519 public keys. They are not secret.
	PublicKeys []string `json:"publicKeys,omitempty"`
	// SigningKey is a "whsk_" key (see [DecodeSigningKey]): what `hookwall
	// sign`, the local runner and tests sign v1a entries with. Its public
	// key verifies too. Receivers of a real sender need only PublicKeys.
	SigningKey provider.Secret `json:"signingKey,omitempty"`
	// ToleranceSeconds is this tenant's timestamp window: how far
	// webhook-timestamp may be from the receiver's clock, in seconds, from
	// MinToleranceSeconds to MaxToleranceSeconds. Unset: the receiver's
	// (HOOKWALL_TIMESTAMP_TOLERANCE, default [DefaultTolerance]).
	ToleranceSeconds *int `json:"toleranceSeconds,omitempty"`
}

// Validate reports no key at all, every key that is unusable, and a
// tolerance out of bounds. Each problem names the field, never the key.
func (s *Settings) Validate() []provider.Problem {
	var ps provider.Problems
	if len(s.Secrets) == 0 && len(s.RawSecrets) == 0 && len(s.PublicKeys) == 0 && s.SigningKey == "" {
		ps.Add("secrets", "at least one secret (or rawSecrets, publicKeys or signingKey entry) required")
	}
	for i, sec := range s.Secrets {
		if _, err := DecodeSecret(sec.Reveal()); err != nil {
			ps.Add(fmt.Sprintf("secrets[%d]", i), misplaced(sec.Reveal(), secretPrefix, `must be Base64 ("whsec_" prefix optional)`))
		}
	}
	for i, sec := range s.RawSecrets {
		if sec == "" {
			ps.Add(fmt.Sprintf("rawSecrets[%d]", i), "must not be empty")
		}
	}
	for i, k := range s.PublicKeys {
		if _, err := DecodePublicKey(k); err != nil {
			ps.Add(fmt.Sprintf("publicKeys[%d]", i), misplaced(k, publicKeyPrefix, err.Error()))
		}
	}
	if s.SigningKey != "" {
		if _, err := DecodeSigningKey(s.SigningKey.Reveal()); err != nil {
			ps.Add("signingKey", misplaced(s.SigningKey.Reveal(), signingKeyPrefix, err.Error()))
		}
	}
	if t := s.ToleranceSeconds; t != nil && (*t < MinToleranceSeconds || *t > MaxToleranceSeconds) {
		ps.Add("toleranceSeconds", fmt.Sprintf("must be from %d to %d (seconds; unset: the receiver's HOOKWALL_TIMESTAMP_TOLERANCE, default %d)",
			MinToleranceSeconds, MaxToleranceSeconds, int(DefaultTolerance/time.Second)))
	}
	return ps
}

// misplaced returns why key, found in the field for keys with prefix, is
// unusable: the field it belongs in when it carries another kind's prefix,
// else why.
func misplaced(key, prefix, why string) string {
	key = strings.TrimLeft(key, " \t\r\n")
	for _, k := range []struct{ prefix, what, field string }{
		{secretPrefix, "a whsec_ secret", "secrets"},
		{publicKeyPrefix, "a whpk_ public key", "publicKeys"},
		{signingKeyPrefix, "a whsk_ signing key", "signingKey"},
	} {
		if k.prefix != prefix && strings.HasPrefix(key, k.prefix) {
			return "is " + k.what + ": it belongs in " + k.field
		}
	}
	return why
}

// Parser returns the tenant's [Parser]. Standard Webhooks always checks its
// timestamp (the specification's replay defence): the window is the
// tenant's ToleranceSeconds if set, else opts.Tolerance, where zero or
// negative means the default.
func (s *Settings) Parser(opts provider.ParserOptions) (webhook.Parser, error) {
	secrets := make([]string, len(s.Secrets))
	for i, sec := range s.Secrets {
		secrets[i] = sec.Reveal()
	}
	raw := make([][]byte, len(s.RawSecrets))
	for i, sec := range s.RawSecrets {
		raw[i] = []byte(sec.Reveal())
	}
	pubs := slices.Clone(s.PublicKeys)
	if s.SigningKey != "" {
		pub, err := PublicKeyOf(s.SigningKey.Reveal())
		if err != nil {
			return nil, fmt.Errorf("standard: signingKey: %w", err)
		}
		pubs = append(pubs, pub)
	}
	tolerance := max(opts.Tolerance, 0)
	if s.ToleranceSeconds != nil {
		tolerance = time.Duration(*s.ToleranceSeconds) * time.Second
	}
	return New(Config{Secrets: secrets, RawSecrets: raw, PublicKeys: pubs, Tolerance: tolerance})
}

// Sign returns the POST of the JSON body signed with the first secret (a
// v1 entry) and with SigningKey (a v1a entry), whichever are configured,
// both in one webhook-signature header as the specification's example
// shows; with webhook-id opts.MessageID (default "msg_" and a random id)
// and webhook-timestamp opts.Now. Settings with only public keys cannot
// sign ([provider.ErrNotConfigured]).
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
	case s.SigningKey == "":
		return nil, fmt.Errorf("no standard secret or signingKey (public keys verify, they cannot sign): %w", provider.ErrNotConfigured)
	}
	id := opts.MessageID
	if id == "" {
		rid, err := randomID(opts.Random)
		if err != nil {
			return nil, err
		}
		id = "msg_" + rid
	}
	var entries []string
	if secret != "" {
		sig, err := Sign(secret, id, opts.Now.Unix(), body)
		if err != nil {
			return nil, fmt.Errorf("standard secret: %w", err)
		}
		entries = append(entries, sig)
	}
	if s.SigningKey != "" {
		sig, err := SignAsymmetric(s.SigningKey.Reveal(), id, opts.Now.Unix(), body)
		if err != nil {
			return nil, err
		}
		entries = append(entries, sig)
	}
	r := provider.NewRequest(http.MethodPost)
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set(IDHeader, id)
	r.Header.Set(TimestampHeader, strconv.FormatInt(opts.Now.Unix(), 10))
	r.Header.Set(SignatureHeader, strings.Join(entries, " "))
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

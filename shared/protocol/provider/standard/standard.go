package standard

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/hookwall/hookwall/shared/base/webhook"
)

// Header names of the Standard Webhooks specification. Lookups are
// case-insensitive.
const (
	IDHeader        = "Webhook-Id"
	TimestampHeader = "Webhook-Timestamp"
	SignatureHeader = "Webhook-Signature"
)

// DefaultTolerance is the accepted distance between the webhook-timestamp
// and the verifier's clock when Config.Tolerance is zero; the reference
// libraries use five minutes in both directions.
const DefaultTolerance = 5 * time.Minute

// DefaultType is the event Type when the body has no string "type" member.
const DefaultType = "webhook"

// MaxIDBytes is the longest webhook-id accepted, in bytes:
// [webhook.MaxDedupKeyBytes], the bound on every dedup key. The specification
// sets none; senders' ids ("msg_" and a KSUID for Svix) are far shorter.
const MaxIDBytes = webhook.MaxDedupKeyBytes

// secretPrefix marks a symmetric Standard Webhooks secret.
const secretPrefix = "whsec_"

// Config is one tenant's Standard Webhooks configuration.
type Config struct {
	// Secrets are the signing secrets in the serialised form of the
	// specification, "whsec_" followed by the standard Base64 of the key, or
	// any other spelling of it that the reference libraries read as the same
	// key (see [DecodeSecret]): without the prefix, without or with partial
	// padding, with whitespace. Several secrets allow rotation. Entries that
	// do not decode are skipped; at least one secret (here or in RawSecrets)
	// must be usable.
	Secrets []string
	// RawSecrets are signing keys used as they are, not Base64-decoded: the
	// keys the reference libraries take through their raw constructors
	// (NewWebhookRaw in Go, {format: "raw"} in JavaScript, the byte-array
	// constructors in Java and C#, fromRaw in PHP, new_using_raw_bytes in
	// Ruby, from_bytes in Rust, and secrets without the whsec_ prefix in
	// Elixir). Empty entries are skipped.
	RawSecrets [][]byte
	// PublicKeys are the Ed25519 keys that verify v1a (asymmetric)
	// signatures, as "whpk_" keys (see [DecodePublicKey]). Several allow
	// rotation. Entries that do not decode are skipped. A public key never
	// verifies a v1 (HMAC) entry: it is no secret.
	PublicKeys []string
	// Tolerance bounds |now - webhook-timestamp|. Zero means
	// DefaultTolerance; negative is an error.
	Tolerance time.Duration
}

// Parser verifies and parses the Standard Webhooks deliveries of one tenant.
// It implements [webhook.Parser] and is safe for concurrent use.
type Parser struct {
	keys      [][]byte            // HMAC keys, for v1 entries
	pubs      []ed25519.PublicKey // Ed25519 keys, for v1a entries
	tolerance time.Duration
}

// New returns a Parser for c. It decodes the secrets and public keys and
// fails if none of them (in Secrets, RawSecrets and PublicKeys) is usable
// or the tolerance is negative.
func New(c Config) (*Parser, error) {
	if c.Tolerance < 0 {
		return nil, errors.New("standard: negative tolerance")
	}
	p := &Parser{tolerance: c.Tolerance}
	if p.tolerance == 0 {
		p.tolerance = DefaultTolerance
	}
	for _, s := range c.Secrets {
		if key, err := DecodeSecret(s); err == nil {
			p.keys = append(p.keys, key)
		}
	}
	for _, key := range c.RawSecrets {
		if len(key) > 0 {
			p.keys = append(p.keys, bytes.Clone(key))
		}
	}
	for _, s := range c.PublicKeys {
		if pub, err := DecodePublicKey(s); err == nil {
			p.pubs = append(p.pubs, pub)
		}
	}
	if len(p.keys) == 0 && len(p.pubs) == 0 {
		return nil, errors.New("standard: no valid secret or public key")
	}
	return p, nil
}

// DecodeSecret returns the key of a symmetric secret: "whsec_" followed by
// the standard Base64 of the key, as the specification serialises it, or any
// spelling the reference libraries (github.com/standard-webhooks/standard-webhooks
// libraries/*, github.com/svix/svix-webhooks) decode to the same key:
//
//   - the "whsec_" prefix is optional (every library strips it if present);
//   - padding may be absent, and the '=' at the end need not be the right
//     number (Python appends "==" and ignores excess; Java, JavaScript,
//     Ruby and PHP accept unpadded keys);
//   - spaces, tabs, carriage returns and line feeds are ignored wherever they
//     are (Go ignores CR and LF; C#, Python, Ruby and PHP all four);
//   - unused low bits in the last character are ignored (all but Rust).
//
// The URL-safe alphabet ('-', '_') is refused: Go, Java, JavaScript, Rust and
// C# reject it while Python, Ruby and PHP silently drop those characters and
// so derive another key. So is '=' other than at the end, and a key that
// decodes to nothing.
func DecodeSecret(secret string) ([]byte, error) {
	s := strings.Map(func(r rune) rune {
		switch r {
		case ' ', '\t', '\r', '\n':
			return -1
		}
		return r
	}, secret)
	s = strings.TrimPrefix(s, secretPrefix)
	key, err := base64.RawStdEncoding.DecodeString(strings.TrimRight(s, "="))
	if err != nil {
		return nil, errors.New("standard: secret is not standard Base64 (with or without whsec_)")
	}
	if len(key) == 0 {
		return nil, errors.New("standard: empty secret")
	}
	return key, nil
}

// Parse verifies req and returns its single event. The signature is checked
// first (any v1 entry against any secret, in constant time; any of the
// first [MaxV1aEntries] v1a entries against any public key), then the
// timestamp window against req.Now (the current time if req.Now is zero).
//
// The event's DedupKey is webhook-id; Type is the body's string "type"
// member if the body is a JSON object that has one, else [DefaultType];
// OccurredAt is the body's RFC 3339 "timestamp" member if present and valid,
// else the header timestamp. Raw is the body (it shares memory with
// req.Body), JSON the body compacted, and PayloadHash the hex SHA-256 of the
// body: retries carry the same body.
//
// Once the signature and the timestamp have been checked, a webhook-id longer
// than [MaxIDBytes], not valid UTF-8 or holding a control character, and a
// body that is not valid UTF-8 (RFC 8259 §8.1) or not JSON, are rejected
// with [webhook.ErrMalformed].
//
// Errors wrap [webhook.ErrMethodNotAllowed] (not a POST),
// [webhook.ErrBadSignature] (missing headers, non-integer timestamp, no
// matching signature), [webhook.ErrStaleTimestamp] or [webhook.ErrMalformed].
func (p *Parser) Parse(ctx context.Context, req *webhook.Request) (*webhook.Delivery, error) {
	if err := webhook.CheckPost(Name, req); err != nil {
		return nil, err
	}
	id := req.Header.Get(IDHeader)
	tsHeader := req.Header.Get(TimestampHeader)
	sigHeader := req.Header.Get(SignatureHeader)
	switch {
	case id == "":
		return nil, fmt.Errorf("standard: missing webhook-id: %w", webhook.ErrBadSignature)
	case tsHeader == "":
		return nil, fmt.Errorf("standard: missing webhook-timestamp: %w", webhook.ErrBadSignature)
	case sigHeader == "":
		return nil, fmt.Errorf("standard: missing webhook-signature: %w", webhook.ErrBadSignature)
	}
	ts, err := strconv.ParseInt(tsHeader, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("standard: webhook-timestamp is not an integer: %w", webhook.ErrBadSignature)
	}
	if !p.signatureMatches(id, tsHeader, req.Body, sigHeader) && !v1aMatches(p.pubs, id, tsHeader, req.Body, sigHeader) {
		return nil, fmt.Errorf("standard: no matching signature (%s): %w", p.schemes(), webhook.ErrBadSignature)
	}
	now := req.Now
	if now.IsZero() {
		now = time.Now()
	}
	tol := int64(p.tolerance / time.Second)
	switch nowSec := now.Unix(); {
	case ts < nowSec-tol:
		return nil, fmt.Errorf("standard: timestamp too old: %w", webhook.ErrStaleTimestamp)
	case ts > nowSec+tol:
		return nil, fmt.Errorf("standard: timestamp too new: %w", webhook.ErrStaleTimestamp)
	}

	if err := checkID(id); err != nil {
		return nil, fmt.Errorf("standard: webhook-id %w: %w", err, webhook.ErrMalformed)
	}
	ev, err := event(id, ts, req.Body)
	if err != nil {
		return nil, err
	}
	return &webhook.Delivery{
		Events: []webhook.Event{ev},
		Reply:  webhook.Reply{Status: http.StatusOK, ContentType: "text/plain; charset=utf-8"},
	}, nil
}

// checkID checks the webhook-id, the dedup key: at most MaxIDBytes, valid
// UTF-8, no control characters.
func checkID(id string) error {
	if len(id) > MaxIDBytes {
		return fmt.Errorf("longer than %d bytes", MaxIDBytes)
	}
	if !utf8.ValidString(id) {
		return errors.New("is not valid UTF-8")
	}
	if strings.ContainsFunc(id, unicode.IsControl) {
		return errors.New("holds a control character")
	}
	return nil
}

// schemes names the signature versions p verifies, for its errors.
func (p *Parser) schemes() string {
	switch {
	case len(p.keys) == 0:
		return "v1a"
	case len(p.pubs) == 0:
		return "v1"
	}
	return "v1 or v1a"
}

// signatureMatches reports whether any v1 entry of header is the signature
// of id.ts.body under any key. Every key's MAC is computed and every v1 entry
// compared, whatever matched before.
func (p *Parser) signatureMatches(id, ts string, body []byte, header string) bool {
	const sigLen = 44 // standard Base64 of 32 bytes
	match := 0
	for _, key := range p.keys {
		want := signature(key, id, ts, body)
		for rest := header; rest != ""; {
			var entry string
			entry, rest, _ = strings.Cut(rest, " ")
			version, sig, ok := strings.Cut(entry, ",")
			if !ok || version != "v1" || len(sig) != sigLen {
				continue
			}
			match |= subtle.ConstantTimeCompare(want[:], []byte(sig))
		}
	}
	return match == 1
}

// signature is the base64 HMAC-SHA256 of "id.ts.body" under key.
func signature(key []byte, id, ts string, body []byte) [44]byte {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id))
	mac.Write([]byte{'.'})
	mac.Write([]byte(ts))
	mac.Write([]byte{'.'})
	mac.Write(body)
	var sum [sha256.Size]byte
	var out [44]byte
	base64.StdEncoding.Encode(out[:], mac.Sum(sum[:0]))
	return out
}

// Sign returns the webhook-signature header value ("v1,<base64>") for a
// message with webhook-id id and webhook-timestamp ts (unix seconds), signed
// with secret ("whsec_" + base64, or another spelling [DecodeSecret]
// accepts). Hookwall uses it to sign what it forwards, so that receivers can
// verify Hookwall itself.
func Sign(secret, id string, ts int64, body []byte) (string, error) {
	key, err := DecodeSecret(secret)
	if err != nil {
		return "", err
	}
	sig := signature(key, id, strconv.FormatInt(ts, 10), body)
	return "v1," + string(sig[:]), nil
}

// event builds the delivery's event from the verified body.
func event(id string, ts int64, body []byte) (webhook.Event, error) {
	if !utf8.Valid(body) {
		return webhook.Event{}, fmt.Errorf("standard: body is not valid UTF-8: %w", webhook.ErrMalformed)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, body); err != nil {
		return webhook.Event{}, fmt.Errorf("standard: body is not JSON: %w", webhook.ErrMalformed)
	}
	ev := webhook.Event{
		DedupKey:   id,
		Type:       DefaultType,
		OccurredAt: time.Unix(ts, 0).UTC(),
		Raw:        body,
		JSON:       compact.Bytes(),
	}
	if c := compact.Bytes(); len(c) > 0 && c[0] == '{' {
		var head struct {
			Type      json.RawMessage `json:"type"`
			Timestamp json.RawMessage `json:"timestamp"`
		}
		if err := json.Unmarshal(c, &head); err != nil {
			return webhook.Event{}, fmt.Errorf("standard: body is not JSON: %w", webhook.ErrMalformed)
		}
		var s string
		if json.Unmarshal(head.Type, &s) == nil && s != "" {
			ev.Type = s
		}
		s = ""
		if json.Unmarshal(head.Timestamp, &s) == nil {
			if t, err := time.Parse(time.RFC3339, s); err == nil {
				ev.OccurredAt = t.UTC()
			}
		}
	}
	sum := sha256.Sum256(body)
	ev.PayloadHash = hex.EncodeToString(sum[:])
	return ev, nil
}

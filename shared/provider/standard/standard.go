package standard

import (
	"bytes"
	"context"
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

	"github.com/hookwall/hookwall/shared/webhook"
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

// secretPrefix marks a symmetric Standard Webhooks secret.
const secretPrefix = "whsec_"

// Config is one tenant's Standard Webhooks configuration.
type Config struct {
	// Secrets are the signing secrets, "whsec_" followed by Base64 (the
	// prefix may be omitted). Several secrets allow rotation. Entries that do
	// not decode are skipped; at least one must decode.
	Secrets []string
	// Tolerance bounds |now - webhook-timestamp|. Zero means
	// DefaultTolerance; negative is an error.
	Tolerance time.Duration
}

// Parser verifies and parses the Standard Webhooks deliveries of one tenant.
// It implements [webhook.Parser] and is safe for concurrent use.
type Parser struct {
	keys      [][]byte
	tolerance time.Duration
}

// New returns a Parser for c. It decodes the secrets and fails if none of
// them is valid or the tolerance is negative.
func New(c Config) (*Parser, error) {
	if c.Tolerance < 0 {
		return nil, errors.New("standard: negative tolerance")
	}
	p := &Parser{tolerance: c.Tolerance}
	if p.tolerance == 0 {
		p.tolerance = DefaultTolerance
	}
	for _, s := range c.Secrets {
		if key, ok := decodeSecret(s); ok {
			p.keys = append(p.keys, key)
		}
	}
	if len(p.keys) == 0 {
		return nil, errors.New("standard: no valid secret")
	}
	return p, nil
}

// decodeSecret strips the whsec_ prefix, as the reference libraries do, and
// decodes the standard Base64 (padding optional) that remains.
func decodeSecret(s string) ([]byte, bool) {
	s = strings.TrimPrefix(s, secretPrefix)
	key, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		key, err = base64.RawStdEncoding.DecodeString(s)
	}
	return key, err == nil && len(key) > 0
}

// Parse verifies req and returns its single event. The signature is checked
// first (any v1 entry against any secret, in constant time), then the
// timestamp window against req.Now (the current time if req.Now is zero).
//
// The event's DedupKey is webhook-id; Type is the body's string "type"
// member if the body is a JSON object that has one, else [DefaultType];
// OccurredAt is the body's RFC 3339 "timestamp" member if present and valid,
// else the header timestamp. Raw is the body (it shares memory with
// req.Body), JSON the body compacted, and PayloadHash the hex SHA-256 of the
// body: retries carry the same body.
//
// Errors wrap [webhook.ErrMethodNotAllowed] (not a POST),
// [webhook.ErrBadSignature] (missing headers, non-integer timestamp, no
// matching signature), [webhook.ErrStaleTimestamp] or [webhook.ErrMalformed]
// (the body is not JSON).
func (p *Parser) Parse(ctx context.Context, req *webhook.Request) (*webhook.Delivery, error) {
	if req == nil {
		return nil, fmt.Errorf("standard: nil request: %w", webhook.ErrMalformed)
	}
	if req.Method != http.MethodPost {
		return nil, fmt.Errorf("standard: method %q: %w", req.Method, webhook.ErrMethodNotAllowed)
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
	if !p.signatureMatches(id, tsHeader, req.Body, sigHeader) {
		return nil, fmt.Errorf("standard: no matching v1 signature: %w", webhook.ErrBadSignature)
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

	ev, err := event(id, ts, req.Body)
	if err != nil {
		return nil, err
	}
	return &webhook.Delivery{
		Events: []webhook.Event{ev},
		Reply:  webhook.Reply{Status: http.StatusOK, ContentType: "text/plain; charset=utf-8"},
	}, nil
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
// with secret ("whsec_" + base64). Hookwall uses it to sign what it forwards,
// so that receivers can verify Hookwall itself.
func Sign(secret, id string, ts int64, body []byte) (string, error) {
	key, ok := decodeSecret(secret)
	if !ok {
		return "", errors.New("standard: invalid secret")
	}
	sig := signature(key, id, strconv.FormatInt(ts, 10), body)
	return "v1," + string(sig[:]), nil
}

// event builds the delivery's event from the verified body.
func event(id string, ts int64, body []byte) (webhook.Event, error) {
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

package slack

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hookwall/hookwall/shared/base/webhook"
)

// Header names of Slack's requests. Lookups are case-insensitive.
const (
	SignatureHeader   = "X-Slack-Signature"
	TimestampHeader   = "X-Slack-Request-Timestamp"
	RetryNumHeader    = "X-Slack-Retry-Num"
	RetryReasonHeader = "X-Slack-Retry-Reason"
)

// Version is the signature version: the prefix of the signed string and of
// the signature ("v0=").
const Version = "v0"

// DefaultTolerance is the accepted distance between the request timestamp
// and the verifier's clock: the five minutes Slack documents.
const DefaultTolerance = 5 * time.Minute

// MaxChallengeBytes bounds the url_verification challenge the receiver
// echoes (Slack's are about 50 characters).
const MaxChallengeBytes = 1024

// Body types of the Events API.
const (
	TypeEventCallback   = "event_callback"
	TypeURLVerification = "url_verification"
	TypeAppRateLimited  = "app_rate_limited"
)

// Config is one tenant's Slack app configuration.
type Config struct {
	// SigningSecret is the app's signing secret (Basic Information → App
	// Credentials). Its UTF-8 bytes are the HMAC key. Required.
	SigningSecret string
	// Tolerance bounds |now - X-Slack-Request-Timestamp|. Zero or negative
	// means DefaultTolerance: Slack's requests are always checked against
	// replays.
	Tolerance time.Duration
}

// Parser verifies and parses the Events API deliveries of one Slack app.
// It implements [webhook.Parser] and is safe for concurrent use.
type Parser struct {
	secret    []byte
	tolerance time.Duration
}

var _ webhook.Parser = (*Parser)(nil)

// New returns a Parser for c.
func New(c Config) (*Parser, error) {
	if c.SigningSecret == "" {
		return nil, errors.New("slack: signing secret is required")
	}
	tol := c.Tolerance
	if tol <= 0 {
		tol = DefaultTolerance
	}
	return &Parser{secret: []byte(c.SigningSecret), tolerance: tol}, nil
}

// okReply is the answer to a delivery: any 2xx within 3 seconds; the body
// is not read.
func okReply() webhook.Reply {
	return webhook.Reply{Status: http.StatusOK, ContentType: "text/plain; charset=utf-8"}
}

// Signature returns the X-Slack-Signature value of body sent at timestamp
// ts (unix seconds, as in X-Slack-Request-Timestamp) under secret:
// "v0=" + hex(HMAC-SHA256(secret, "v0:" + ts + ":" + body)).
func Signature(secret, ts string, body []byte) string {
	return Version + "=" + hex.EncodeToString(sum(hmac.New(sha256.New, []byte(secret)), ts, body))
}

// sum writes the signed string into mac and returns the MAC.
func sum(mac hash.Hash, ts string, body []byte) []byte {
	mac.Write([]byte(Version + ":" + ts + ":"))
	mac.Write(body)
	return mac.Sum(nil)
}

// Retry returns the retry marks of req: X-Slack-Retry-Num and
// X-Slack-Retry-Reason. ok is false for a first delivery (or a malformed
// number). The marks are not signed: they are for logs and tests, never
// for decisions.
func Retry(req *webhook.Request) (num int, reason string, ok bool) {
	n, err := strconv.Atoi(req.Header.Get(RetryNumHeader))
	if err != nil || n < 1 {
		return 0, "", false
	}
	return n, req.Header.Get(RetryReasonHeader), true
}

// envelope is what the parser reads of a body.
type envelope struct {
	Type      string          `json:"type"`
	Challenge *string         `json:"challenge"`
	EventID   *string         `json:"event_id"`
	EventTime json.Number     `json:"event_time"`
	Event     json.RawMessage `json:"event"`
}

// Parse verifies req and returns its one event, or the answer to a
// url_verification or app_rate_limited body (see the package
// documentation).
//
// The event's DedupKey is event_id; Type is the inner event's type;
// OccurredAt is event_time (unix seconds; a larger number is read as
// milliseconds or microseconds, as some of Slack's examples write it; zero
// if absent); Raw is the body (it shares memory with req.Body), JSON the
// body compacted without the legacy verification token (every top-level
// member named token, in any case: a tenant secret, never stored), and
// PayloadHash the hex SHA-256 of JSON: a retry carries the same body.
//
// Once the signature and the timestamp have been checked, a body that is
// not valid UTF-8 or not a JSON object, an unknown type, an event_callback
// without an event_id or an event type, and a url_verification without a
// challenge are rejected with [webhook.ErrMalformed], and so are an
// event_id longer than [webhook.MaxDedupKeyBytes], an event type longer than
// [webhook.MaxTypeBytes] and a challenge longer than [MaxChallengeBytes], or
// any of them empty or holding what [webhook.CheckID] refuses (invalid UTF-8,
// a control character).
//
// Errors wrap [webhook.ErrMethodNotAllowed] (not a POST),
// [webhook.ErrBadSignature] (missing or malformed headers, no match),
// [webhook.ErrStaleTimestamp] or [webhook.ErrMalformed].
func (p *Parser) Parse(ctx context.Context, req *webhook.Request) (*webhook.Delivery, error) {
	if err := webhook.CheckPost(Name, req); err != nil {
		return nil, err
	}
	if err := p.verify(req); err != nil {
		return nil, err
	}
	if !utf8.Valid(req.Body) {
		return nil, fmt.Errorf("slack: body is not valid UTF-8: %w", webhook.ErrMalformed)
	}
	var env envelope
	dec := json.NewDecoder(bytes.NewReader(req.Body))
	dec.UseNumber()
	if err := dec.Decode(&env); err != nil || dec.More() {
		return nil, fmt.Errorf("slack: body is not a JSON object: %w", webhook.ErrMalformed)
	}
	switch env.Type {
	case TypeURLVerification:
		if env.Challenge == nil {
			return nil, fmt.Errorf("slack: url_verification without a challenge: %w", webhook.ErrMalformed)
		}
		if err := webhook.CheckID("url_verification challenge", *env.Challenge, MaxChallengeBytes); err != nil {
			return nil, fmt.Errorf("slack: %w", err)
		}
		return &webhook.Delivery{Verification: true, Reply: webhook.EchoReply(*env.Challenge)}, nil
	case TypeAppRateLimited:
		return &webhook.Delivery{Verification: true, Reply: okReply()}, nil
	case TypeEventCallback:
		ev, err := event(&env, req.Body)
		if err != nil {
			return nil, err
		}
		return &webhook.Delivery{Events: []webhook.Event{ev}, Reply: okReply()}, nil
	}
	return nil, fmt.Errorf("slack: body type %.40q is not an Events API delivery: %w", env.Type, webhook.ErrMalformed)
}

// verify checks the signature over the exact body, then the timestamp window.
func (p *Parser) verify(req *webhook.Request) error {
	ts, sig := req.Header.Get(TimestampHeader), req.Header.Get(SignatureHeader)
	if ts == "" || sig == "" {
		return fmt.Errorf("slack: missing %s or %s: %w", SignatureHeader, TimestampHeader, webhook.ErrBadSignature)
	}
	unix, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || len(ts) > 12 {
		return fmt.Errorf("slack: %s is not unix seconds: %w", TimestampHeader, webhook.ErrBadSignature)
	}
	got, err := hex.DecodeString(sig[min(len(sig), len(Version)+1):])
	if len(sig) < len(Version)+1 || sig[:len(Version)+1] != Version+"=" || err != nil {
		return fmt.Errorf("slack: %s is not %s=<hex>: %w", SignatureHeader, Version, webhook.ErrBadSignature)
	}
	if !hmac.Equal(got, sum(hmac.New(sha256.New, p.secret), ts, req.Body)) {
		return fmt.Errorf("slack: signature does not match: %w", webhook.ErrBadSignature)
	}
	now := req.Now
	if now.IsZero() {
		now = time.Now()
	}
	if d := now.Sub(time.Unix(unix, 0)); d > p.tolerance || d < -p.tolerance {
		return fmt.Errorf("slack: request timestamp %s from now, over %s: %w", d.Round(time.Second), p.tolerance, webhook.ErrStaleTimestamp)
	}
	return nil
}

// event builds the event of a verified event_callback body.
func event(env *envelope, body []byte) (webhook.Event, error) {
	if env.EventID == nil {
		return webhook.Event{}, fmt.Errorf("slack: event_callback without an event_id: %w", webhook.ErrMalformed)
	}
	if err := webhook.CheckID("event_callback event_id", *env.EventID, webhook.MaxDedupKeyBytes); err != nil {
		return webhook.Event{}, fmt.Errorf("slack: %w", err)
	}
	var inner struct {
		Type string `json:"type"`
	}
	if len(env.Event) == 0 || env.Event[0] != '{' || json.Unmarshal(env.Event, &inner) != nil ||
		webhook.CheckID("event type", inner.Type, webhook.MaxTypeBytes) != nil {
		return webhook.Event{}, fmt.Errorf("slack: event_callback without an event object and its type: %w", webhook.ErrMalformed)
	}
	compact, err := withoutToken(body)
	if err != nil {
		return webhook.Event{}, fmt.Errorf("slack: body: %w", webhook.ErrMalformed)
	}
	h := sha256.Sum256(compact)
	return webhook.Event{
		DedupKey:    *env.EventID,
		Type:        inner.Type,
		OccurredAt:  eventTime(env.EventTime),
		Raw:         body,
		JSON:        compact,
		PayloadHash: hex.EncodeToString(h[:]),
	}, nil
}

// withoutToken returns body, a JSON object, compacted and without its
// top-level members named token in any case ("token", "Token", ...):
// Slack's legacy verification token, a tenant secret that is never stored
// nor forwarded. The other members keep their order and their values
// their bytes, less insignificant space.
func withoutToken(body []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	out.WriteByte('{')
	first := true
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		if strings.EqualFold(key, "token") {
			continue
		}
		if !first {
			out.WriteByte(',')
		}
		first = false
		if err := enc.Encode(key); err != nil {
			return nil, err
		}
		out.Truncate(out.Len() - 1) // Encode's newline
		out.WriteByte(':')
		if err := json.Compact(&out, v); err != nil {
			return nil, err
		}
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('}') {
		return nil, errors.New("not a JSON object")
	}
	out.WriteByte('}')
	return out.Bytes(), nil
}

// eventTime reads event_time: unix seconds, or (above 1e11, a date after
// the year 5000) milliseconds, or (above 1e14) microseconds, as in Slack's
// app_mention example. Zero if absent, not an integer, or not positive.
func eventTime(n json.Number) time.Time {
	v, err := n.Int64()
	switch {
	case err != nil || v <= 0:
		return time.Time{}
	case v > 1e14:
		return time.UnixMicro(v)
	case v > 1e11:
		return time.UnixMilli(v)
	}
	return time.Unix(v, 0)
}

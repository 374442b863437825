package feishu

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hookwall/hookwall/shared/base/webhook"
)

// Request types of the "type" member outside schema 2.0.
const (
	typeURLVerification = "url_verification"
	typeEventCallback   = "event_callback"
)

// v1KeyPrefix prefixes the dedup key of a schema 1.0 event (its uuid), so
// that it never meets a schema 2.0 event_id.
const v1KeyPrefix = "v1:"

// message is an authenticated body, classified.
type message struct {
	challenge      bool
	challengeValue string
	v2             bool
	id, typ        string
	occurredAt     time.Time
}

// wire is the part of a body that classifies it: schema 2.0, schema 1.0 or
// url_verification. Times are taken as strings or numbers.
type wire struct {
	Schema    *string `json:"schema"`
	Type      string  `json:"type"`
	Challenge *string `json:"challenge"`
	Header    *struct {
		EventID    string          `json:"event_id"`
		EventType  string          `json:"event_type"`
		CreateTime json.RawMessage `json:"create_time"`
	} `json:"header"`
	UUID  string          `json:"uuid"`
	TS    json.RawMessage `json:"ts"`
	Event *struct {
		Type string `json:"type"`
	} `json:"event"`
}

// parseMessage classifies an authenticated body. Errors wrap
// [webhook.ErrMalformed].
func parseMessage(plain []byte) (*message, error) {
	if !utf8.Valid(plain) {
		return nil, fmt.Errorf("feishu: body is not valid UTF-8: %w", webhook.ErrMalformed)
	}
	var w wire
	if err := json.Unmarshal(plain, &w); err != nil {
		return nil, fmt.Errorf("feishu: body is not an event object: %w", webhook.ErrMalformed)
	}
	switch {
	case w.Schema != nil:
		if *w.Schema != "2.0" {
			return nil, fmt.Errorf("feishu: schema %.10q: %w", *w.Schema, webhook.ErrMalformed)
		}
		if w.Header == nil {
			return nil, fmt.Errorf("feishu: schema 2.0 body without header: %w", webhook.ErrMalformed)
		}
		m := &message{v2: true, id: w.Header.EventID, typ: w.Header.EventType}
		if ms, ok := integer(w.Header.CreateTime); ok {
			m.occurredAt = time.UnixMilli(ms).UTC()
		}
		if err := m.check("header.event_id", "header.event_type"); err != nil {
			return nil, err
		}
		return m, nil
	case w.Type == typeURLVerification:
		if w.Challenge == nil || *w.Challenge == "" {
			return nil, fmt.Errorf("feishu: url_verification without challenge: %w", webhook.ErrMalformed)
		}
		return &message{challenge: true, challengeValue: *w.Challenge}, nil
	case w.Type == typeEventCallback:
		if w.Event == nil {
			return nil, fmt.Errorf("feishu: event_callback without event: %w", webhook.ErrMalformed)
		}
		m := &message{typ: w.Event.Type}
		if w.UUID != "" {
			m.id = v1KeyPrefix + w.UUID
		}
		m.occurredAt = v1Time(w.TS)
		if err := m.check("uuid", "event.type"); err != nil {
			return nil, err
		}
		return m, nil
	}
	return nil, fmt.Errorf("feishu: body is neither schema 2.0, event_callback nor url_verification: %w", webhook.ErrMalformed)
}

// check checks the event's dedup key and type, named idName and typeName.
func (m *message) check(idName, typeName string) error {
	if err := webhook.CheckID(idName, m.id, webhook.MaxDedupKeyBytes); err != nil {
		return fmt.Errorf("feishu: %w", err)
	}
	if err := webhook.CheckID(typeName, m.typ, webhook.MaxTypeBytes); err != nil {
		return fmt.Errorf("feishu: %w", err)
	}
	return nil
}

// event builds the event of an authenticated, classified body.
func (m *message) event(plain []byte) (*webhook.Event, error) {
	canon, err := canonical(plain)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(canon)
	return &webhook.Event{
		DedupKey:    m.id,
		Type:        m.typ,
		OccurredAt:  m.occurredAt,
		Raw:         plain,
		JSON:        canon,
		PayloadHash: hex.EncodeToString(sum[:]),
	}, nil
}

// canonical returns the body in canonical JSON (object keys sorted, no
// insignificant space, numbers as written, no HTML escaping) without its
// verification token.
func canonical(plain []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(plain))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("feishu: body is not a JSON object: %w", webhook.ErrMalformed)
	}
	dropToken(doc)
	for k, v := range doc {
		if h, ok := v.(map[string]any); ok && strings.EqualFold(k, "header") {
			dropToken(h)
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return nil, fmt.Errorf("feishu: encode event: %w", webhook.ErrMalformed)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// dropToken removes from obj every member the token check could have read
// the verification token from: [tokenOf] matches member names as
// encoding/json does, without regard to case ("Token", "TOKEN", and the
// Kelvin sign for k), and takes header.token whenever a "schema" member is
// present, even null, which the classification reads as schema 1.0. So
// every spelling of token is removed, at the top and in every header
// object, whatever the schema.
func dropToken(obj map[string]any) {
	for k := range obj {
		if strings.EqualFold(k, "token") {
			delete(obj, k)
		}
	}
}

// integer reads a JSON string or number holding a non-negative integer of
// at most 18 digits (header.create_time, in milliseconds).
func integer(raw json.RawMessage) (int64, bool) {
	s := strings.Trim(string(raw), `"`)
	if len(s) == 0 || len(s) > 18 || strings.Trim(s, "0123456789") != "" {
		return 0, false
	}
	v, err := strconv.ParseInt(s, 10, 64)
	return v, err == nil
}

// v1Time reads a schema 1.0 ts: Unix seconds with an optional fraction,
// as a JSON string or number ("1502199207.7171419"). It is zero if absent
// or unreadable.
func v1Time(raw json.RawMessage) time.Time {
	s := strings.Trim(string(raw), `"`)
	secs, frac, _ := strings.Cut(s, ".")
	sec, ok := integer(json.RawMessage(secs))
	if !ok || len(frac) > 9 || strings.Trim(frac, "0123456789") != "" {
		return time.Time{}
	}
	nsec, _ := strconv.ParseInt((frac + "000000000")[:9], 10, 64)
	return time.Unix(sec, nsec).UTC()
}

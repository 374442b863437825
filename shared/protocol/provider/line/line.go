package line

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
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/hookwall/hookwall/shared/base/webhook"
)

// MaxIDBytes is the longest webhookEventId accepted, in bytes of UTF-8 after
// unescaping: [webhook.MaxDedupKeyBytes], the bound on every dedup key.
// LINE's ids are 26-character ULIDs.
const MaxIDBytes = webhook.MaxDedupKeyBytes

// Config is one tenant's LINE channel configuration.
type Config struct {
	// ChannelSecret is the channel secret from the LINE Developers console.
	// Its UTF-8 bytes are the HMAC key. Required.
	ChannelSecret string
}

// Parser verifies and parses the LINE webhook deliveries of one channel. It
// implements [webhook.Parser] and is safe for concurrent use.
type Parser struct {
	secret []byte
	// mac is a keyed HMAC-SHA256 that is only ever cloned, never written,
	// so concurrent Parse calls can share it.
	mac hash.Cloner
	// macs pools keyed MACs (*macState) cloned from mac, so that a Parse
	// does not allocate one.
	macs sync.Pool
}

// New returns a Parser for the channel configured in c.
func New(c Config) (*Parser, error) {
	if c.ChannelSecret == "" {
		return nil, errors.New("line: channel secret is required")
	}
	secret := []byte(c.ChannelSecret)
	mac := hmac.New(sha256.New, secret)
	mac.Reset() // precomputes the pad states that clones start from
	p := &Parser{secret: secret}
	if cl, ok := mac.(hash.Cloner); ok {
		p.mac = cl
	}
	return p, nil
}

// okReply is LINE's expected answer: any 2xx; the body is not used.
func okReply() webhook.Reply {
	return webhook.Reply{Status: http.StatusOK, ContentType: "text/plain; charset=utf-8"}
}

// Parse verifies req's X-Line-Signature over the exact body and returns one
// [webhook.Event] per element of the body's events array, in order. A body
// with an empty events array is a URL-verification request: the Delivery has
// Verification set and no events.
//
// Each event's DedupKey is its webhookEventId and its Type is its type; both
// are required, or the whole request is rejected with
// [webhook.ErrMalformed]. So is, once the signature has been verified, a body
// that is not valid UTF-8 (RFC 8259 §8.1) or nested deeper than [MaxDepth],
// and a webhookEventId longer than [MaxIDBytes] or holding a control
// character or a lone surrogate escape (\ud800). Raw is the event object exactly as in the body and
// JSON its compact form; both may share memory with req.Body. PayloadHash is
// the hex SHA-256 of the event's canonical JSON (sorted keys, no whitespace)
// without its deliveryContext member, so a redelivery (isRedelivery true)
// hashes like the original.
//
// Errors wrap [webhook.ErrMethodNotAllowed] (not a POST),
// [webhook.ErrBadSignature] or [webhook.ErrMalformed].
func (p *Parser) Parse(ctx context.Context, req *webhook.Request) (*webhook.Delivery, error) {
	if err := webhook.CheckPost(Name, req); err != nil {
		return nil, err
	}
	m := p.getMAC()
	err := verifySum(m.mac, &m.sum, req.Body, req.Header.Get(SignatureHeader))
	p.macs.Put(m)
	if err != nil {
		return nil, err
	}
	events, err := parseBody(req.Body)
	if err != nil {
		return nil, err
	}
	if len(events) == 0 {
		return &webhook.Delivery{Verification: true, Reply: okReply()}, nil
	}
	return &webhook.Delivery{Events: events, Reply: okReply()}, nil
}

// parseState is the scratch memory of one parseBody call, pooled so that a
// call allocates only what it returns.
type parseState struct {
	s    scanner
	keys []eventKeys
	text []byte // every event's dedup key and hex hash, back to back
}

var parseStates = sync.Pool{New: func() any { return new(parseState) }}

// maxPooled bounds the scratch memory a pooled parseState keeps.
const maxPooled = 64 << 10

func (st *parseState) release() {
	s := &st.s
	if cap(s.out) > maxPooled || cap(s.tmp) > maxPooled || cap(st.text) > maxPooled || cap(s.key) > maxPooled ||
		cap(s.mem) > maxPooled/16 || cap(s.srt) > maxPooled/16 || cap(s.objs) > maxPooled/16 || cap(st.keys) > maxPooled/16 {
		return
	}
	s.b = nil // do not keep the body alive
	parseStates.Put(st)
}

// parseBody validates body and extracts its events. It returns a non-nil
// empty slice for an empty events array.
func parseBody(body []byte) ([]webhook.Event, error) {
	if len(body) > maxBody {
		return nil, fmt.Errorf("line: body of %d bytes: %w", len(body), webhook.ErrTooLarge)
	}
	if !utf8.Valid(body) {
		return nil, fmt.Errorf("line: body is not valid UTF-8: %w", webhook.ErrMalformed)
	}
	st := parseStates.Get().(*parseState)
	defer st.release()
	s := &st.s
	*s = scanner{b: body, out: s.out[:0], tmp: s.tmp[:0], mem: s.mem[:0], srt: s.srt[:0], objs: s.objs[:0], key: s.key[:0]}
	s.skipWS()
	if s.peek() != '{' {
		return nil, fmt.Errorf("line: body is not a JSON object: %w", webhook.ErrMalformed)
	}
	var events []webhook.Event
	keys, text := st.keys[:0], st.text[:0]
	defer func() { st.keys, st.text = keys, text }()
	err := s.members(1, func(key []byte, esc bool) (memberAction, error) {
		if string(s.decodeKey(key, esc)) != "events" {
			return scanValue, nil
		}
		events, keys, text = nil, keys[:0], text[:0] // a repeated member replaces the earlier one
		switch s.peek() {
		case 'n':
			return scanValue, nil // null: no events member
		case '[':
		default:
			return consumed, fmt.Errorf("line: events is not an array: %w", webhook.ErrMalformed)
		}
		events = make([]webhook.Event, 0, 4)
		return consumed, s.elements(1, func() error {
			var k eventKeys
			ev, err := s.event(len(events), &text, &k)
			if err != nil {
				return err
			}
			events = append(events, ev)
			keys = append(keys, k)
			return nil
		})
	})
	if err == nil {
		s.skipWS()
		if s.i != len(s.b) {
			err = errSyntax
		}
	}
	if err != nil {
		if errors.Is(err, webhook.ErrMalformed) {
			return nil, err
		}
		return nil, fmt.Errorf("line: %s at offset %d: %w", err.Error(), s.i, webhook.ErrMalformed)
	}
	if events == nil {
		return nil, fmt.Errorf("line: body has no events array: %w", webhook.ErrMalformed)
	}
	all := string(text) // one allocation for every key and hash
	for i, k := range keys {
		events[i].DedupKey = all[k.id0:k.id1]
		events[i].PayloadHash = all[k.id1:k.hash1]
	}
	return events, nil
}

// eventKeys locates one event's dedup key, text[id0:id1], and hex payload
// hash, text[id1:hash1], in the text parseBody accumulates.
type eventKeys struct{ id0, id1, hash1 int }

// event scans the n-th event object at s.i and builds its webhook.Event,
// appending its dedup key and payload hash to *text (located by *k).
func (s *scanner) event(n int, text *[]byte, k *eventKeys) (webhook.Event, error) {
	if s.peek() != '{' {
		return webhook.Event{}, fmt.Errorf("line: event %d is not an object: %w", n, webhook.ErrMalformed)
	}
	start := s.i
	s.canon, s.ws = true, false
	s.reset()
	defer func() { s.canon = false }()

	var (
		idLit, typeLit []byte
		idEsc, typeEsc bool
		ts             int64
		hasTS          bool
	)
	err := s.members(2, func(key []byte, esc bool) (memberAction, error) {
		var err error
		switch string(s.decodeKey(key, esc)) {
		case "webhookEventId":
			if s.peek() != '"' {
				return consumed, fmt.Errorf("line: event %d: webhookEventId is not a string: %w", n, webhook.ErrMalformed)
			}
			idLit, idEsc, err = s.stringValue()
			return consumed, err
		case "type":
			if s.peek() != '"' {
				return consumed, fmt.Errorf("line: event %d: type is not a string: %w", n, webhook.ErrMalformed)
			}
			typeLit, typeEsc, err = s.stringValue()
			return consumed, err
		case "timestamp":
			numStart := s.i
			if err := s.value(2); err != nil {
				return consumed, err
			}
			v, ok := parseInt(s.b[numStart:s.i])
			if !ok {
				return consumed, fmt.Errorf("line: event %d: timestamp is not an integer: %w", n, webhook.ErrMalformed)
			}
			ts, hasTS = v, true
			return consumed, nil
		case "deliveryContext":
			s.canon = false
			err = s.value(2)
			s.canon = true
			return omitted, err
		}
		return scanValue, nil
	})
	if err != nil {
		return webhook.Event{}, err
	}
	if idLit == nil || len(idLit) == 2 {
		return webhook.Event{}, fmt.Errorf("line: event %d: missing webhookEventId: %w", n, webhook.ErrMalformed)
	}
	if typeLit == nil || len(typeLit) == 2 {
		return webhook.Event{}, fmt.Errorf("line: event %d: missing type: %w", n, webhook.ErrMalformed)
	}
	// The id goes straight into text; on error the whole body is rejected.
	k.id0 = len(*text)
	var lossy bool
	*text, lossy = appendDecoded(*text, idLit, idEsc)
	k.id1 = len(*text)
	if err := checkID((*text)[k.id0:k.id1], lossy); err != nil {
		return webhook.Event{}, fmt.Errorf("line: event %d: webhookEventId %w: %w", n, err, webhook.ErrMalformed)
	}
	typ := s.decodeKey(typeLit, typeEsc)
	raw := s.b[start:s.i:s.i]
	compact := raw
	if s.ws {
		var buf bytes.Buffer
		buf.Grow(len(raw))
		if err := json.Compact(&buf, raw); err != nil {
			return webhook.Event{}, fmt.Errorf("line: event %d: %w", n, webhook.ErrMalformed)
		}
		compact = buf.Bytes()
	}
	sum := sha256.Sum256(s.canonical())
	*text = hex.AppendEncode(*text, sum[:])
	k.hash1 = len(*text)
	ev := webhook.Event{
		Type: eventType(typ),
		Raw:  raw,
		JSON: compact,
	}
	if hasTS {
		ev.OccurredAt = time.UnixMilli(ts).UTC()
	}
	return ev, nil
}

// decodeKey returns the value of the scanned string literal lit (esc as for
// [appendDecoded]), in scratch memory that the next call reuses.
func (s *scanner) decodeKey(lit []byte, esc bool) []byte {
	if !esc {
		return lit[1 : len(lit)-1]
	}
	s.key, _ = appendDecoded(s.key[:0], lit, true)
	return s.key
}

// checkID checks a decoded webhookEventId (lossy as reported by
// [appendDecoded]): at most MaxIDBytes, no lone surrogates or invalid UTF-8,
// no control characters.
func checkID(id []byte, lossy bool) error {
	if len(id) > MaxIDBytes {
		return fmt.Errorf("longer than %d bytes", MaxIDBytes)
	}
	if lossy || !utf8.Valid(id) {
		return errors.New("is not valid Unicode")
	}
	for _, r := range string(id) {
		if unicode.IsControl(r) {
			return errors.New("holds a control character")
		}
	}
	return nil
}

// parseInt parses a JSON number that is an integer of at most 18 digits.
func parseInt(b []byte) (int64, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var v int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	if neg {
		v = -v
	}
	return v, true
}

// eventType returns t as a string, without allocating for the event types
// of the LINE webhook schema.
func eventType(t []byte) string {
	switch string(t) {
	case "message":
		return "message"
	case "unsend":
		return "unsend"
	case "follow":
		return "follow"
	case "unfollow":
		return "unfollow"
	case "join":
		return "join"
	case "leave":
		return "leave"
	case "memberJoined":
		return "memberJoined"
	case "memberLeft":
		return "memberLeft"
	case "postback":
		return "postback"
	case "videoPlayComplete":
		return "videoPlayComplete"
	case "beacon":
		return "beacon"
	case "accountLink":
		return "accountLink"
	case "membership":
		return "membership"
	case "module":
		return "module"
	case "activated":
		return "activated"
	case "deactivated":
		return "deactivated"
	case "botSuspended":
		return "botSuspended"
	case "botResumed":
		return "botResumed"
	case "delivery":
		return "delivery"
	}
	return string(t)
}

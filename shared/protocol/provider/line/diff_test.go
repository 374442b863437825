package line_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/protocol/provider/line"
)

// This file holds a slow, simple reference parser built on encoding/json and
// a differential test and fuzz target that compare Parse with it, so that
// optimisations of the hand-written scanner cannot change any output.
//
// The reference follows the canonical form documented in scan.go: members
// sorted (stably, so duplicate keys are kept in order), strings decoded
// (lone surrogates as U+FFFD, which encoding/json does the same way) and
// re-encoded with only '"', '\\' (as \" and \\) and control characters (as
// \u00xx, lower-case hex) escaped, numbers as written. Bodies that are not
// valid UTF-8 are rejected, and so are webhookEventIds longer than
// line.MaxIDBytes or holding a control character or a lone surrogate escape
// (which refLoneSurrogate finds in the literal's own bytes). Because
// duplicate keys are kept, events are decoded with json.Decoder.Token (with
// UseNumber) into an ordered tree rather than into map[string]any.
//
// Key order: Parse compares keys in their canonical spelling followed by ':'
// (see sortMembers), which is not the order of the decoded keys when one key
// is a prefix of another and the next character sorts below '"' (' ', '!'),
// or when a key holds '"', '\\' or a control character. refKeySpelling mirrors
// Parse; TestCanonicalKeyOrder pins the difference.

// refNode is a decoded JSON value. kind is '{', '[', '"' (s is the decoded
// string, lone set if its literal holds a lone surrogate escape), '0' (a
// number; s is its literal), 't', 'f' or 'n'.
type refNode struct {
	kind byte
	s    string
	lone bool
	arr  []refNode
	obj  []refMember
}

type refMember struct {
	key string
	val refNode
}

// refDecoder is a json.Decoder over body, which it keeps to look at the
// literal of each string token.
type refDecoder struct {
	*json.Decoder
	body []byte
}

func refDecode(dec refDecoder) (refNode, error) {
	from := dec.InputOffset()
	tok, err := dec.Token()
	if err != nil {
		return refNode{}, err
	}
	n, err := refFromToken(dec, tok)
	if n.kind == '"' {
		// The token's bytes: separators and whitespace, then the literal.
		lit := dec.body[from:dec.InputOffset()]
		n.lone = refLoneSurrogate(lit[bytes.IndexByte(lit, '"'):])
	}
	return n, err
}

// refLoneSurrogate reports whether the string literal lit holds a \uXXXX
// escape of a surrogate that is not half of a high-low pair.
func refLoneSurrogate(lit []byte) bool {
	for i := 0; i < len(lit); i++ {
		if lit[i] != '\\' {
			continue
		}
		i++ // the escaped character
		if lit[i] != 'u' {
			continue
		}
		var r uint64
		fmt.Sscanf(string(lit[i+1:i+5]), "%x", &r)
		i += 4
		switch {
		case r < 0xd800 || r > 0xdfff:
		case r <= 0xdbff && i+6 < len(lit) && lit[i+1] == '\\' && lit[i+2] == 'u':
			var r2 uint64
			fmt.Sscanf(string(lit[i+3:i+7]), "%x", &r2)
			if r2 < 0xdc00 || r2 > 0xdfff {
				return true
			}
			i += 6
		default:
			return true
		}
	}
	return false
}

func refFromToken(dec refDecoder, tok json.Token) (refNode, error) {
	switch v := tok.(type) {
	case json.Delim:
		switch v {
		case '{':
			n := refNode{kind: '{'}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return n, err
				}
				key, ok := kt.(string)
				if !ok {
					return n, fmt.Errorf("key token %v", kt)
				}
				val, err := refDecode(dec)
				if err != nil {
					return n, err
				}
				n.obj = append(n.obj, refMember{key, val})
			}
			_, err := dec.Token() // '}'
			return n, err
		case '[':
			n := refNode{kind: '['}
			for dec.More() {
				val, err := refDecode(dec)
				if err != nil {
					return n, err
				}
				n.arr = append(n.arr, val)
			}
			_, err := dec.Token() // ']'
			return n, err
		}
	case string:
		return refNode{kind: '"', s: v}, nil
	case json.Number:
		return refNode{kind: '0', s: string(v)}, nil
	case bool:
		if v {
			return refNode{kind: 't'}, nil
		}
		return refNode{kind: 'f'}, nil
	case nil:
		return refNode{kind: 'n'}, nil
	}
	return refNode{}, fmt.Errorf("unexpected token %v", tok)
}

// refNest is the container nesting of n: 0 for a scalar.
func refNest(n refNode) int {
	d := 0
	for _, c := range n.arr {
		d = max(d, refNest(c))
	}
	for _, m := range n.obj {
		d = max(d, refNest(m.val))
	}
	if n.kind == '{' || n.kind == '[' {
		d++
	}
	return d
}

// refAppendString appends the canonical spelling of the decoded string v.
func refAppendString(dst []byte, v string) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c < 0x20:
			dst = fmt.Appendf(dst, `\u%04x`, c)
		default:
			dst = append(dst, c)
		}
	}
	return append(dst, '"')
}

// refKeySpelling is what Parse orders members by: the canonical spelling of
// the key followed by ':', compared bytewise.
func refKeySpelling(key string) []byte {
	return append(refAppendString(nil, key), ':')
}

func refAppendCanon(dst []byte, n refNode) []byte {
	switch n.kind {
	case '{':
		type spelled struct {
			canon []byte
			val   refNode
		}
		ms := make([]spelled, len(n.obj))
		for i, m := range n.obj {
			ms[i] = spelled{refKeySpelling(m.key), m.val}
		}
		slices.SortStableFunc(ms, func(a, b spelled) int { return bytes.Compare(a.canon, b.canon) })
		dst = append(dst, '{')
		for i, m := range ms {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, m.canon...)
			dst = refAppendCanon(dst, m.val)
		}
		return append(dst, '}')
	case '[':
		dst = append(dst, '[')
		for i, c := range n.arr {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = refAppendCanon(dst, c)
		}
		return append(dst, ']')
	case '"':
		return refAppendString(dst, n.s)
	case '0':
		return append(dst, n.s...)
	case 't':
		return append(dst, "true"...)
	case 'f':
		return append(dst, "false"...)
	}
	return append(dst, "null"...)
}

// refInt mirrors the timestamp rule: an integer literal of at most 18 digits.
func refInt(lit string) (int64, bool) {
	s := lit
	if len(s) > 0 && s[0] == '-' {
		s = s[1:]
	}
	if len(s) == 0 || len(s) > 18 {
		return 0, false
	}
	var v int64
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	if lit[0] == '-' {
		v = -v
	}
	return v, true
}

const refMaxDepth = 256

// refEvent checks one element of an events array and returns its event
// (without Raw and JSON).
func refEvent(n refNode) (webhook.Event, bool) {
	if n.kind != '{' || 1+refNest(n) > refMaxDepth {
		return webhook.Event{}, false
	}
	var (
		ev    webhook.Event
		id    refNode
		kept  = refNode{kind: '{'}
		hasTS bool
		ts    int64
	)
	for _, m := range n.obj {
		switch m.key {
		case "webhookEventId":
			if m.val.kind != '"' {
				return ev, false
			}
			id = m.val
		case "type":
			if m.val.kind != '"' {
				return ev, false
			}
			ev.Type = m.val.s
		case "timestamp":
			if m.val.kind != '0' {
				return ev, false
			}
			v, ok := refInt(m.val.s)
			if !ok {
				return ev, false
			}
			ts, hasTS = v, true
		}
		if m.key != "deliveryContext" {
			kept.obj = append(kept.obj, m)
		}
	}
	if id.s == "" || ev.Type == "" || len(id.s) > line.MaxIDBytes || id.lone || strings.ContainsFunc(id.s, unicode.IsControl) {
		return ev, false
	}
	ev.DedupKey = id.s
	if hasTS {
		ev.OccurredAt = time.UnixMilli(ts).UTC()
	}
	sum := sha256.Sum256(refAppendCanon(nil, kept))
	ev.PayloadHash = hex.EncodeToString(sum[:])
	return ev, true
}

// refParse is the reference for Parse past the signature check: the events
// of body, or false if Parse must reject it as malformed.
func refParse(body []byte) ([]webhook.Event, bool) {
	if !json.Valid(body) || !utf8.Valid(body) {
		return nil, false
	}
	dec := refDecoder{json.NewDecoder(bytes.NewReader(body)), body}
	dec.UseNumber()
	root, err := refDecode(dec)
	if err != nil {
		return nil, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, false
	}
	if root.kind != '{' {
		return nil, false
	}
	var last *refNode
	for i, m := range root.obj {
		if m.key != "events" {
			if 1+refNest(m.val) > refMaxDepth {
				return nil, false
			}
			continue
		}
		switch m.val.kind {
		case 'n':
		case '[':
			for _, e := range m.val.arr {
				if _, ok := refEvent(e); !ok {
					return nil, false
				}
			}
		default:
			return nil, false
		}
		last = &root.obj[i].val
	}
	if last == nil || last.kind != '[' {
		return nil, false
	}
	// Raw: the exact bytes of each element of the last events member.
	var top map[string]json.RawMessage
	var raws []json.RawMessage
	if json.Unmarshal(body, &top) != nil || json.Unmarshal(top["events"], &raws) != nil || len(raws) != len(last.arr) {
		return nil, false
	}
	events := make([]webhook.Event, len(raws))
	for i, e := range last.arr {
		ev, _ := refEvent(e)
		ev.Raw = raws[i]
		var buf bytes.Buffer
		if json.Compact(&buf, raws[i]) != nil {
			return nil, false
		}
		ev.JSON = buf.Bytes()
		events[i] = ev
	}
	return events, true
}

// diffParse compares p.Parse with refParse on body (signed with testSecret).
func diffParse(t *testing.T, p *line.Parser, body []byte) {
	t.Helper()
	d, err := p.Parse(context.Background(), post(body, sign(testSecret, body)))
	want, ok := refParse(body)
	if !ok {
		if err == nil {
			t.Fatalf("Parse accepted %q, which the reference rejects", body)
		}
		if !errors.Is(err, webhook.ErrMalformed) {
			t.Fatalf("Parse(%q) error %v does not wrap ErrMalformed", body, err)
		}
		return
	}
	if err != nil {
		t.Fatalf("Parse(%q): %v; the reference accepts it", body, err)
	}
	if d.Verification != (len(want) == 0) || len(d.Events) != len(want) || d.Reply.Status != http.StatusOK {
		t.Fatalf("Parse(%q) = %d events, verification %v, status %d; want %d events", body, len(d.Events), d.Verification, d.Reply.Status, len(want))
	}
	for i, ev := range d.Events {
		w := want[i]
		if ev.DedupKey != w.DedupKey || ev.Type != w.Type || !ev.OccurredAt.Equal(w.OccurredAt) ||
			ev.OccurredAt.Location() != w.OccurredAt.Location() || ev.PayloadHash != w.PayloadHash ||
			!bytes.Equal(ev.Raw, w.Raw) || !bytes.Equal(ev.JSON, w.JSON) {
			t.Fatalf("body %q event %d:\n got  id %q type %q at %v hash %s\n      raw %s\n      json %s\n want id %q type %q at %v hash %s\n      raw %s\n      json %s",
				body, i, ev.DedupKey, ev.Type, ev.OccurredAt, ev.PayloadHash, ev.Raw, ev.JSON,
				w.DedupKey, w.Type, w.OccurredAt, w.PayloadHash, w.Raw, w.JSON)
		}
	}
}

// diffSeeds are the vector bodies, the FuzzParse seeds and spellings that
// exercise the canonical form.
func diffSeeds(t testing.TB) [][]byte {
	var seeds [][]byte
	for _, c := range loadCases(t) {
		seeds = append(seeds, []byte(c.Body))
		var ind bytes.Buffer
		if json.Indent(&ind, []byte(c.Body), "", " \t") == nil {
			seeds = append(seeds, ind.Bytes())
		}
	}
	for _, s := range []string{
		`{"events":[{"webhookEventId":"A\ud83d\ude00","type":"x","deliveryContext":{},"a":{"b":[1,-2.5e3,true,null,"\u0000"]}}]}`,
		`{"events":[{"webhookEventId":"\ud800","type":"\"","timestamp":-1}],"events":[]}`,
		`{"events":[{"webhookEventId":"E","type":"t","b":1,"a":2,"a":3,"deliveryContext":1,"deliveryContext":2}]}`,
		`{"events":[{"webhookEventId":"E","type":"t","z":{"y":"\u00e9\/\b\f\n\r\t\u001f\\","x":"\xff\xfe","é":"ü","\u0022":0}}]}`,
		`{"events":[{"webhookEventId":"E","type":"t","a!":1,"a":2,"a ":3,"\"":4,"#":5,"\u0001":6,"A":7}]}`,
		`{"events":[{"webhookEventId":"E","type":"t","timestamp":-0,"n":[1E+2,0.5e-1,-0,[],{},[[{}]]]}]}`,
		`{"events":[{"webhookEventId":"E","type":"t","timestamp":1.5}]}`,
		`{"events":[{"webhookEventId":"E","type":"t","timestamp":1234567890123456789}]}`,
		`{"events":[{"webhookEventId":"E","type":"t"},{"webhookEventId":"F","type":"u","x":{"deliveryContext":1}}],"destination":"U"}`,
		`{"events":[{"webhookEventId":"E","type":"t","z":{"b":{"d":1,"c":[{"f":1,"e":2},{"h":{"j":1,"i":{}}}]},"a":{"y":1,"x":2}},"b":[{"b":1,"a":2}],"a":{"b":{"b":1,"a":1},"a":0}}]}`,
		`{"events":[{"a":{"z":{"z":{"y":1,"x":2},"a":[{"c":1,"b":{"q":1,"p":2},"a":3}]},"b":0},"type":"t","webhookEventId":"E","deliveryContext":{"b":1,"a":2}},{"webhookEventId":"F","type":"t","k":{"b":{"d":1,"c":2},"b":{"b":1,"a":2},"a":{"b":1,"a":2}}}]}`,
		"{ \"events\" : [ { \"z\" : { \"b\" : [ { \"y\" : 1 , \"x\" : 2 } ] , \"a\" : 1 } , \"webhookEventId\" : \"E\" , \"type\" : \"t\" } ] }",
		`{"events":[],"events":null}`,
		`{"events":{},"events":[]}`,
		`{"\u0065vents":[{"webhookEventId":"E","typ\u0065":"t","deliveryCont\u0065xt":5}]}`,
		"\t{ \"events\" :\n[ { \"webhookEventId\" : \"E\" , \"type\" : \"t\" } , {\"webhookEventId\":\"F\",\"type\":\"t\"} ] }\r\n",
		`{"events":[{"webhookEventId":"\ud83d\u0041\udc00\ud800\ud800\udc00","type":"\u00e9t\u00C9"}]}`,
		`{"events":[{"webhookEventId":"E","type":"\u00e9t\u00C9","x":"\ud83d\u0041\udc00\ud800\ud800\udc00\udbff\udfff\ud800"}]}`,
		`{"events":[{"webhookEventId":"\ufffd\u00e9","type":"t"}]}`,
		`{"events":[{"webhookEventId":"E\u007f","type":"t"}]}`,
		`{"events":[{"webhookEventId":"E\u0085","type":"t"}]}`,
		`{"events":[{"webhookEventId":"` + strings.Repeat("é", line.MaxIDBytes/2) + `","type":"t"}]}`,
		`{"events":[{"webhookEventId":"` + strings.Repeat("\u00e9", line.MaxIDBytes/2) + `é","type":"t"}]}`,
		"{\"events\":[{\"webhookEventId\":\"E\",\"type\":\"t\",\"x\":\"\xff\"}]}",
		"{\"events\":[],\"x\":\"\xed\xa0\x80\"}",
		`{"events":[{"webhookEventId":"E","type":"t","deep":` + string(bytes.Repeat([]byte("["), 254)) + string(bytes.Repeat([]byte("]"), 254)) + `}]}`,
		`{"events":[{"webhookEventId":"E","type":"t","deep":` + string(bytes.Repeat([]byte("["), 255)) + string(bytes.Repeat([]byte("]"), 255)) + `}]}`,
		`{"x":` + string(bytes.Repeat([]byte("["), 255)) + string(bytes.Repeat([]byte("]"), 255)) + `,"events":[]}`,
		`{"x":` + string(bytes.Repeat([]byte("["), 256)) + string(bytes.Repeat([]byte("]"), 256)) + `,"events":[]}`,
	} {
		seeds = append(seeds, []byte(s))
	}
	return seeds
}

func TestParseDifferential(t *testing.T) {
	p := mustNew(t, testSecret)
	for _, s := range diffSeeds(t) {
		diffParse(t, p, s)
	}
}

func FuzzParseDifferential(f *testing.F) {
	for _, s := range diffSeeds(f) {
		f.Add(s)
	}
	p, err := line.New(line.Config{ChannelSecret: testSecret})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		diffParse(t, p, body)
	})
}

// TestCanonicalKeyOrder pins the member order of the canonical form, which
// compares the canonical key spellings followed by ':' rather than the
// decoded keys (see the comment at the top of this file): changing it would
// change stored payload hashes.
func TestCanonicalKeyOrder(t *testing.T) {
	for _, tc := range []struct{ event, canon string }{
		{`{"a":1,"a!":2}`, `{"a!":2,"a":1}`},
		{`{"a":1,"a ":2}`, `{"a ":2,"a":1}`},
		{`{"#":1,"\"":2}`, `{"#":1,"\"":2}`},
		{`{"A":1,"\u0001":2}`, `{"A":1,"\u0001":2}`},
		{`{"b":1,"a":2,"b":0}`, `{"a":2,"b":1,"b":0}`},
	} {
		body := `{"events":[{"webhookEventId":"E","type":"t","o":` + tc.event + `}]}`
		d, err := parseSigned(t, body)
		if err != nil {
			t.Fatalf("Parse: %v", err)
		}
		sum := sha256.Sum256([]byte(`{"o":` + tc.canon + `,"type":"t","webhookEventId":"E"}`))
		if got := d.Events[0].PayloadHash; got != hex.EncodeToString(sum[:]) {
			t.Errorf("%s: hash %s is not that of %s", tc.event, got, tc.canon)
		}
	}
}

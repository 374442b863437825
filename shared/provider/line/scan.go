package line

import (
	"bytes"
	"encoding/binary"
	"errors"
	"unicode/utf16"
	"unicode/utf8"
)

// This file holds a small RFC 8259 JSON scanner. It validates a body in one
// pass without building maps or interfaces, gives the parser the spans it
// needs, and writes the canonical form that the payload hash is taken over.
//
// The canonical form of a value: no insignificant whitespace; object members
// sorted by the bytes of their canonical key spelling followed by ':' (which
// is the decoded-key order except where one key is a prefix of another and
// the next byte sorts below '"', or a key holds '"', '\\' or a control
// character; a stable sort, so duplicate keys keep their order: the order is
// part of the stored payload-hash contract, pinned by TestCanonicalKeyOrder);
// strings decoded and re-encoded with only '"', '\\' and control
// characters escaped (invalid UTF-8 and lone surrogates become U+FFFD);
// numbers, true, false and null as written. Two spellings of the same JSON
// document therefore hash the same.

// maxDepth bounds nesting so that hostile input cannot exhaust the stack.
const maxDepth = 256

var (
	errSyntax = errors.New("invalid JSON")
	errDepth  = errors.New("JSON nested too deeply")
)

// scanner walks b. If canon is set, the values it scans are appended to out in
// canonical form.
type scanner struct {
	b     []byte
	i     int
	ws    bool // insignificant whitespace seen since the flag was last cleared
	canon bool
	out   []byte
	tmp   []byte   // scratch for reordering object members
	mem   []member // stack of the members of the objects being canonicalised
}

// member locates one canonicalised object member in out: the quoted key and
// its ':' in out[k0:k1] and the value in out[k1:v1].
type member struct{ k0, k1, v1 int }

func (s *scanner) skipWS() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
			s.ws = true
		default:
			return
		}
	}
}

// peek returns the next byte, or 0 at the end.
func (s *scanner) peek() byte {
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// value scans one value at s.i (whitespace already skipped).
func (s *scanner) value(depth int) error {
	switch c := s.peek(); {
	case c == '{':
		return s.object(depth + 1)
	case c == '[':
		return s.array(depth + 1)
	case c == '"':
		_, _, err := s.stringValue()
		return err
	case c == 't':
		return s.lit("true")
	case c == 'f':
		return s.lit("false")
	case c == 'n':
		return s.lit("null")
	case c == '-' || '0' <= c && c <= '9':
		start := s.i
		if err := s.number(); err != nil {
			return err
		}
		if s.canon {
			s.out = append(s.out, s.b[start:s.i]...)
		}
		return nil
	}
	return errSyntax
}

func (s *scanner) lit(word string) error {
	if len(s.b)-s.i < len(word) || string(s.b[s.i:s.i+len(word)]) != word {
		return errSyntax
	}
	s.i += len(word)
	if s.canon {
		s.out = append(s.out, word...)
	}
	return nil
}

// object scans an object. In canonical mode it writes the members sorted.
func (s *scanner) object(depth int) error {
	return s.members(depth, nil)
}

// memberAction tells members what a visit did with a member's value.
type memberAction int

const (
	scanValue memberAction = iota // not consumed: members scans it
	consumed                      // consumed (and written, in canonical mode)
	omitted                       // consumed and left out of the canonical form
)

// members scans an object at s.i. For each member, if visit is non-nil it is
// called with the key literal (quotes included) and whether it may need
// decoding (the esc of [decodeString]), with s.i at the value, and says what
// it did with the value.
//
// In canonical mode the object is written as scanned ('{', members separated
// by ',', '}'); if its members turn out not to be in order, it is rewritten
// sorted.
func (s *scanner) members(depth int, visit func(key []byte, esc bool) (memberAction, error)) error {
	if depth > maxDepth {
		return errDepth
	}
	s.i++ // '{'
	base := len(s.mem)
	start := len(s.out)
	if s.canon {
		s.out = append(s.out, '{')
	}
	s.skipWS()
	if s.peek() == '}' {
		s.i++
		if s.canon {
			s.out = append(s.out, '}')
		}
		return nil
	}
	sorted := true
	for {
		if s.peek() != '"' {
			return errSyntax
		}
		kstart := s.i
		esc, nonASCII, err := s.str()
		if err != nil {
			return err
		}
		kend := s.i
		esc = esc || nonASCII
		s.skipWS()
		if s.peek() != ':' {
			return errSyntax
		}
		s.i++
		s.skipWS()
		sep := len(s.out)
		if s.canon && len(s.mem) > base {
			s.out = append(s.out, ',')
		}
		k0 := len(s.out)
		if s.canon {
			s.out = appendCanonString(s.out, s.b[kstart:kend], esc)
			s.out = append(s.out, ':')
		}
		k1 := len(s.out)
		act := scanValue
		if visit != nil {
			if act, err = visit(s.b[kstart:kend], esc); err != nil {
				return err
			}
		}
		if act == scanValue {
			if err := s.value(depth); err != nil {
				return err
			}
		}
		if s.canon {
			if act == omitted {
				s.out = s.out[:sep]
			} else {
				if n := len(s.mem); n > base && keyCompare(s.out[s.mem[n-1].k0:s.mem[n-1].k1], s.out[k0:k1]) > 0 {
					sorted = false
				}
				s.mem = append(s.mem, member{k0, k1, len(s.out)})
			}
		}
		s.skipWS()
		switch s.peek() {
		case ',':
			s.i++
			s.skipWS()
			continue
		case '}':
			s.i++
		default:
			return errSyntax
		}
		break
	}
	if s.canon {
		if !sorted {
			s.writeSorted(start, base)
		}
		s.out = append(s.out, '}')
	}
	s.mem = s.mem[:base]
	return nil
}

// writeSorted rewrites out[start:], which holds '{' and the members
// s.mem[base:] separated by commas, with the members in key order: keys are
// compared as written in canonical form (quotes and ':' included), a fixed
// total order, which is all a deterministic hash needs.
func (s *scanner) writeSorted(start, base int) {
	ms := s.mem[base:]
	s.tmp = append(s.tmp[:0], s.out[start:]...)
	for i := range ms {
		ms[i].k0 -= start
		ms[i].k1 -= start
		ms[i].v1 -= start
	}
	tmp := s.tmp
	// Insertion sort: objects are small, and it is stable.
	for i := 1; i < len(ms); i++ {
		for j := i; j > 0 && keyCompare(tmp[ms[j-1].k0:ms[j-1].k1], tmp[ms[j].k0:ms[j].k1]) > 0; j-- {
			ms[j-1], ms[j] = ms[j], ms[j-1]
		}
	}
	s.out = append(s.out[:start], '{')
	for i, m := range ms {
		if i > 0 {
			s.out = append(s.out, ',')
		}
		s.out = append(s.out, tmp[m.k0:m.v1]...)
	}
}

// keyCompare is bytes.Compare for member keys, which mostly differ in their
// first few bytes: it compares those inline before calling bytes.Compare.
func keyCompare(a, b []byte) int {
	n := min(len(a), len(b), 16)
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			if a[i] < b[i] {
				return -1
			}
			return 1
		}
	}
	return bytes.Compare(a[n:], b[n:])
}

// elements scans an array at s.i, calling visit (if non-nil) at each element
// with s.i at the element; visit must consume it.
func (s *scanner) elements(depth int, visit func() error) error {
	if depth > maxDepth {
		return errDepth
	}
	s.i++ // '['
	if s.canon {
		s.out = append(s.out, '[')
	}
	s.skipWS()
	if s.peek() == ']' {
		s.i++
		if s.canon {
			s.out = append(s.out, ']')
		}
		return nil
	}
	for n := 0; ; n++ {
		if n > 0 && s.canon {
			s.out = append(s.out, ',')
		}
		var err error
		if visit != nil {
			err = visit()
		} else {
			err = s.value(depth)
		}
		if err != nil {
			return err
		}
		s.skipWS()
		switch s.peek() {
		case ',':
			s.i++
			s.skipWS()
			continue
		case ']':
			s.i++
			if s.canon {
				s.out = append(s.out, ']')
			}
			return nil
		}
		return errSyntax
	}
}

func (s *scanner) array(depth int) error {
	return s.elements(depth, nil)
}

// str scans a string at s.i (the opening quote) and reports whether it
// contains escapes or bytes outside ASCII (which may be invalid UTF-8).
func (s *scanner) str() (esc, nonASCII bool, err error) {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	b := s.b
	i := s.i + 1
	for {
		// Skip eight plain ASCII bytes at a time: no quote, backslash,
		// control character or byte >= 0x80 in the word.
		for i+8 <= len(b) {
			w := binary.LittleEndian.Uint64(b[i:])
			q := w ^ (lo * '"')
			bs := w ^ (lo * '\\')
			if ((q-lo)&^q|(bs-lo)&^bs|(w-lo*0x20)&^w|w)&hi != 0 {
				break
			}
			i += 8
		}
		if i >= len(b) {
			s.i = i
			return esc, nonASCII, errSyntax
		}
		switch c := b[i]; {
		case c == '"':
			s.i = i + 1
			return esc, nonASCII, nil
		case c == '\\':
			esc = true
			if i+1 >= len(b) {
				s.i = i
				return esc, nonASCII, errSyntax
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if _, ok := hex4(b, i+2); !ok {
					s.i = i
					return esc, nonASCII, errSyntax
				}
				i += 6
			default:
				s.i = i
				return esc, nonASCII, errSyntax
			}
		case c < 0x20:
			s.i = i
			return esc, nonASCII, errSyntax
		case c >= utf8.RuneSelf:
			nonASCII = true
			i++
		default:
			i++
		}
	}
}

func (s *scanner) number() error {
	b := s.b
	i := s.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
	default:
		return errSyntax
	}
	if i < len(b) && b[i] == '.' {
		i++
		d := i
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
		if i == d {
			return errSyntax
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		d := i
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
		if i == d {
			return errSyntax
		}
	}
	s.i = i
	return nil
}

func unhex(c byte) rune {
	switch {
	case '0' <= c && c <= '9':
		return rune(c - '0')
	case 'a' <= c && c <= 'f':
		return rune(c - 'a' + 10)
	case 'A' <= c && c <= 'F':
		return rune(c - 'A' + 10)
	}
	return -1
}

// decodeString returns the value of the scanned string literal lit (with its
// quotes). esc is false if lit is known to be plain ASCII without escapes (as
// [scanner.str] reports); then, or if lit has no escapes and is valid UTF-8,
// it returns the inside of lit itself. Otherwise it decodes into a new slice,
// replacing invalid UTF-8 and lone surrogates with U+FFFD.
func decodeString(lit []byte, esc bool) []byte {
	in := lit[1 : len(lit)-1]
	if !esc || bytes.IndexByte(in, '\\') < 0 && utf8.Valid(in) {
		return in
	}
	out := make([]byte, 0, len(in))
	for i := 0; i < len(in); {
		c := in[i]
		if c != '\\' {
			if c < utf8.RuneSelf {
				out = append(out, c)
				i++
				continue
			}
			r, n := utf8.DecodeRune(in[i:])
			out = utf8.AppendRune(out, r) // RuneError for invalid bytes
			i += n
			continue
		}
		if i+1 >= len(in) {
			break // unreachable for scanned literals
		}
		switch e := in[i+1]; e {
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := hex4(in, i+2)
			if !ok {
				return out // unreachable for scanned literals
			}
			i += 6
			if utf16.IsSurrogate(r) {
				if r2, ok := hex4(in, i+2); ok && i+1 < len(in) && in[i] == '\\' && in[i+1] == 'u' {
					if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
						out = utf8.AppendRune(out, d)
						i += 6
						continue
					}
				}
				r = utf8.RuneError
			}
			out = utf8.AppendRune(out, r)
			continue
		default: // '"', '\\', '/'
			out = append(out, e)
		}
		i += 2
	}
	return out
}

// hex4 decodes the four hex digits at in[i:i+4].
func hex4(in []byte, i int) (rune, bool) {
	if i < 0 || i+4 > len(in) {
		return 0, false
	}
	var r rune
	for _, c := range in[i : i+4] {
		h := unhex(c)
		if h < 0 {
			return 0, false
		}
		r = r<<4 | h
	}
	return r, true
}

// appendCanonString appends the canonical spelling of the string literal lit.
// esc is as for [decodeString].
func appendCanonString(dst, lit []byte, esc bool) []byte {
	if in := lit[1 : len(lit)-1]; !esc || bytes.IndexByte(in, '\\') < 0 && utf8.Valid(in) {
		return append(dst, lit...) // already canonical
	}
	v := decodeString(lit, esc)
	const hexDigits = "0123456789abcdef"
	dst = append(dst, '"')
	for _, c := range v {
		switch {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c < 0x20:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		default:
			dst = append(dst, c)
		}
	}
	return append(dst, '"')
}

// stringValue scans the string at s.i, writing it in canonical mode, and
// returns its literal and whether it may need decoding (see [decodeString]).
func (s *scanner) stringValue() (lit []byte, esc bool, err error) {
	start := s.i
	esc, nonASCII, err := s.str()
	if err != nil {
		return nil, false, err
	}
	esc = esc || nonASCII
	lit = s.b[start:s.i]
	if s.canon {
		s.out = appendCanonString(s.out, lit, esc)
	}
	return lit, esc, nil
}

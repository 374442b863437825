package line

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"slices"
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
// characters escaped (lone surrogate escapes become U+FFFD; invalid UTF-8 is
// rejected before scanning); numbers, true, false and null as written. Two
// spellings of the same JSON document therefore hash the same.
//
// Cost: the body is scanned once and the canonical form written once in
// source order (out). An object found out of order is not rewritten in
// place: its members are sorted (O(m log m), stable by source position) into
// srt, and when the event ends the canonical form is assembled once from
// out, following the sorted member lists (see [scanner.canonical]). So an
// event costs O(n log n) time, however its objects nest, and its scratch
// memory is a small multiple of its size: out and tmp at most three times
// the event (a 2-byte escape such as \b becomes a 6-byte \u0008), and 12
// bytes per member (a member takes at least 5 bytes of body) in each of mem
// and srt.

// MaxDepth is the deepest nesting of objects and arrays a body may have.
// The body object is at depth 1 and each event object at depth 2 (the events
// array is not counted); any other object or array is one deeper than the
// value holding it. Deeper bodies are rejected with [webhook.ErrMalformed]
// before they can exhaust the stack or the canonicaliser.
const MaxDepth = 256

// maxBody bounds the body Parse scans, so that offsets into the canonical
// form (at most three times the body) fit in an int32. Far above any LINE
// delivery (the receiver's own limit is 1 MiB by default).
const maxBody = 1 << 28

var (
	errSyntax = errors.New("invalid JSON")
	errDepth  = errors.New("JSON nested too deeply")
)

// scanner walks b. If canon is set, the values it scans are appended to out in
// canonical form, except that the members of each object stay in source
// order; [scanner.canonical] then puts them in key order.
type scanner struct {
	b     []byte
	i     int
	ws    bool // insignificant whitespace seen since the flag was last cleared
	canon bool
	out   []byte
	tmp   []byte      // the canonical form, when some object was out of order
	mem   []member    // stack of the members of the objects being canonicalised
	srt   []member    // the members of the out-of-order objects, each run sorted
	objs  []reordered // the out-of-order objects
	key   []byte      // scratch for decoding keys
}

// member locates one canonicalised object member in out: the quoted key and
// its ':' in out[k0:k1] and the value in out[k1:v1].
type member struct{ k0, k1, v1 int32 }

// reordered is an object whose members were not in key order: out[start:end]
// holds it ('{' to '}') with its members in source order, and
// srt[m0:m1] its members in key order.
type reordered struct{ start, end, m0, m1 int32 }

// reset prepares s for canonicalising the value at s.i, whose canonical
// form is usually no longer than the rest of the body.
func (s *scanner) reset() {
	s.out = slices.Grow(s.out[:0], len(s.b)-s.i)
	s.srt, s.objs = s.srt[:0], s.objs[:0]
}

// grow returns x with room for n more elements, at least doubling its
// capacity if it must grow, so that a slice built by appending allocates at
// most about twice its final size (append alone grows large slices by a
// quarter, which allocates about five times the final size).
func grow[T any](x []T, n int) []T {
	if cap(x)-len(x) >= n {
		return x
	}
	return slices.Grow(x, max(n, cap(x)))
}

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
// decoding (the esc of [appendDecoded]), with s.i at the value, and says what
// it did with the value.
//
// In canonical mode the object is written as scanned ('{', members separated
// by ',', '}'); if its members turn out not to be in order, [scanner.sortMembers]
// records their order for [scanner.canonical].
func (s *scanner) members(depth int, visit func(key []byte, esc bool) (memberAction, error)) error {
	if depth > MaxDepth {
		return errDepth
	}
	base := len(s.mem)
	start := len(s.out)
	if s.open('{', '}') {
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
				s.mem = append(grow(s.mem, 1), member{int32(k0), int32(k1), int32(len(s.out))})
			}
		}
		more, err := s.next('}')
		if err != nil {
			return err
		}
		if !more {
			break
		}
	}
	if s.canon && !sorted {
		s.sortMembers(start, base)
	}
	s.mem = s.mem[:base]
	return nil
}

// sortMembers records the object just written at out[start:], whose members
// s.mem[base:] are out of order: it appends them to srt sorted by key, keys
// compared as written in canonical form (quotes and ':' included), a fixed
// total order, which is all a deterministic hash needs. Equal keys keep
// their source order (a stable sort: the tie-break on position).
func (s *scanner) sortMembers(start, base int) {
	m0 := len(s.srt)
	s.srt = append(grow(s.srt, len(s.mem)-base), s.mem[base:]...)
	out := s.out
	slices.SortFunc(s.srt[m0:], func(a, b member) int {
		if c := keyCompare(out[a.k0:a.k1], out[b.k0:b.k1]); c != 0 {
			return c
		}
		return cmp.Compare(a.k0, b.k0)
	})
	s.objs = append(grow(s.objs, 1), reordered{int32(start), int32(len(s.out)), int32(m0), int32(len(s.srt))})
}

// canonical returns the canonical form of the value scanned since
// [scanner.reset]: out itself if every object was in order, else out
// rewritten into tmp with the members of the out-of-order objects in key
// order. Every byte of out is copied once, whatever the nesting.
func (s *scanner) canonical() []byte {
	if len(s.objs) == 0 {
		return s.out
	}
	// Objects were recorded as they closed (innermost first); the walk
	// needs them by position, which puts each object's descendants right
	// after it.
	slices.SortFunc(s.objs, func(a, b reordered) int { return cmp.Compare(a.start, b.start) })
	// The members are only reordered: the form is as long as out.
	s.tmp = s.appendSpan(slices.Grow(s.tmp[:0], len(s.out)), 0, int32(len(s.out)), 0, len(s.objs))
	return s.tmp
}

// firstObj returns the index of the first recorded object in objs[lo:hi]
// that starts at or after offset at, or hi.
func (s *scanner) firstObj(lo, hi int, at int32) int {
	i, _ := slices.BinarySearchFunc(s.objs[lo:hi], at, func(o reordered, at int32) int { return cmp.Compare(o.start, at) })
	return lo + i
}

// appendSpan appends out[a:b], a span that begins and ends outside any
// object, with the out-of-order objects in it, objs[lo:hi], written in key
// order.
func (s *scanner) appendSpan(dst []byte, a, b int32, lo, hi int) []byte {
	for i := lo; i < hi; {
		o := s.objs[i]
		next := s.firstObj(i+1, hi, o.end) // objs[i+1:next] are nested in o
		dst = append(dst, s.out[a:o.start]...)
		dst = append(dst, '{')
		for j, m := range s.srt[o.m0:o.m1] {
			if j > 0 {
				dst = append(dst, ',')
			}
			if i+1 == next {
				dst = append(dst, s.out[m.k0:m.v1]...)
				continue
			}
			mlo := s.firstObj(i+1, next, m.k1)
			dst = s.appendSpan(dst, m.k0, m.v1, mlo, s.firstObj(mlo, next, m.v1))
		}
		dst = append(dst, '}')
		a = o.end
		i = next
	}
	return append(dst, s.out[a:b]...)
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
	if depth > MaxDepth {
		return errDepth
	}
	if s.open('[', ']') {
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
		more, err := s.next(']')
		if err != nil {
			return err
		}
		if !more {
			return nil
		}
	}
}

// open reads the opening bracket at s.i (written in canonical mode) and
// the white space after it. It reports an empty container, whose closing
// bracket close it has then read (and written) too.
func (s *scanner) open(open, close byte) (empty bool) {
	s.i++
	if s.canon {
		s.out = append(s.out, open)
	}
	s.skipWS()
	if s.peek() != close {
		return false
	}
	s.i++
	if s.canon {
		s.out = append(s.out, close)
	}
	return true
}

// next reads what follows a member or an element: a ',' and the white
// space after it (more), or the closing bracket close (written in
// canonical mode).
func (s *scanner) next(close byte) (more bool, err error) {
	s.skipWS()
	switch s.peek() {
	case ',':
		s.i++
		s.skipWS()
		return true, nil
	case close:
		s.i++
		if s.canon {
			s.out = append(s.out, close)
		}
		return false, nil
	}
	return false, errSyntax
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
		i, _ = digits(b, i)
	default:
		return errSyntax
	}
	ok := true
	if i < len(b) && b[i] == '.' {
		i, ok = digits(b, i+1)
	}
	if ok && i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		i, ok = digits(b, i)
	}
	if !ok {
		return errSyntax
	}
	s.i = i
	return nil
}

// digits returns the index after the ASCII digits of b from i, and whether
// there is one at least.
func digits(b []byte, i int) (int, bool) {
	j := i
	for j < len(b) && '0' <= b[j] && b[j] <= '9' {
		j++
	}
	return j, j > i
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

// appendDecoded appends the value of the scanned string literal lit (with
// its quotes) to dst. esc is false if lit is known to be plain ASCII without
// escapes (as [scanner.str] reports). lossy reports that a lone surrogate
// escape (or invalid UTF-8, which parseBody rejects beforehand) was replaced
// with U+FFFD.
func appendDecoded(dst, lit []byte, esc bool) (out []byte, lossy bool) {
	in := lit[1 : len(lit)-1]
	if !esc {
		return append(dst, in...), false
	}
	for i := 0; i < len(in); {
		c := in[i]
		switch {
		case c == '\\':
			r, n, bad := unescape(in, i)
			dst = utf8.AppendRune(dst, r)
			lossy = lossy || bad
			i += n
		case c < utf8.RuneSelf:
			dst = append(dst, c)
			i++
		default:
			r, n := utf8.DecodeRune(in[i:])
			lossy = lossy || r == utf8.RuneError && n == 1
			dst = utf8.AppendRune(dst, r) // RuneError for invalid bytes
			i += n
		}
	}
	return dst, lossy
}

// unescape decodes the escape sequence at in[i] (a backslash) of a scanned
// string, joining a surrogate pair, and returns the rune and the length of
// the sequence. A lone surrogate decodes to U+FFFD with lossy set.
func unescape(in []byte, i int) (r rune, n int, lossy bool) {
	if i+1 >= len(in) {
		return utf8.RuneError, len(in) - i, true // unreachable for scanned literals
	}
	switch e := in[i+1]; e {
	case 'b':
		return '\b', 2, false
	case 'f':
		return '\f', 2, false
	case 'n':
		return '\n', 2, false
	case 'r':
		return '\r', 2, false
	case 't':
		return '\t', 2, false
	case 'u':
		r, ok := hex4(in, i+2)
		if !ok {
			return utf8.RuneError, 2, true // unreachable for scanned literals
		}
		if !utf16.IsSurrogate(r) {
			return r, 6, false
		}
		if i+7 < len(in) && in[i+6] == '\\' && in[i+7] == 'u' {
			if r2, ok := hex4(in, i+8); ok {
				if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
					return d, 12, false
				}
			}
		}
		return utf8.RuneError, 6, true
	default: // '"', '\\', '/'
		return rune(e), 2, false
	}
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
// esc is as for [appendDecoded].
func appendCanonString(dst, lit []byte, esc bool) []byte {
	in := lit[1 : len(lit)-1]
	if !esc || bytes.IndexByte(in, '\\') < 0 && utf8.Valid(in) {
		return append(dst, lit...) // already canonical
	}
	const hexDigits = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(in); {
		c := in[i]
		if c != '\\' {
			if c < utf8.RuneSelf { // never '"' or a control character in a scanned literal
				dst = append(dst, c)
				i++
				continue
			}
			r, n := utf8.DecodeRune(in[i:])
			dst = utf8.AppendRune(dst, r) // RuneError for invalid bytes
			i += n
			continue
		}
		r, n, _ := unescape(in, i)
		i += n
		switch {
		case r == '"' || r == '\\':
			dst = append(dst, '\\', byte(r))
		case r < 0x20:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[r>>4], hexDigits[r&0xf])
		default:
			dst = utf8.AppendRune(dst, r)
		}
	}
	return append(dst, '"')
}

// stringValue scans the string at s.i, writing it in canonical mode, and
// returns its literal and whether it may need decoding (see [appendDecoded]).
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

package webhook

import (
	"strings"
	"unicode/utf8"
)

// Truncate returns the longest prefix of s of at most max bytes that ends on
// a rune boundary, so a multi-byte UTF-8 character at the limit is dropped
// whole instead of being cut. Boundaries are those of a range loop over s:
// in invalid UTF-8 each invalid byte is a rune of its own, so such bytes are
// kept or dropped one by one and only a valid encoding is never split. A
// string of at most max bytes is returned unchanged; max ≤ 0 gives "".
// Truncate runs in constant time and does not allocate.
func Truncate(s string, max int) string {
	if len(s) <= max {
		return s
	}
	if max <= 0 {
		return ""
	}
	// The nearest rune start at or before max: a valid character beginning
	// there that runs past max would be split, so cut before it.
	for k := max; k >= 0 && k > max-utf8.UTFMax; k-- {
		if !utf8.RuneStart(s[k]) {
			continue
		}
		if k == max {
			break
		}
		if r, size := utf8.DecodeRuneInString(s[k:]); (r != utf8.RuneError || size > 1) && k+size > max {
			return s[:k]
		}
		break
	}
	return s[:max]
}

// CleanText returns s as text every hop accepts (a DynamoDB string, an SQS
// message attribute, a log line): invalid UTF-8, control characters other
// than tab, line feed and carriage return, and the noncharacters U+FFFE and
// U+FFFF each become U+FFFD; the result is then cut to at most max bytes
// on a rune boundary. Use it for error texts that may quote what a client
// or an outside system sent.
func CleanText(s string, max int) string {
	clean := true
	for _, r := range s {
		if unclean(r) {
			clean = false
			break
		}
	}
	if !clean {
		s = strings.Map(func(r rune) rune {
			if unclean(r) {
				return utf8.RuneError
			}
			return r
		}, s)
	}
	return Truncate(s, max)
}

func unclean(r rune) bool {
	switch {
	case r == utf8.RuneError:
		return true // invalid UTF-8 (or U+FFFD itself, which maps to itself)
	case r < 0x20:
		return r != '\t' && r != '\n' && r != '\r'
	case r == 0x7f, r == 0xfffe, r == 0xffff:
		return true
	}
	return false
}

package xmljson

import (
	"bytes"
	"fmt"
	"unicode/utf8"
)

// IsChar reports whether r is a character XML 1.0 allows in a document
// (production Char): tab, line feed, carriage return and U+0020..U+D7FF,
// U+E000..U+FFFD, U+10000..U+10FFFF. Other control characters, surrogates
// and U+FFFE/U+FFFF are not.
func IsChar(r rune) bool {
	return r == 0x09 || r == 0x0A || r == 0x0D ||
		0x20 <= r && r <= 0xD7FF ||
		0xE000 <= r && r <= 0xFFFD ||
		0x10000 <= r && r <= 0x10FFFF
}

// CheckChars returns an error wrapping [webhook.ErrMalformed] unless data is
// valid UTF-8 made only of XML characters ([IsChar]). It checks every byte,
// including comments and processing instructions, which encoding/xml passes
// through unchecked. The error gives the byte offset, never the input.
func CheckChars(data []byte) error {
	for i := 0; i < len(data); {
		c := data[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\t' && c != '\n' && c != '\r' {
				return malformed(fmt.Sprintf("character not allowed in XML at byte %d", i))
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && n == 1 {
			return malformed(fmt.Sprintf("invalid UTF-8 at byte %d", i))
		}
		if !IsChar(r) {
			return malformed(fmt.Sprintf("character not allowed in XML at byte %d", i))
		}
		i += n
	}
	return nil
}

// replacement is U+FFFD in UTF-8: what encoding/xml decodes a character
// reference to a surrogate (&#xD800;) into.
var replacement = []byte("\uFFFD")

// surrogateRef reports whether raw, the source bytes of a text run or start
// tag (not a CDATA section, comment or processing instruction), holds a
// character reference to a surrogate (U+D800..U+DFFF), which is not an XML
// character. encoding/xml silently decodes such a reference to U+FFFD.
func surrogateRef(raw []byte) bool {
	for {
		i := bytes.Index(raw, []byte("&#"))
		if i < 0 {
			return false
		}
		raw = raw[i+2:]
		base := 10
		if len(raw) > 0 && raw[0] == 'x' {
			base, raw = 16, raw[1:]
		}
		v := 0
		for len(raw) > 0 && v <= 0x10FFFF {
			d := digitVal(raw[0], base)
			if d < 0 {
				break
			}
			v = v*base + d
			raw = raw[1:]
		}
		if 0xD800 <= v && v <= 0xDFFF {
			return true
		}
	}
}

// digitVal returns the value of c as a digit in base (10 or 16), or -1.
func digitVal(c byte, base int) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case base == 16 && 'a' <= c && c <= 'f':
		return int(c-'a') + 10
	case base == 16 && 'A' <= c && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

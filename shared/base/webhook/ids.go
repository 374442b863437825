package webhook

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Limits of the identifiers an event carries into its key and record. A
// provider's id (LINE webhookEventId, Standard Webhooks webhook-id, WeCom and
// WeChat MsgId) becomes part of the DynamoDB partition key (at most 2,048
// bytes) and an SQS message attribute (valid XML characters only), so the
// receiver refuses, with 400, what could never be stored or sent.
const (
	// MaxDedupKeyBytes is the longest accepted dedup key ([Event.DedupKey]).
	MaxDedupKeyBytes = 256
	// MaxTypeBytes is the longest accepted event type ([Event.Type]).
	MaxTypeBytes = 128
)

// CheckID reports whether s can be an identifier of an event: non-empty, at
// most max bytes of valid UTF-8, without control characters or the
// noncharacters U+FFFE and U+FFFF. The error wraps [ErrMalformed] and names
// what, never the value.
func CheckID(what, s string, max int) error {
	if s == "" {
		return fmt.Errorf("%s is empty: %w", what, ErrMalformed)
	}
	if len(s) > max {
		return fmt.Errorf("%s is %d bytes, over %d: %w", what, len(s), max, ErrMalformed)
	}
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			return fmt.Errorf("%s is not valid UTF-8: %w", what, ErrMalformed)
		case r < 0x20, r == 0x7f, r >= 0x80 && r < 0xa0, r == 0xfffe, r == 0xffff:
			return fmt.Errorf("%s holds control character %U: %w", what, r, ErrMalformed)
		}
		i += n
	}
	return nil
}

// TenantNameRule describes a valid tenant name, for error texts.
const TenantNameRule = "1 to 64 of A-Z a-z 0-9 _ . - (starting with a letter or digit)"

// ValidTenant reports whether name can be a tenant: it is a path segment
// and part of the event key (provider#tenant#dedupKey), so 1 to 64 bytes of
// A-Z a-z 0-9 _ . -, starting with a letter or digit (no '#', '/' or
// spaces). A loop, not a regular expression: one with counted repetition
// costs a tenth of a millisecond to compile at every cold start.
func ValidTenant(name string) bool {
	if len(name) == 0 || len(name) > 64 || !isAlnum(name[0]) {
		return false
	}
	return OnlyBytes(name, "_.-")
}

// OnlyBytes reports whether every byte of s is an ASCII letter or digit or
// one of extra.
func OnlyBytes(s, extra string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isAlnum(c) && strings.IndexByte(extra, c) < 0 {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

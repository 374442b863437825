package webhook

import (
	"fmt"
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

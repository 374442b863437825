package wxmsg

import (
	"crypto/sha256"
	"encoding/hex"
)

// Field is one "name=value" line of a [Fingerprint].
type Field struct {
	Name  string
	Value string
}

// Fingerprint returns the first 32 hex characters of SHA-256 over the
// "name=value\n" lines of fields, in order. Dedup keys embed it, so its
// output for given fields must never change.
func Fingerprint(fields ...Field) string {
	h := sha256.New()
	for _, f := range fields {
		h.Write([]byte(f.Name))
		h.Write([]byte{'='})
		h.Write([]byte(f.Value))
		h.Write([]byte{'\n'})
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// IsToken reports whether s is 1..max bytes of [A-Za-z0-9_.-], and so can go
// into a dedup key as it is.
func IsToken(s string, max int) bool {
	if len(s) == 0 || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

// MaxKeyLen is the longest dedup key a WeCom or WeChat event may have.
const MaxKeyLen = 256

// ValidKey reports whether k keeps the dedup key contract of both providers:
// 1..[MaxKeyLen] bytes of printable ASCII without spaces ('!'..'~'), so no
// control character, invalid UTF-8 or over-long value from the XML can reach
// a key. Values that are not short tokens are hashed ([Fingerprint]) before
// they go into a key; ValidKey is the last guard.
func ValidKey(k string) bool {
	if len(k) == 0 || len(k) > MaxKeyLen {
		return false
	}
	for i := 0; i < len(k); i++ {
		if k[i] <= ' ' || k[i] > '~' {
			return false
		}
	}
	return true
}

package feishu

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"strconv"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
)

// Header names of a signed delivery. Lookups are case-insensitive.
const (
	TimestampHeader = "X-Lark-Request-Timestamp"
	NonceHeader     = "X-Lark-Request-Nonce"
	SignatureHeader = "X-Lark-Signature"
)

// sigLen is the length of a signature: lowercase hex of a SHA-256 digest.
const sigLen = 2 * sha256.Size

// Signature returns the X-Lark-Signature of a delivery: the lowercase hex
// SHA-256 of timestamp + nonce + encryptKey + body, the strings taken as
// UTF-8 and body as the exact request bytes (Feishu's "签名校验"; the SDKs'
// Signature functions).
func Signature(timestamp, nonce, encryptKey string, body []byte) string {
	sum := signature(timestamp, nonce, encryptKey, body)
	return string(sum[:])
}

func signature(timestamp, nonce, encryptKey string, body []byte) [sigLen]byte {
	h := sha256.New()
	h.Write([]byte(timestamp))
	h.Write([]byte(nonce))
	h.Write([]byte(encryptKey))
	h.Write(body)
	var sum [sha256.Size]byte
	var out [sigLen]byte
	hex.Encode(out[:], h.Sum(sum[:0]))
	return out
}

// verifySignature checks the signature headers of req against encryptKey
// and then the timestamp window (tolerance < 0: none). Errors wrap
// [webhook.ErrBadSignature] or [webhook.ErrStaleTimestamp].
func verifySignature(req *webhook.Request, encryptKey string, tolerance time.Duration) error {
	ts, nonce, sig := req.Header.Get(TimestampHeader), req.Header.Get(NonceHeader), req.Header.Get(SignatureHeader)
	switch {
	case ts == "":
		return fmt.Errorf("feishu: missing %s: %w", TimestampHeader, webhook.ErrBadSignature)
	case nonce == "":
		return fmt.Errorf("feishu: missing %s: %w", NonceHeader, webhook.ErrBadSignature)
	case len(sig) != sigLen:
		return fmt.Errorf("feishu: malformed %s: %w", SignatureHeader, webhook.ErrBadSignature)
	}
	sec, ok := parseSeconds(ts)
	if !ok {
		return fmt.Errorf("feishu: %s is not Unix seconds: %w", TimestampHeader, webhook.ErrBadSignature)
	}
	want := signature(ts, nonce, encryptKey, req.Body)
	if subtle.ConstantTimeCompare(want[:], []byte(sig)) != 1 {
		return fmt.Errorf("feishu: signature mismatch: %w", webhook.ErrBadSignature)
	}
	if tolerance < 0 {
		return nil
	}
	now := req.Now
	if now.IsZero() {
		now = time.Now()
	}
	tol := int64(tolerance / time.Second)
	switch n := now.Unix(); {
	case sec < n-tol:
		return fmt.Errorf("feishu: %s older than %s: %w", TimestampHeader, tolerance, webhook.ErrStaleTimestamp)
	case sec > n+tol:
		return fmt.Errorf("feishu: %s more than %s ahead: %w", TimestampHeader, tolerance, webhook.ErrStaleTimestamp)
	}
	return nil
}

// parseSeconds parses a timestamp header: 1 to 18 decimal digits.
func parseSeconds(s string) (int64, bool) {
	if len(s) == 0 || len(s) > 18 {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	return v, err == nil
}

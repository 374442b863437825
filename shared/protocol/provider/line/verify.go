package line

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"hash"

	"github.com/hookwall/hookwall/shared/base/webhook"
)

// SignatureHeader is the header carrying the body signature. Header lookups
// are case-insensitive; LINE sends it as x-line-signature.
const SignatureHeader = "X-Line-Signature"

// sigLen is the length of the canonical standard Base64 (with padding) of a
// 32-byte HMAC-SHA256 digest.
const sigLen = 44

// Verify checks that signatureHeader is the Base64 HMAC-SHA256 of body keyed
// with channelSecret (its UTF-8 bytes, not hex-decoded), as described at
// https://developers.line.biz/en/docs/messaging-api/verify-webhook-signature/.
//
// Verify is strict: only the canonical spelling (standard alphabet, padding,
// 44 characters, no whitespace) is accepted, and it is compared in constant
// time. The error wraps [webhook.ErrBadSignature].
func Verify(channelSecret []byte, body []byte, signatureHeader string) error {
	return verify(hmac.New(sha256.New, channelSecret), body, signatureHeader)
}

// newMAC returns a keyed HMAC-SHA256, cloned from the prototype keyed at New
// (which skips hashing the key pads) when the hash supports it.
func (p *Parser) newMAC() hash.Hash {
	if p.mac != nil {
		if c, err := p.mac.Clone(); err == nil {
			if h, ok := c.(hash.Hash); ok {
				return h
			}
		}
	}
	return hmac.New(sha256.New, p.secret)
}

// macState is a keyed MAC and room for its digest, pooled by a Parser.
type macState struct {
	mac hash.Hash
	sum [sha256.Size]byte
}

// getMAC returns a pooled keyed MAC, reset, or a new one.
func (p *Parser) getMAC() *macState {
	if m, ok := p.macs.Get().(*macState); ok {
		m.mac.Reset()
		return m
	}
	return &macState{mac: p.newMAC()}
}

// verify is Verify with a fresh keyed MAC.
func verify(mac hash.Hash, body []byte, signatureHeader string) error {
	var sum [sha256.Size]byte
	return verifySum(mac, &sum, body, signatureHeader)
}

// verifySum is verify computing the digest into *sum.
func verifySum(mac hash.Hash, sum *[sha256.Size]byte, body []byte, signatureHeader string) error {
	if signatureHeader == "" {
		return fmt.Errorf("line: missing signature: %w", webhook.ErrBadSignature)
	}
	if len(signatureHeader) != sigLen || !canonicalBase64Digest(signatureHeader) {
		return fmt.Errorf("line: malformed signature: %w", webhook.ErrBadSignature)
	}
	mac.Write(body)
	var want [sigLen]byte
	base64.StdEncoding.Encode(want[:], mac.Sum(sum[:0]))
	var diff byte
	for i := range want {
		diff |= want[i] ^ signatureHeader[i]
	}
	if subtle.ConstantTimeByteEq(diff, 0) != 1 {
		return fmt.Errorf("line: signature mismatch: %w", webhook.ErrBadSignature)
	}
	return nil
}

// canonicalBase64Digest reports whether s (44 bytes) is spelled with the
// standard Base64 alphabet: 43 alphabet characters then one '='. It looks
// only at the shape of the header, never at the secret or the digest.
func canonicalBase64Digest(s string) bool {
	for i := 0; i < sigLen-1; i++ {
		c := s[i]
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '+' || c == '/') {
			return false
		}
	}
	return s[sigLen-1] == '='
}

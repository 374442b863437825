package webhook

import (
	"crypto/sha256"
	"encoding/hex"
)

// IdempotencyKey derives the idempotency key of one step of one handler for
// one event: the first 16 bytes of SHA-256(eventKey 0x00 handler 0x00 step),
// written as a version-8 UUID (RFC 9562: 36 characters, lower-case hex), so it
// fits every API's idempotency header, including those that demand a UUID.
// It is the same on every attempt, in every worker, forever.
func IdempotencyKey(eventKey, handler, step string) string {
	h := sha256.New()
	h.Write([]byte(eventKey))
	h.Write([]byte{0})
	h.Write([]byte(handler))
	h.Write([]byte{0})
	h.Write([]byte(step))
	var b [16]byte
	copy(b[:], h.Sum(nil))
	b[6] = b[6]&0x0f | 0x80 // version 8
	b[8] = b[8]&0x3f | 0x80 // variant 10
	var out [36]byte
	hex.Encode(out[0:8], b[0:4])
	out[8] = '-'
	hex.Encode(out[9:13], b[4:6])
	out[13] = '-'
	hex.Encode(out[14:18], b[6:8])
	out[18] = '-'
	hex.Encode(out[19:23], b[8:10])
	out[23] = '-'
	hex.Encode(out[24:36], b[10:16])
	return string(out[:])
}

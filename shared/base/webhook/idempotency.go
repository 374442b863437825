package webhook

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
)

// IdempotencyKey derives the idempotency key of one step of one handler for
// one event: the first 16 bytes of SHA-256(eventKey 0x00 handler 0x00 step),
// written as a version-8 UUID (RFC 9562: 36 characters, lower-case hex), so it
// fits every API's idempotency header, including those that demand a UUID.
// It is the same on every attempt, in every worker, forever: a step's first
// run uses it; a run after the step was undone uses [RunKey].
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

// RunKey is the idempotency key of run run of a step of one handler for one
// event (see [JournalEntry.Run]): [IdempotencyKey] for run 0, and for a
// later run the key of the step named "<step>#<run>", a name no step can
// have ('#' is not allowed in step names). The run after an undo is then a
// new call for the outside system, not a repeat of the undone one that it
// would answer from its idempotency store without doing anything, while
// every attempt of one run sends the same key. The undo of run n has the
// key RunKey(eventKey, handler, "$undo:"+step, n).
func RunKey(eventKey, handler, step string, run int) string {
	if run <= 0 {
		return IdempotencyKey(eventKey, handler, step)
	}
	return IdempotencyKey(eventKey, handler, step+"#"+strconv.Itoa(run))
}

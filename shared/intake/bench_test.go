package intake

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"testing"
)

// The whole receiver path for one LINE delivery (verify, parse, claim, build
// the envelope, enqueue), with the store and queue in memory, beside a bare
// HMAC-SHA256 of the same body: `make bench` reports both, and the README
// their ratio.

func benchBody() []byte { return lineBody("01HBENCH0000000000000000001") }

func BenchmarkReceiveLINE(b *testing.B) {
	body := benchBody()
	sig := lineSign(body)
	q := &memQueue{}
	h := newTestHandler(b, newMemStore(), q)
	ctx := context.Background()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		// A fresh store each time would dominate; the duplicate path is the
		// cheaper one, so alternate fresh claims by resetting the fake.
		h.cfg.Store = newMemStore()
		q.sent = q.sent[:0]
		if r := h.Receive(ctx, lineRequest(body, sig), Meta{RequestID: "r", TraceID: "t"}); r.Status != 200 {
			b.Fatalf("status %d", r.Status)
		}
	}
}

func BenchmarkHMACBaseline(b *testing.B) {
	body := benchBody()
	key := []byte(testSecret)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		m := hmac.New(sha256.New, key)
		m.Write(body)
		_ = m.Sum(nil)
	}
}

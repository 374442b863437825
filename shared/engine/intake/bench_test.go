package intake

import (
	"context"
	"io"
	"log/slog"
	"time"

	"crypto/hmac"
	"crypto/sha256"
	"github.com/hookwall/hookwall/shared/base/obs"
	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/state/store"
	"testing"
)

// The whole receiver path for one LINE delivery (verify, parse, claim, build
// the envelope, enqueue), with the store and queue in memory, beside a bare
// HMAC-SHA256 of the same body: `make bench` reports both, and the README
// their ratio.

func benchBody() []byte { return lineBody("01HBENCH0000000000000000001") }

func BenchmarkReceiveLINE(b *testing.B) { benchReceive(b, nil) }

// BenchmarkReceiveLINELogged is the same path with the production JSON
// logger at info level (writing to io.Discard): one line per event.
func BenchmarkReceiveLINELogged(b *testing.B) {
	benchReceive(b, obs.NewLogger(io.Discard, slog.LevelInfo))
}

func benchReceive(b *testing.B, logger *slog.Logger) {
	body := benchBody()
	sig := lineSign(body)
	q := &memQueue{}
	h := newTestHandler(b, claimAll{newMemStore()}, q, func(c *Config) { c.Logger = logger })
	ctx := context.Background()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		q.sent = q.sent[:0]
		if r := h.Receive(ctx, lineRequest(body, sig), Meta{RequestID: "r", TraceID: "t"}); r.Status != 200 {
			b.Fatalf("status %d", r.Status)
		}
	}
}

// claimAll is a Store whose every claim is new: the path a first delivery takes.
type claimAll struct{ *memStore }

func (claimAll) Claim(_ context.Context, ev store.NewEvent, window time.Duration) (store.ClaimResult, error) {
	return store.ClaimResult{Outcome: store.Claimed, Record: &store.Record{
		Key: ev.Key, SK: store.SKEvent, Status: webhook.StatusReceived, Version: 1,
		Provider: ev.Provider, Tenant: ev.Tenant, EventType: ev.EventType, PayloadHash: ev.PayloadHash,
		Payload: ev.Payload, TraceID: ev.TraceID, ClaimID: "c",
	}}, nil
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

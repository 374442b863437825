package line_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"testing"

	"github.com/hookwall/hookwall/shared/protocol/provider/line"
)

// The three benchmarks use the four-event multi_event_body vector, so that
// BenchmarkParse / BenchmarkHMACBaseline is the parser's cost in units of a
// bare HMAC of the same body.

func BenchmarkVerify(b *testing.B) {
	c := caseNamed(b, "multi_event_body")
	secret, body := []byte(c.ChannelSecret), []byte(c.Body)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if err := line.Verify(secret, body, c.SignatureHeader); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParse(b *testing.B) {
	c := caseNamed(b, "multi_event_body")
	p := mustNew(b, c.ChannelSecret)
	req := post([]byte(c.Body), c.SignatureHeader)
	ctx := context.Background()
	b.SetBytes(int64(len(req.Body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Parse(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkHMACBaseline(b *testing.B) {
	c := caseNamed(b, "multi_event_body")
	secret, body := []byte(c.ChannelSecret), []byte(c.Body)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		m := hmac.New(sha256.New, secret)
		m.Write(body)
		_ = m.Sum(nil)
	}
}

package wechat

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/protocol/provider/wxmsg/wxmsgtest"
)

// BenchmarkParseUnsigned measures what an unauthenticated sender costs: 1 MiB
// bodies of the worst shapes with a wrong signature, posted as encrypted
// (safe/compatible mode) and as plaintext-mode messages.
func BenchmarkParseUnsigned(b *testing.B) {
	ctx := context.Background()
	for _, mode := range []struct {
		name string
		p    *Parser
		aes  bool
	}{
		{"safe", newParser(b, testKey, 0), true},
		{"plaintext", newParser(b, "", 0), false},
	} {
		for _, j := range wxmsgtest.JunkEnvelopes(1 << 20) {
			b.Run(mode.name+"/"+j.Name, func(b *testing.B) {
				q := wxmsgtest.UnsignedQuery(testTS)
				if !mode.aes {
					q.Del("encrypt_type")
				}
				req := &webhook.Request{Method: "POST", Query: q, Body: j.Body, Now: time.Unix(testTS, 0)}
				b.SetBytes(int64(len(j.Body)))
				b.ReportAllocs()
				for b.Loop() {
					if _, err := mode.p.Parse(ctx, req); err == nil {
						b.Fatal("unsigned request accepted")
					}
				}
			})
		}
	}
}

// TestUnsignedCost checks that an unsigned body costs at most about its own
// size in memory, in every mode: the signature is checked before anything
// that grows with the body beyond one pass (before any parsing at all in
// plaintext mode, whose signature does not cover the body).
func TestUnsignedCost(t *testing.T) {
	for _, mode := range []struct {
		name string
		p    *Parser
		aes  bool
	}{
		{"safe", newParser(t, testKey, 0), true},
		{"plaintext", newParser(t, "", 0), false},
	} {
		for _, j := range wxmsgtest.JunkEnvelopes(1 << 20) {
			q := wxmsgtest.UnsignedQuery(testTS)
			if !mode.aes {
				q.Del("encrypt_type")
			}
			req := &webhook.Request{Method: "POST", Query: q, Body: j.Body, Now: time.Unix(testTS, 0)}
			var err error
			n := wxmsgtest.Allocated(func() { _, err = mode.p.Parse(context.Background(), req) })
			if !errors.Is(err, webhook.ErrBadSignature) {
				t.Errorf("%s/%s: Parse error = %v, want ErrBadSignature", mode.name, j.Name, err)
			}
			if max := wxmsgtest.MaxUnsignedCost(len(j.Body)); n > max {
				t.Errorf("%s/%s: a %d-byte unsigned body allocated %d bytes, want at most %d", mode.name, j.Name, len(j.Body), n, max)
			}
		}
	}
	// Plaintext mode parses nothing before the signature: even a body that
	// is not XML is a bad signature, not a malformed request.
	req := &webhook.Request{Method: "POST", Query: wxmsgtest.UnsignedQuery(testTS), Body: []byte("<xml><"), Now: time.Unix(testTS, 0)}
	req.Query.Del("encrypt_type")
	if _, err := newParser(t, "", 0).Parse(context.Background(), req); !errors.Is(err, webhook.ErrBadSignature) {
		t.Errorf("plaintext mode, bad signature and body: Parse error = %v, want ErrBadSignature", err)
	}
}

package wecom

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/protocol/provider/wxmsg/wxmsgtest"
)

// BenchmarkParseUnsigned measures what an unauthenticated sender costs: 1 MiB
// envelopes of the worst shapes, with a wrong msg_signature.
func BenchmarkParseUnsigned(b *testing.B) {
	p := newParser(b, 0)
	ctx := context.Background()
	for _, j := range wxmsgtest.JunkEnvelopes(1 << 20) {
		b.Run(j.Name, func(b *testing.B) {
			req := &webhook.Request{Method: "POST", Query: wxmsgtest.UnsignedQuery(testTS), Body: j.Body, Now: time.Unix(testTS, 0)}
			b.SetBytes(int64(len(j.Body)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := p.Parse(ctx, req); err == nil {
					b.Fatal("unsigned request accepted")
				}
			}
		})
	}
}

// TestUnsignedCost checks that an unsigned envelope costs at most about its
// own size in memory: the signature is checked before anything that grows
// with the body beyond one pass.
func TestUnsignedCost(t *testing.T) {
	p := newParser(t, 0)
	for _, j := range wxmsgtest.JunkEnvelopes(1 << 20) {
		req := &webhook.Request{Method: "POST", Query: wxmsgtest.UnsignedQuery(testTS), Body: j.Body, Now: time.Unix(testTS, 0)}
		var err error
		n := wxmsgtest.Allocated(func() { _, err = p.Parse(context.Background(), req) })
		if !errors.Is(err, webhook.ErrBadSignature) {
			t.Errorf("%s: Parse error = %v, want ErrBadSignature", j.Name, err)
		}
		if max := wxmsgtest.MaxUnsignedCost(len(j.Body)); n > max {
			t.Errorf("%s: a %d-byte unsigned body allocated %d bytes, want at most %d", j.Name, len(j.Body), n, max)
		}
	}
}

package standard_test

import (
	"context"
	"testing"
)

func BenchmarkParse(b *testing.B) {
	c := caseNamed(b, "multiple_signatures_second_matches")
	p := mustNew(b, c.Secret)
	req := request(c)
	ctx := context.Background()
	b.SetBytes(int64(len(req.Body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Parse(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}

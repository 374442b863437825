package standard_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/protocol/provider/standard"
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

// BenchmarkParseV1a verifies a v1a (Ed25519) delivery: the cost of the
// asymmetric scheme against BenchmarkParse's HMAC.
func BenchmarkParseV1a(b *testing.B) {
	benchmarkV1a(b, 1)
}

// BenchmarkParseV1aWorstCase verifies a header of MaxV1aEntries v1a entries
// none of which matches, against two public keys: the most work an
// unsigned request can cause.
func BenchmarkParseV1aWorstCase(b *testing.B) {
	benchmarkV1a(b, standard.MaxV1aEntries)
}

func benchmarkV1a(b *testing.B, entries int) {
	const id, ts = "msg_bench", 1767225600
	body := []byte(`{"type":"invoice.paid","timestamp":"2026-01-01T00:00:00Z","data":{"id":"in_1","amount":4200}}`)
	sig, err := standard.SignAsymmetric(keyASeed, id, ts, body)
	if err != nil {
		b.Fatal(err)
	}
	header, keys := sig, []string{keyAPublic}
	if entries > 1 {
		wrong := []byte(sig)
		wrong[10] = map[bool]byte{true: 'B', false: 'A'}[wrong[10] == 'A'] // still Base64 of 64 bytes, not a signature
		header = strings.TrimSpace(strings.Repeat(string(wrong)+" ", entries))
		keys = append(keys, keyAPublic) // two keys, so every entry is tried twice
	}
	p, err := standard.New(standard.Config{PublicKeys: keys})
	if err != nil {
		b.Fatal(err)
	}
	h := http.Header{}
	h.Set("webhook-id", id)
	h.Set("webhook-timestamp", strconv.Itoa(ts))
	h.Set("webhook-signature", header)
	req := &webhook.Request{Method: http.MethodPost, Header: h, Body: body, Now: time.Unix(ts, 0)}
	ctx := context.Background()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		_, err := p.Parse(ctx, req)
		if (err == nil) != (entries == 1) {
			b.Fatal(err)
		}
	}
}

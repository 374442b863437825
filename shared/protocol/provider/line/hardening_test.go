package line_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/protocol/provider/line"
)

// TestParseRejectsInvalidUTF8 checks that a signed body that is not UTF-8
// (RFC 8259 §8.1), wherever the bad bytes are, is malformed.
func TestParseRejectsInvalidUTF8(t *testing.T) {
	for _, tc := range []struct{ name, body string }{
		{"in webhookEventId", `{"events":[{"webhookEventId":"E` + "\xff" + `","type":"message"}]}`},
		{"in type", `{"events":[{"webhookEventId":"E","type":"mess` + "\xc3\x28" + `age"}]}`},
		{"in a nested string", `{"events":[{"webhookEventId":"E","type":"message","message":{"text":"` + "\xe3\x81" + `"}}]}`},
		{"in a key", `{"events":[{"webhookEventId":"E","type":"message","` + "\x80" + `":1}]}`},
		{"in destination", `{"destination":"U` + "\xfe" + `","events":[]}`},
		{"in deliveryContext", `{"events":[{"webhookEventId":"E","type":"message","deliveryContext":{"x":"` + "\xff" + `"}}]}`},
		{"overlong encoding", `{"events":[{"webhookEventId":"E","type":"message","x":"` + "\xc0\xaf" + `"}]}`},
		{"UTF-8 encoded surrogate", `{"events":[{"webhookEventId":"E","type":"message","x":"` + "\xed\xa0\x80" + `"}]}`},
		{"beyond U+10FFFF", `{"events":[{"webhookEventId":"E","type":"message","x":"` + "\xf4\x90\x80\x80" + `"}]}`},
		{"in whitespace position", `{"events":[]}` + "\xa0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := parseSigned(t, tc.body)
			if !errors.Is(err, webhook.ErrMalformed) {
				t.Fatalf("got %v (delivery %+v), want ErrMalformed", err, d)
			}
		})
	}
}

// TestParseWebhookEventIDRules checks the dedup key rules: at most
// MaxIDBytes after unescaping, no control character, no lone surrogate.
func TestParseWebhookEventIDRules(t *testing.T) {
	body := func(idLit string) string {
		return `{"events":[{"webhookEventId":"` + idLit + `","type":"message"}]}`
	}
	for _, tc := range []struct {
		name, idLit string
		ok          bool
	}{
		{"ULID", "01FZ74A0TDDPYRVKNK77XKC3ZR", true},
		{"MaxIDBytes ASCII", strings.Repeat("a", line.MaxIDBytes), true},
		{"MaxIDBytes of two-byte characters", strings.Repeat("é", line.MaxIDBytes/2), true},
		{"MaxIDBytes after unescaping", strings.Repeat(`\u00e9`, line.MaxIDBytes/2), true},
		{"surrogate pair", `\ud83d\ude00`, true},
		{"U+FFFD itself", `\ufffd`, true},
		{"one byte too long", strings.Repeat("a", line.MaxIDBytes+1), false},
		{"too long after unescaping", strings.Repeat(`\u00e9`, line.MaxIDBytes/2) + "a", false},
		{"NUL", `E\u0000`, false},
		{"escaped newline", `E\n`, false},
		{"escaped tab", `\tE`, false},
		{"DEL", "E\x7f", false},
		{"escaped DEL", `E\u007f`, false},
		{"C1 control", `E\u0085`, false},
		{"raw C1 control", "E\u0085", false},
		{"lone high surrogate", `E\ud800`, false},
		{"lone low surrogate", `\udc00E`, false},
		{"high surrogate then letter", `\ud83d\u0041`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := parseSigned(t, body(tc.idLit))
			if tc.ok {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				if len(d.Events[0].DedupKey) > line.MaxIDBytes {
					t.Fatalf("DedupKey of %d bytes", len(d.Events[0].DedupKey))
				}
				return
			}
			if !errors.Is(err, webhook.ErrMalformed) {
				t.Fatalf("got %v (delivery %+v), want ErrMalformed", err, d)
			}
		})
	}
}

// TestInvalidBodyNeedsSignature checks that the signature is verified first:
// an unsigned malformed body is a bad signature (401), not a bad request.
func TestInvalidBodyNeedsSignature(t *testing.T) {
	p := mustNew(t, testSecret)
	for _, body := range []string{
		`{"events":[{"webhookEventId":"E` + "\xff" + `","type":"message"}]}`,
		`{"events":[{"webhookEventId":"E\u0000","type":"message"}]}`,
		`{"events":[{"webhookEventId":"` + strings.Repeat("a", line.MaxIDBytes+1) + `","type":"message"}]}`,
		`{"events":[{"webhookEventId":"E","type":"t","x":` + strings.Repeat("[", 1000) + strings.Repeat("]", 1000) + `}]}`,
	} {
		_, err := p.Parse(context.Background(), post([]byte(body), sign("another secret", []byte(body))))
		if !errors.Is(err, webhook.ErrBadSignature) {
			t.Errorf("body %.40q: got %v, want ErrBadSignature", body, err)
		}
	}
}

// TestParseDepthLimit checks MaxDepth at its edge, inside an event and
// outside the events array.
func TestParseDepthLimit(t *testing.T) {
	nest := func(n int) string { return strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n) }
	for _, tc := range []struct {
		name, body string
		ok         bool
	}{
		// The event object is at depth 2, so its members may nest MaxDepth-2 deep.
		{"event at the limit", `{"events":[{"webhookEventId":"E","type":"t","x":` + nest(line.MaxDepth-2) + `}]}`, true},
		{"event over the limit", `{"events":[{"webhookEventId":"E","type":"t","x":` + nest(line.MaxDepth-1) + `}]}`, false},
		{"destination at the limit", `{"x":` + nest(line.MaxDepth-1) + `,"events":[]}`, true},
		{"destination over the limit", `{"x":` + nest(line.MaxDepth) + `,"events":[]}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseSigned(t, tc.body)
			if tc.ok != (err == nil) || !tc.ok && !errors.Is(err, webhook.ErrMalformed) {
				t.Fatalf("got %v, want ok = %v", err, tc.ok)
			}
		})
	}
}

// TestWorstCaseHashes pins the payload hashes of the worst-case benchmark
// bodies, as computed by the insertion-sort canonicaliser this one replaced,
// and compares Parse with the reference on them.
func TestWorstCaseHashes(t *testing.T) {
	p := mustNew(t, testSecret)
	for _, tc := range []struct {
		name string
		body []byte
		hash string
	}{
		{"many keys", worstManyKeys(), "ee60717c7993789ab39ef117b378f9abb3b5378061b2d8c2c3fd1feda81e0203"},
		{"escaped keys", worstEscapedKeys(), "847a25ac3c9a50386795d45a0b2569dc4313fce54e858399dec921fe4b436e0d"},
		{"deep", worstDeep(), "1b8f08fa1cbea0bd5fbf50e082ed3c064e622f1154ad9d04952cabf683322c99"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := p.Parse(context.Background(), post(tc.body, sign(testSecret, tc.body)))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if got := d.Events[0].PayloadHash; got != tc.hash {
				t.Fatalf("PayloadHash = %s, want %s", got, tc.hash)
			}
			diffParse(t, p, tc.body)
		})
	}
}

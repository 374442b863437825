package line_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/protocol/provider/line"
)

// FuzzParse signs each fuzzed body with the test secret, so that the parser
// past the signature check is exercised. Parse must never panic, must fail
// only with ErrMalformed, and must return well-formed events.
func FuzzParse(f *testing.F) {
	for _, c := range loadCases(f) {
		f.Add([]byte(c.Body))
	}
	f.Add([]byte(`{"events":[{"webhookEventId":"A\ud83d\ude00","type":"x","deliveryContext":{},"a":{"b":[1,-2.5e3,true,null,"\u0000"]}}]}`))
	f.Add([]byte(`{"events":[{"webhookEventId":"\ud800","type":"\"","timestamp":-1}],"events":[]}`))
	p, err := line.New(line.Config{ChannelSecret: testSecret})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		d, err := p.Parse(context.Background(), post(body, sign(testSecret, body)))
		if err != nil {
			if !errors.Is(err, webhook.ErrMalformed) {
				t.Fatalf("signed body rejected with %v, want ErrMalformed", err)
			}
			return
		}
		if !json.Valid(body) {
			t.Fatalf("accepted invalid JSON %q", body)
		}
		if d.Verification != (len(d.Events) == 0) {
			t.Fatalf("Verification = %v with %d events", d.Verification, len(d.Events))
		}
		for _, ev := range d.Events {
			if ev.DedupKey == "" || ev.Type == "" || len(ev.PayloadHash) != 64 {
				t.Fatalf("incomplete event %+v", ev)
			}
			if !bytes.Contains(body, ev.Raw) || !json.Valid(ev.JSON) {
				t.Fatalf("Raw %q not in body or JSON %q invalid", ev.Raw, ev.JSON)
			}
		}
	})
}

// FuzzVerify checks that Verify never panics and accepts only the canonical
// signature of the body.
func FuzzVerify(f *testing.F) {
	for _, c := range loadCases(f) {
		f.Add([]byte(c.Body), c.SignatureHeader)
	}
	f.Fuzz(func(t *testing.T, body []byte, sig string) {
		err := line.Verify([]byte(testSecret), body, sig)
		want := sign(testSecret, body)
		if (err == nil) != (sig == want) {
			t.Fatalf("Verify(%q) = %v; canonical signature is %q", sig, err, want)
		}
		if err != nil && !errors.Is(err, webhook.ErrBadSignature) {
			t.Fatalf("Verify error %v does not wrap ErrBadSignature", err)
		}
	})
}

package intaketest

import (
	"bytes"
	"context"
	"crypto/rand"
	"net/http"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/config/tenants"
	"github.com/hookwall/hookwall/shared/engine/intake"
	"github.com/hookwall/hookwall/shared/protocol/provider"
	"github.com/hookwall/hookwall/shared/protocol/providers"
)

// conformanceTenant is the tenant Conformance configures.
const conformanceTenant = "conformance"

// Conformance checks the registered provider name against the real
// receiver, from its registration alone: its demo settings load from a
// tenants document; its demo event, signed by its settings, is answered
// with its Reply and enqueued under its demo Key; the same event again
// (and, where the platform marks retries, a marked retry of it) is a
// duplicate with the same payload hash; a tampered body is refused with
// 401 and stores nothing; and, where its settings have a handshake, the
// handshake is answered with the settings' HandshakeReply and stores
// nothing.
func Conformance(t *testing.T, name string) {
	t.Helper()
	p, ok := providers.Lookup(name)
	if !ok {
		t.Fatalf("provider %q is not registered", name)
	}
	if p.AnswerWithin <= intake.DefaultBudget {
		t.Errorf("the platform waits %s (AnswerWithin), not longer than the receiver's budget (%s): a slow store would answer too late", p.AnswerWithin, intake.DefaultBudget)
	}
	doc := tenantsDoc(t, conformanceTenant, name, p.Demo.Settings)
	ts, err := tenants.Parse(doc)
	if err != nil {
		t.Fatalf("the demo settings do not load: %v", err)
	}
	tn, _ := ts.Tenant(conformanceTenant)
	settings, ok := tn.Settings(name)
	if !ok {
		t.Fatal("the demo tenant has no settings")
	}
	now := time.Now().Truncate(time.Second)
	r := NewReceiver(t, doc, now)
	id := p.Demo.ID("conformance", 1)
	body := p.Demo.Body([]string{id}, now.Add(-time.Second), false)
	sign := func(body []byte, retry int) *provider.Request {
		t.Helper()
		req, err := settings.Sign(body, provider.SignOptions{Now: r.Clock.Now(), MessageID: id, Retry: retry, Random: rand.Reader})
		if err != nil {
			t.Fatalf("sign: %v", err)
		}
		return req
	}

	t.Run("tampered body is refused", func(t *testing.T) {
		req := sign(body, 0)
		req.Body = tamper(t, req.Body)
		if got := r.Do(t, r.Request(t, name, conformanceTenant, req)); got.Status != http.StatusUnauthorized || len(got.Sent) != 0 || r.Records() != 0 {
			t.Fatalf("status %d, %d sent, %d records; want 401 and nothing stored", got.Status, len(got.Sent), r.Records())
		}
	})
	first := sign(body, 0)
	t.Run("valid event is enqueued", func(t *testing.T) {
		got := r.Do(t, r.Request(t, name, conformanceTenant, first))
		if !got.Is(p.Reply) {
			t.Errorf("reply %d %q %q, want the provider's Reply %d %q %q", got.Status, got.ContentType, got.Body,
				p.Reply.Status, p.Reply.ContentType, p.Reply.Body)
		}
		want := webhook.Key(name, conformanceTenant, p.Demo.Key(id))
		if len(got.Sent) != 1 || got.Sent[0].Key != want {
			t.Fatalf("sent %v, want one event %s", keys(got.Sent), want)
		}
	})
	r.Process(t)
	again := []struct {
		name  string
		retry int
	}{{"the same event again is a duplicate", 0}}
	if p.Demo.Retry.Marked {
		again = append(again, struct {
			name  string
			retry int
		}{"a marked retry is a duplicate", 1})
	}
	for i, c := range again {
		t.Run(c.name, func(t *testing.T) {
			r.Clock.AdvanceTo(now.Add(time.Duration(i+1) * time.Minute))
			req := sign(p.Demo.Body([]string{id}, now.Add(-time.Second), c.retry > 0), c.retry)
			if h1, h2 := payloadHash(t, settings, first, now), payloadHash(t, settings, req, r.Clock.Now()); h1 != h2 {
				t.Errorf("payload hash %s, then %s: a redelivery must hash like the original", h1, h2)
			}
			got := r.Do(t, r.Request(t, name, conformanceTenant, req))
			if got.Status/100 != 2 || len(got.Sent) != 0 || r.Records() != 1 {
				t.Fatalf("status %d, sent %v, %d records; want 2xx and nothing new", got.Status, keys(got.Sent), r.Records())
			}
		})
	}
	if hs, ok := settings.(provider.Handshaker); ok {
		t.Run("handshake is answered as the platform expects", func(t *testing.T) {
			const challenge = "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P"
			req, err := hs.Handshake(challenge, provider.SignOptions{Now: r.Clock.Now(), Random: rand.Reader})
			if err != nil {
				t.Fatal(err)
			}
			want := hs.HandshakeReply(challenge)
			if want.Status/100 != 2 || !bytes.Contains(want.Body, []byte(challenge)) {
				t.Errorf("HandshakeReply %d %q: want a 2xx answer carrying the challenge", want.Status, want.Body)
			}
			got := r.Do(t, r.Request(t, name, conformanceTenant, req))
			if !got.Is(want) || len(got.Sent) != 0 || r.Records() != 1 {
				t.Fatalf("reply %d %q %q, %d sent; want HandshakeReply %d %q %q and nothing stored",
					got.Status, got.ContentType, got.Body, len(got.Sent), want.Status, want.ContentType, want.Body)
			}
		})
	}
}

// tamper changes one letter or digit near the middle of body into another
// of its kind, so the body keeps its syntax but not its signature.
func tamper(t *testing.T, body []byte) []byte {
	t.Helper()
	b := bytes.Clone(body)
	for d := 0; d < len(b); d++ {
		for _, i := range []int{len(b)/2 + d, len(b)/2 - d} {
			if i < 0 || i >= len(b) {
				continue
			}
			switch c := b[i]; {
			case c >= '0' && c <= '8', c >= 'a' && c <= 'y', c >= 'A' && c <= 'Y':
				b[i]++
				return b
			case c == '9' || c == 'z' || c == 'Z':
				b[i]--
				return b
			}
		}
	}
	t.Fatal("no letter or digit to tamper with")
	return nil
}

// payloadHash parses req with the settings' parser and returns its first
// event's payload hash.
func payloadHash(t *testing.T, s provider.Settings, req *provider.Request, now time.Time) string {
	t.Helper()
	parser, err := s.Parser(provider.ParserOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d, err := parser.Parse(context.Background(), &webhook.Request{Method: req.Method, Provider: "conformance",
		Tenant: conformanceTenant, Query: req.Query, Header: req.Header, Body: req.Body, Now: now})
	if err != nil || len(d.Events) == 0 {
		t.Fatalf("parse: %v (%d events)", err, len(d.Events))
	}
	return d.Events[0].PayloadHash
}

// keys returns the keys of envs.
func keys(envs []webhook.Envelope) []string {
	out := make([]string, len(envs))
	for i, e := range envs {
		out[i] = e.Key
	}
	return out
}

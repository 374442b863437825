package feishu_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/engine/intake"
	"github.com/hookwall/hookwall/shared/engine/intake/intaketest"
	"github.com/hookwall/hookwall/shared/protocol/provider"
	"github.com/hookwall/hookwall/shared/protocol/provider/feishu"
)

const vectorsFile = "testdata/vectors.json"

// settings decodes a case's tenant section as the tenants loader does.
func settings(t testing.TB, section json.RawMessage) *feishu.Settings {
	t.Helper()
	var s feishu.Settings
	dec := json.NewDecoder(bytes.NewReader(section))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		t.Fatalf("settings %s: %v", section, err)
	}
	if ps := s.Validate(); len(ps) != 0 {
		t.Fatalf("settings: %v", ps)
	}
	return &s
}

// request is a vector's request as the receiver hands it to a parser.
func request(r intaketest.VectorRequest) *webhook.Request {
	h := http.Header{}
	for k, v := range r.Headers {
		h.Set(k, v)
	}
	return &webhook.Request{Method: http.MethodPost, Provider: feishu.Name, Tenant: "t1", Header: h, Body: []byte(r.Body), Now: time.Unix(r.Now, 0)}
}

// TestVectors runs every case through Parse, modelling the receiver's
// dedup: an event whose key the case has seen is a duplicate (answered
// 200, not enqueued) and must hash as it did the first time. The receiver
// itself runs them in TestVectorsThroughReceiver.
func TestVectors(t *testing.T) {
	f := intaketest.LoadVectors(t, vectorsFile)
	if f.Provider != feishu.Name || len(f.Sources) == 0 || len(f.Cases) < 15 {
		t.Fatalf("vectors: provider %q, %d sources, %d cases", f.Provider, len(f.Sources), len(f.Cases))
	}
	for _, c := range f.Cases {
		t.Run(c.Name, func(t *testing.T) {
			p, err := settings(t, c.Settings).Parser(provider.ParserOptions{})
			if err != nil {
				t.Fatal(err)
			}
			hashes := map[string]string{}
			for i, r := range c.Requests {
				d, err := p.Parse(context.Background(), request(r))
				if got := intake.StatusFor(err); got != r.Want.Status {
					t.Fatalf("request %d: status %d (%v), want %d", i, got, err, r.Want.Status)
				}
				if err != nil {
					continue
				}
				if r.Want.Body != nil && string(d.Reply.Body) != *r.Want.Body {
					t.Errorf("request %d: reply %q, want %q", i, d.Reply.Body, *r.Want.Body)
				}
				if d.Verification != (len(d.Events) == 0) {
					t.Errorf("request %d: Verification %v with %d events", i, d.Verification, len(d.Events))
				}
				newKeys := []string{}
				for _, ev := range d.Events {
					if h, seen := hashes[ev.DedupKey]; seen {
						if h != ev.PayloadHash {
							t.Errorf("request %d: retry of %s hashes %s, first %s", i, ev.DedupKey, ev.PayloadHash, h)
						}
						continue
					}
					hashes[ev.DedupKey] = ev.PayloadHash
					newKeys = append(newKeys, ev.DedupKey)
					checkEvent(t, ev)
				}
				if !slices.Equal(newKeys, r.Want.Events) && (len(newKeys) > 0 || len(r.Want.Events) > 0) {
					t.Errorf("request %d: new events %q, want %q", i, newKeys, r.Want.Events)
				}
			}
		})
	}
}

// checkEvent checks what every event must be: no token in its JSON, and a
// typed payload where the package declares one.
func checkEvent(t *testing.T, ev webhook.Event) {
	t.Helper()
	var doc struct {
		Token  *string `json:"token"`
		Header struct {
			Token *string `json:"token"`
		} `json:"header"`
	}
	if err := json.Unmarshal(ev.JSON, &doc); err != nil || doc.Token != nil || doc.Header.Token != nil {
		t.Errorf("event JSON %s: %v, or it carries the token", ev.JSON, err)
	}
	if ev.Type != feishu.MessageReceived.Name {
		return
	}
	var m feishu.Event[feishu.MessageReceive]
	if err := json.Unmarshal(ev.JSON, &m); err != nil {
		t.Fatalf("decode %s: %v", ev.Type, err)
	}
	msg := m.Event.Message
	if m.Header.EventID != ev.DedupKey || msg.MessageID == "" || msg.Content == "" || m.Event.Sender.SenderID.OpenID == "" {
		t.Errorf("MessageReceive = %+v: missing fields", m)
	}
	for _, mn := range msg.Mentions {
		if mn.Key == "" || mn.Name == "" || mn.ID.OpenID == "" {
			t.Errorf("mention %+v: missing fields", mn)
		}
	}
}

// TestSignReproducesVectors checks that Settings.Sign writes what Feishu
// sends: given the generator's IV (SHA-256("iv:" + name), first 16 bytes),
// clock and nonce, it reproduces the first request of the encrypted cases
// made so, byte for byte.
func TestSignReproducesVectors(t *testing.T) {
	n := 0
	for _, c := range intaketest.LoadVectors(t, vectorsFile).Cases {
		iv, ok := map[string]string{
			"encrypted_event_v2_and_retry": "encrypted_event_v2",
			"encrypted_challenge":          "encrypted_challenge",
		}[c.Name]
		if !ok {
			continue
		}
		s, r := settings(t, c.Settings), c.Requests[0]
		var env struct{ Encrypt string }
		json.Unmarshal([]byte(r.Body), &env)
		plain, err := feishu.Decrypt(s.EncryptKey.Reveal(), env.Encrypt)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		sum := sha256.Sum256([]byte("iv:" + iv))
		ts, _ := strconv.ParseInt(r.Headers[feishu.TimestampHeader], 10, 64)
		got, err := s.Sign(plain, provider.SignOptions{Now: time.Unix(ts, 0), Nonce: r.Headers[feishu.NonceHeader], Random: bytes.NewReader(sum[:16])})
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if string(got.Body) != r.Body || got.Method != http.MethodPost {
			t.Errorf("%s: %s %s\nwant POST %s", c.Name, got.Method, got.Body, r.Body)
		}
		for _, k := range []string{feishu.TimestampHeader, feishu.NonceHeader, feishu.SignatureHeader} {
			if got.Header.Get(k) != r.Headers[k] {
				t.Errorf("%s: %s = %q, want %q", c.Name, k, got.Header.Get(k), r.Headers[k])
			}
		}
		n++
	}
	if n != 2 {
		t.Fatalf("%d cases reproduced, want the signed event and the unsigned handshake", n)
	}
}

// TestRegistered checks the registration and its demo: the demo settings
// are a valid section; the demo body signs and parses to the demo key;
// a retry hashes the same.
func TestRegistered(t *testing.T) {
	p, ok := feishu.Provider(), true
	if !ok {
		t.Fatal("feishu is not registered")
	}
	if _, ok := p.NewSettings().(provider.Handshaker); !ok {
		t.Error("Settings is not a provider.Handshaker: the url_verification handshake is not offered")
	}
	if p.Reply.Status != http.StatusOK || string(p.Reply.Body) != `{"msg":"success"}` || p.AnswerWithin != 3*time.Second {
		t.Errorf("registration: %+v", p)
	}
	raw, _ := json.Marshal(p.Demo.Settings)
	s := p.NewSettings().(*feishu.Settings)
	if err := json.Unmarshal(raw, s); err != nil || len(s.Validate()) != 0 {
		t.Fatalf("demo settings %s: %v %v", raw, err, s.Validate())
	}
	parser, err := s.Parser(provider.ParserOptions{})
	if err != nil {
		t.Fatal(err)
	}
	id := p.Demo.ID("tag", 7)
	if len(id) != 32 || id == p.Demo.ID("tag", 8) || id == p.Demo.ID("tah", 7) {
		t.Errorf("demo ids %q, %q", id, p.Demo.ID("tag", 8))
	}
	now := time.Unix(1700000000, 0)
	var hashes []string
	for _, retry := range []bool{false, true} {
		body := p.Demo.Body([]string{id}, now, retry)
		r, err := s.Sign(body, provider.SignOptions{Now: now, Random: rand.Reader})
		if err != nil {
			t.Fatal(err)
		}
		d, err := parser.Parse(context.Background(), &webhook.Request{Method: r.Method, Header: r.Header, Body: r.Body, Now: now})
		if err != nil {
			t.Fatalf("demo: %v", err)
		}
		ev := d.Events[0]
		if ev.DedupKey != p.Demo.Key(id) || ev.Type != feishu.MessageReceived.Name || !ev.OccurredAt.Equal(now) {
			t.Errorf("demo event %q %q %s", ev.DedupKey, ev.Type, ev.OccurredAt)
		}
		checkEvent(t, ev)
		hashes = append(hashes, ev.PayloadHash)
	}
	if hashes[0] != hashes[1] {
		t.Error("a demo retry hashes differently")
	}
}

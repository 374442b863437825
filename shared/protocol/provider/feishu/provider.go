package feishu

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/protocol/provider"
)

// Provider returns the provider (its line in shared/protocol/providers).
func Provider() *provider.Provider {
	return provider.New[Settings](provider.Provider{
		Name:  Name,
		Label: "Feishu / Lark",
		Docs:  "https://open.feishu.cn/document/ukTMukTMukTM/uYDNxYjL2QTM24iN0EjN/event-subscription-configure-/encrypt-key-encryption-configuration-case",
		Signature: "the event JSON with the verificationToken; with an encryptKey, encrypted and signed (X-Lark-Signature);\n" +
			"the handshake (--verify) is a url_verification body, encrypted like an event but unsigned",
		DedupKey:     "the event's header.event_id (schema 1.0: \"v1:\" + uuid)",
		Reply:        successReply(),
		AnswerWithin: 3 * time.Second,
		Demo: provider.Demo{
			Settings: map[string]string{"verificationToken": "demoVerificationToken0000000000", "encryptKey": "demoEncryptKey000000000000000000"},
			ID:       demoID,
			Body:     demoBody,
			// 15 s, 5 min, 1 h and 6 h, compressed.
			Retry: provider.Retry{Policy: "feishu 15s/5m/1h/6h", Waits: []time.Duration{1500 * time.Millisecond,
				5 * time.Second, 10 * time.Second, 20 * time.Second}},
		},
	})
}

// Settings is a tenant's Feishu / Lark app: its "feishu" section of the
// tenants document, {"verificationToken": "...", "encryptKey": "..."}, the
// values of the app's "Events and callbacks > Encryption strategy" page.
type Settings struct {
	// VerificationToken is the app's Verification Token. Required.
	VerificationToken provider.Secret `json:"verificationToken"`
	// EncryptKey is the app's Encrypt Key. Optional: absent when the app
	// has none, and Feishu then sends plaintext and signs nothing.
	EncryptKey provider.Secret `json:"encryptKey,omitempty"`
}

// config is the parser configuration of s.
func (s *Settings) config(tolerance time.Duration) Config {
	return Config{VerificationToken: s.VerificationToken.Reveal(), EncryptKey: s.EncryptKey.Reveal(), Tolerance: tolerance}
}

// Validate reports a missing verification token, and a token or key with
// white space at either end (a pasting slip that would fail every request,
// since both are used byte for byte).
func (s *Settings) Validate() []provider.Problem {
	var ps provider.Problems
	trimmed := func(v provider.Secret) bool { return strings.TrimSpace(v.Reveal()) == v.Reveal() }
	ps.Require("verificationToken", s.VerificationToken.Reveal())
	if s.VerificationToken != "" && !trimmed(s.VerificationToken) {
		ps.Add("verificationToken", "must not begin or end with white space")
	}
	if !trimmed(s.EncryptKey) {
		ps.Add("encryptKey", "must not begin or end with white space")
	}
	return ps
}

// Parser returns the tenant's [Parser]. A zero tolerance means
// [DefaultTolerance]; a negative one turns the timestamp window off (the
// SDKs check none).
func (s *Settings) Parser(opts provider.ParserOptions) (webhook.Parser, error) {
	return New(s.config(opts.Tolerance))
}

// Sign returns the POST Feishu would send for body, a JSON object (an event
// or a url_verification, the handshake: {"challenge": "...", "type":
// "url_verification"}): the tenant's verification token is put in
// (header.token in schema 2.0, token otherwise) when the body's is missing
// or another; with an Encrypt Key the body is encrypted ([Encrypt]) and,
// unless it is a url_verification (which Feishu sends unsigned), signed with
// opts.Now and opts.Nonce (random if empty) ([Signature]).
func (s *Settings) Sign(body []byte, opts provider.SignOptions) (*provider.Request, error) {
	c := s.config(0)
	if opts.Random == nil { // the caller sets it; never panic
		opts.Random = rand.Reader
	}
	if c.VerificationToken == "" {
		return nil, fmt.Errorf("feishu: no verification token: %w", provider.ErrNotConfigured)
	}
	plain, handshake, err := withToken(body, c.VerificationToken)
	if err != nil {
		return nil, err
	}
	r := provider.NewRequest(http.MethodPost)
	r.Header.Set("Content-Type", contentType)
	if c.EncryptKey == "" {
		r.Body = plain
		return r, nil
	}
	enc, err := Encrypt(c.EncryptKey, plain, opts.Random)
	if err != nil {
		return nil, err
	}
	r.Body, err = json.Marshal(struct {
		Encrypt string `json:"encrypt"`
	}{enc})
	if err != nil {
		return nil, fmt.Errorf("feishu: sign: %w", err)
	}
	if handshake {
		return r, nil
	}
	nonce := opts.Nonce
	if nonce == "" {
		var b [8]byte
		if _, err := io.ReadFull(opts.Random, b[:]); err != nil {
			return nil, fmt.Errorf("feishu: sign: read nonce: %w", err)
		}
		nonce = hex.EncodeToString(b[:])
	}
	ts := strconv.FormatInt(opts.Now.Unix(), 10)
	r.Header.Set(TimestampHeader, ts)
	r.Header.Set(NonceHeader, nonce)
	r.Header.Set(SignatureHeader, Signature(ts, nonce, c.EncryptKey, r.Body))
	return r, nil
}

// Handshake returns the url_verification POST Feishu sends when the
// request URL is set, carrying challenge: {"challenge": ..., "token": ...,
// "type": "url_verification"}, encrypted (and unsigned, as Feishu sends it)
// when the tenant has an Encrypt Key, plain otherwise (see [Settings.Sign]).
func (s *Settings) Handshake(challenge string, opts provider.SignOptions) (*provider.Request, error) {
	return provider.SignJSON(s, map[string]string{"challenge": challenge, "type": typeURLVerification}, opts)
}

// HandshakeReply returns the answer Feishu expects to a url_verification:
// 200 {"challenge": challenge}, in JSON.
func (s *Settings) HandshakeReply(challenge string) webhook.Reply { return challengeReply(challenge) }

// withToken returns plaintext with the verification token set, unchanged
// if it already carries it, and whether it is a url_verification. Errors
// wrap [provider.ErrBadBody].
func withToken(plaintext []byte, token string) ([]byte, bool, error) {
	dec := json.NewDecoder(bytes.NewReader(plaintext))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil || dec.More() {
		return nil, false, fmt.Errorf("feishu: the body is a JSON object: %w", provider.ErrBadBody)
	}
	_, v2 := doc["schema"]
	handshake := !v2 && doc["type"] == typeURLVerification
	if tok, _ := tokenOf(plaintext); tok == token {
		return plaintext, handshake, nil
	}
	if v2 {
		h, ok := doc["header"].(map[string]any)
		if !ok {
			return nil, false, fmt.Errorf("feishu: schema 2.0 body without a header object: %w", provider.ErrBadBody)
		}
		h["token"] = token
	} else {
		doc["token"] = token
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return nil, false, fmt.Errorf("feishu: sign: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), handshake, nil
}

// demoID returns an event_id in Feishu's format, 32 lowercase hex digits,
// derived from tag and n.
func demoID(tag string, n uint64) string {
	sum := sha256.Sum256([]byte(tag + "#" + strconv.FormatUint(n, 10)))
	return hex.EncodeToString(sum[:16])
}

// demoBody returns an im.message.receive_v1 event (a user sent the bot
// "hello") with event_id ids[0], sent at at. Feishu does not mark retries.
func demoBody(ids []string, at time.Time, _ bool) []byte {
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	ms := q(strconv.FormatInt(at.UnixMilli(), 10))
	return []byte(`{"schema":"2.0","header":{"event_id":` + q(ids[0]) + `,"event_type":"im.message.receive_v1","create_time":` + ms +
		`,"token":"","app_id":"cli_demo0000000000","tenant_key":"demo0000tenant00"},"event":{"sender":{"sender_id":{"open_id":"ou_demo0000000000000000000000000000"},"sender_type":"user","tenant_key":"demo0000tenant00"},` +
		`"message":{"message_id":` + q("om_"+ids[0]) + `,"create_time":` + ms + `,"chat_id":"oc_demo0000000000000000000000000000","chat_type":"p2p","message_type":"text","content":"{\"text\":\"hello\"}"}}}`)
}

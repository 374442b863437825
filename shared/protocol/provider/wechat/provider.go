package wechat

import (
	"bytes"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/protocol/provider"
	"github.com/hookwall/hookwall/shared/protocol/provider/wxcrypto"
	"github.com/hookwall/hookwall/shared/protocol/provider/wxmsg"
)

// Name is WeChat's route name: /webhooks/wechat/{tenant}.
const Name = "wechat"

// The Official Account's message encryption modes (消息加解密方式), the
// values of [provider.SignOptions.Mode].
const (
	// ModeSafe (安全模式) posts only the ciphertext. The default with an
	// encodingAESKey.
	ModeSafe = "safe"
	// ModeCompat (兼容模式) posts the ciphertext and the plaintext fields.
	ModeCompat = "compat"
	// ModePlain (明文模式) posts the XML as it is. The default, and the only
	// mode the receiver accepts, without an encodingAESKey.
	ModePlain = "plain"
)

// Provider returns the provider (its line in shared/protocol/providers).
func Provider() *provider.Provider {
	return provider.New[Settings](provider.Provider{
		Name:         Name,
		Label:        "WeChat",
		Docs:         "https://developers.weixin.qq.com/doc/offiaccount/Basic_Information/Access_Overview.html",
		Signature:    "the message XML; --mode safe (ciphertext only; the default with an encodingAESKey),\ncompat (ciphertext and plaintext fields) or plain (the default without a key)",
		DedupKey:     `"msg:<MsgId>" for messages; a fingerprint of the event's fields for events (see the package doc)`,
		Reply:        rules.Ack,
		AnswerWithin: wxmsg.AnswerWithin,
		Modes:        []string{ModeSafe, ModeCompat, ModePlain},
		Demo: provider.Demo{
			Settings: map[string]string{"token": "HookwallLocalToken", "appId": "wx0000000000000001", "encodingAESKey": "HookwallLocalWeChatKeyNotASecret0123456789a"},
			ID:       wxmsg.DemoMsgID,
			Body:     demoBody,
			Key:      func(id string) string { return "msg:" + id },
			Retry:    provider.Retry{Policy: Name + " " + wxmsg.RetryPolicy, Waits: wxmsg.RetryWaits()},
		},
	})
}

// Settings is a tenant's Official Account server settings: its "wechat"
// section of the tenants document. An empty EncodingAESKey means plaintext
// mode.
type Settings struct {
	// Token signs the pushes.
	Token provider.Secret `json:"token"`
	// AppID is the account's AppID, the receiveid of encrypted messages.
	AppID string `json:"appId"`
	// EncodingAESKey is the 43-character message key (optional).
	EncodingAESKey provider.Secret `json:"encodingAESKey"`
}

// Validate reports missing or malformed fields.
func (s *Settings) Validate() []provider.Problem {
	var ps provider.Problems
	ps.Require("token", s.Token.Reveal())
	ps.Require("appId", s.AppID)
	if s.EncodingAESKey != "" {
		if _, err := wxcrypto.ParseKey(s.EncodingAESKey.Reveal()); err != nil {
			ps.Add("encodingAESKey", "must be 43 characters of base64 (or absent for plaintext mode)")
		}
	}
	return ps
}

// Parser returns the account's [Parser].
func (s *Settings) Parser(opts provider.ParserOptions) (webhook.Parser, error) {
	return New(Config{Token: s.Token.Reveal(), AppID: s.AppID, EncodingAESKey: s.EncodingAESKey.Reveal(), Tolerance: opts.Tolerance})
}

// Sign returns WeChat's POST of the message XML body in opts.Mode (default:
// safe with an encodingAESKey, plain without): signed in the query, and
// encrypted for the AppID in safe and compatible mode.
func (s *Settings) Sign(body []byte, opts provider.SignOptions) (*provider.Request, error) {
	hasKey := s.EncodingAESKey != ""
	mode := opts.Mode
	switch {
	case mode == "" && hasKey:
		mode = ModeSafe
	case mode == "":
		mode = ModePlain
	case !slices.Contains([]string{ModeSafe, ModeCompat, ModePlain}, mode):
		return nil, fmt.Errorf("wechat mode %q: want safe, compat or plain: %w", mode, provider.ErrNotConfigured)
	case mode == ModePlain && hasKey:
		return nil, fmt.Errorf("the settings have a wechat encodingAESKey, so the receiver refuses unencrypted (plain) posts; use mode safe or compat: %w", provider.ErrNotConfigured)
	case mode != ModePlain && !hasKey:
		return nil, fmt.Errorf("the settings have no wechat encodingAESKey (plaintext mode); mode %s needs one: %w", mode, provider.ErrNotConfigured)
	}
	m, err := wxmsg.ReadAddress(body)
	if err != nil {
		return nil, fmt.Errorf("a wechat body is the message XML (<xml><ToUserName>…</xml>): %w", provider.ErrBadBody)
	}
	ts, nonce, err := wxmsg.Stamp(opts.Now, opts.Nonce, opts.Random)
	if err != nil {
		return nil, fmt.Errorf("wechat: %w", err)
	}
	token := s.Token.Reveal()
	r := provider.NewRequest(http.MethodPost)
	r.Header.Set("Content-Type", "text/xml")
	r.Query.Set("signature", wxcrypto.Signature(token, ts, nonce))
	r.Query.Set("timestamp", ts)
	r.Query.Set("nonce", nonce)
	if m.FromUserName != "" {
		r.Query.Set("openid", m.FromUserName)
	}
	if mode == ModePlain {
		r.Body = body
		return r, nil
	}
	ct, err := wxmsg.Seal(s.EncodingAESKey.Reveal(), body, s.AppID, opts.Random)
	if err != nil {
		return nil, fmt.Errorf("wechat: %w", err)
	}
	r.Query.Set("encrypt_type", "aes")
	r.Query.Set("msg_signature", wxcrypto.Signature(token, ts, nonce, ct))
	encrypted := "<Encrypt>" + wxmsg.CDATA(ct) + "</Encrypt>"
	if mode == ModeSafe {
		r.Body = []byte("<xml><ToUserName>" + wxmsg.CDATA(m.ToUserName) + "</ToUserName>" + encrypted + "</xml>")
		return r, nil
	}
	// Compatible mode: the plaintext fields, then <Encrypt>, in one <xml>.
	trimmed := bytes.TrimSpace(body)
	end := bytes.LastIndex(trimmed, []byte("</xml>"))
	if end < 0 {
		return nil, fmt.Errorf("a wechat body ends with </xml>: %w", provider.ErrBadBody)
	}
	r.Body = slices.Concat(trimmed[:end], []byte(encrypted), trimmed[end:])
	return r, nil
}

// Handshake returns WeChat's GET URL verification: echostr is challenge
// itself, which the receiver answers.
func (s *Settings) Handshake(challenge string, opts provider.SignOptions) (*provider.Request, error) {
	ts, nonce, err := wxmsg.Stamp(opts.Now, opts.Nonce, opts.Random)
	if err != nil {
		return nil, fmt.Errorf("wechat: %w", err)
	}
	r := provider.NewRequest(http.MethodGet)
	r.Query.Set("signature", wxcrypto.Signature(s.Token.Reveal(), ts, nonce))
	r.Query.Set("timestamp", ts)
	r.Query.Set("nonce", nonce)
	r.Query.Set("echostr", challenge)
	return r, nil
}

// HandshakeReply returns challenge itself ([webhook.EchoReply]), the
// answer WeChat expects.
func (s *Settings) HandshakeReply(challenge string) webhook.Reply {
	return webhook.EchoReply(challenge)
}

// demoBody returns a text message to the demo account, of the first id.
func demoBody(ids []string, at time.Time, _ bool) []byte {
	return []byte(`<xml><ToUserName><![CDATA[gh_0000000000001]]></ToUserName><FromUserName><![CDATA[oKzKivH6hwSntH4tXK9ieGIoh47G]]></FromUserName>` +
		`<CreateTime>` + strconv.FormatInt(at.Unix(), 10) + `</CreateTime><MsgType><![CDATA[text]]></MsgType>` +
		`<Content><![CDATA[Hello from Hookwall]]></Content><MsgId>` + ids[0] + `</MsgId></xml>`)
}

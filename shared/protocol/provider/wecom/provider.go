package wecom

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/protocol/provider"
	"github.com/hookwall/hookwall/shared/protocol/provider/wxcrypto"
	"github.com/hookwall/hookwall/shared/protocol/provider/wxmsg"
)

// Name is WeCom's route name: /webhooks/wecom/{tenant}.
const Name = "wecom"

// demoCorpID and demoAgentID address the demo tenant's messages.
const (
	demoCorpID  = "ww0000000000000001"
	demoAgentID = "1000002"
)

// Provider returns the provider (its line in shared/protocol/providers).
func Provider() *provider.Provider {
	return provider.New[Settings](provider.Provider{
		Name:         Name,
		Label:        "WeCom",
		Docs:         "https://developer.work.weixin.qq.com/document/path/90238",
		Signature:    "the message XML encrypted for the CorpID, msg_signature/timestamp/nonce in the query",
		DedupKey:     `"msg:<AgentID>:<MsgId>" for messages; a fingerprint of the event's fields for events (see the package doc)`,
		Reply:        rules.Ack,
		AnswerWithin: wxmsg.AnswerWithin,
		Demo: provider.Demo{
			Settings: map[string]string{"token": "HookwallLocalToken", "encodingAESKey": "HookwallLocalDemoKeyNotASecret0123456789abc", "corpId": demoCorpID},
			ID:       wxmsg.DemoMsgID,
			Body:     demoBody,
			Key:      func(id string) string { return "msg:" + demoAgentID + ":" + id },
			Retry:    provider.Retry{Policy: Name + " " + wxmsg.RetryPolicy, Waits: wxmsg.RetryWaits()},
		},
	})
}

// Settings is a tenant's WeCom app callback: its "wecom" section of the
// tenants document.
type Settings struct {
	// Token signs the callbacks.
	Token provider.Secret `json:"token"`
	// EncodingAESKey is the 43-character key of the callback settings.
	EncodingAESKey provider.Secret `json:"encodingAESKey"`
	// CorpID is the expected receiveid (see [Config.CorpID]).
	CorpID string `json:"corpId"`
}

// Validate reports missing or malformed fields.
func (s *Settings) Validate() []provider.Problem {
	var ps provider.Problems
	ps.Require("token", s.Token.Reveal())
	if _, err := wxcrypto.ParseKey(s.EncodingAESKey.Reveal()); err != nil {
		ps.Add("encodingAESKey", "must be 43 characters of base64")
	}
	ps.Require("corpId", s.CorpID)
	return ps
}

// Parser returns the app's [Parser].
func (s *Settings) Parser(opts provider.ParserOptions) (webhook.Parser, error) {
	return New(Config{Token: s.Token.Reveal(), EncodingAESKey: s.EncodingAESKey.Reveal(), CorpID: s.CorpID, Tolerance: opts.Tolerance})
}

// Sign returns WeCom's POST of the message XML body: encrypted for the
// CorpID, in an envelope addressed to it (with the body's AgentID), signed
// in the query.
func (s *Settings) Sign(body []byte, opts provider.SignOptions) (*provider.Request, error) {
	m, err := wxmsg.ReadAddress(body)
	if err != nil {
		return nil, fmt.Errorf("a wecom body is the message XML (<xml><ToUserName>…</xml>): %w", provider.ErrBadBody)
	}
	r, ct, err := s.sealed(http.MethodPost, body, opts)
	if err != nil {
		return nil, err
	}
	r.Header.Set("Content-Type", "text/xml")
	env := "<xml><ToUserName>" + wxmsg.CDATA(s.CorpID) + "</ToUserName>"
	if m.AgentID != "" {
		env += "<AgentID>" + wxmsg.CDATA(m.AgentID) + "</AgentID>"
	}
	r.Body = []byte(env + "<Encrypt>" + wxmsg.CDATA(ct) + "</Encrypt></xml>")
	return r, nil
}

// Handshake returns WeCom's GET URL verification: echostr is challenge
// encrypted for the CorpID, and the receiver answers challenge.
func (s *Settings) Handshake(challenge string, opts provider.SignOptions) (*provider.Request, error) {
	r, enc, err := s.sealed(http.MethodGet, []byte(challenge), opts)
	if err != nil {
		return nil, err
	}
	r.Query.Set("echostr", enc)
	return r, nil
}

// HandshakeReply returns challenge itself ([webhook.EchoReply]), the
// answer WeCom expects.
func (s *Settings) HandshakeReply(challenge string) webhook.Reply {
	return webhook.EchoReply(challenge)
}

// sealed encrypts msg for the CorpID and returns the request with method
// whose query signs the ciphertext (msg_signature, timestamp, nonce), and
// the ciphertext.
func (s *Settings) sealed(method string, msg []byte, opts provider.SignOptions) (*provider.Request, string, error) {
	ct, err := wxmsg.Seal(s.EncodingAESKey.Reveal(), msg, s.CorpID, opts.Random)
	if err != nil {
		return nil, "", fmt.Errorf("wecom: %w", err)
	}
	ts, nonce, err := wxmsg.Stamp(opts.Now, opts.Nonce, opts.Random)
	if err != nil {
		return nil, "", fmt.Errorf("wecom: %w", err)
	}
	r := provider.NewRequest(method)
	r.Query.Set("msg_signature", wxcrypto.Signature(s.Token.Reveal(), ts, nonce, ct))
	r.Query.Set("timestamp", ts)
	r.Query.Set("nonce", nonce)
	return r, ct, nil
}

// demoBody returns a text message to the demo app, of the first id.
func demoBody(ids []string, at time.Time, _ bool) []byte {
	return []byte(`<xml><ToUserName><![CDATA[` + demoCorpID + `]]></ToUserName><FromUserName><![CDATA[ZhangSan]]></FromUserName>` +
		`<CreateTime>` + strconv.FormatInt(at.Unix(), 10) + `</CreateTime><MsgType><![CDATA[text]]></MsgType>` +
		`<Content><![CDATA[Hello from Hookwall]]></Content><MsgId>` + ids[0] + `</MsgId><AgentID>` + demoAgentID + `</AgentID></xml>`)
}

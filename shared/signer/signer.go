package signer

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hookwall/hookwall/shared/provider/standard"
	"github.com/hookwall/hookwall/shared/provider/wxcrypto"
	"github.com/hookwall/hookwall/shared/tenants"
	"github.com/hookwall/hookwall/shared/webhook"
)

// Mode is a WeChat Official Account message encryption mode.
type Mode string

// WeChat's modes (the Official Account's 消息加解密方式).
const (
	// ModeSafe (安全模式) posts only the ciphertext. The default for a tenant
	// with an encodingAESKey.
	ModeSafe Mode = "safe"
	// ModeCompat (兼容模式) posts the ciphertext and the plaintext fields.
	ModeCompat Mode = "compat"
	// ModePlain (明文模式) posts the XML as it is. The default, and the only
	// mode the receiver accepts, for a tenant without an encodingAESKey.
	ModePlain Mode = "plain"
)

// Modes lists the WeChat modes, for usage messages.
var Modes = []Mode{ModeSafe, ModeCompat, ModePlain}

// Providers lists the providers Sign knows, in the order usage messages show them.
var Providers = []string{webhook.LINE, webhook.WeCom, webhook.WeChat, webhook.Standard}

// ErrNotConfigured reports a tenant without the provider's settings, or a
// mode its settings cannot use.
var ErrNotConfigured = errors.New("not configured for this tenant")

// ErrBadBody reports a body the provider's platform could not have sent
// (LINE and Standard Webhooks: not JSON; WeCom and WeChat: not message XML).
var ErrBadBody = errors.New("bad body")

// Options tune Sign and Verification. The zero value signs now, with fresh
// randomness.
type Options struct {
	// Mode is the WeChat mode (WeChat only; empty: safe with an
	// encodingAESKey, plain without).
	Mode Mode
	// Now is the signing time (default time.Now()).
	Now time.Time
	// Nonce is the WeCom/WeChat nonce (default 10 random digits).
	Nonce string
	// MessageID is the Standard Webhooks webhook-id (default "msg_" and a
	// random id).
	MessageID string
	// Random is the source of nonces, ids and the AES random prefix
	// (default crypto/rand).
	Random io.Reader
}

func (o *Options) defaults() {
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	if o.Random == nil {
		o.Random = rand.Reader
	}
}

// Request is a signed request for the receiver.
type Request struct {
	// Method is POST, or GET for a URL verification.
	Method string
	// Provider and Tenant are the route's path parameters.
	Provider, Tenant string
	// Query is the query string's parameters (WeCom, WeChat).
	Query url.Values
	// Header holds the headers that matter (Content-Type and the signature).
	Header http.Header
	// Body is the exact body that was signed.
	Body []byte
}

// Path returns the receiver route of the request: /webhooks/{provider}/{tenant}.
func (r *Request) Path() string {
	return "/webhooks/" + url.PathEscape(r.Provider) + "/" + url.PathEscape(r.Tenant)
}

// URL returns the request's URL at base: base's scheme and host, and its
// path if it already ends with the route (or else base's path followed by
// the route, so a stage prefix such as https://api.example.com/prod
// works), with the query.
func (r *Request) URL(base string) (string, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("signer: %q is not an absolute http(s) URL", base)
	}
	route := r.Path()
	if !strings.HasSuffix(strings.TrimSuffix(u.Path, "/"), route) {
		u.Path = strings.TrimSuffix(u.Path, "/") + route
		u.RawPath = ""
	}
	u.RawQuery = r.Query.Encode()
	u.Fragment = ""
	return u.String(), nil
}

// HTTPRequest returns the request for the receiver at base (see [Request.URL]).
func (r *Request) HTTPRequest(ctx context.Context, base string) (*http.Request, error) {
	target, err := r.URL(base)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, r.Method, target, bytes.NewReader(r.Body))
	if err != nil {
		return nil, fmt.Errorf("signer: %w", err)
	}
	for k, v := range r.Header {
		req.Header[k] = slices.Clone(v)
	}
	return req, nil
}

// Curl returns a POSIX shell command that sends the request to base with
// curl: every argument single-quoted, the body passed verbatim with
// --data-binary (no trailing newline is added, so the signature holds).
func (r *Request) Curl(base string) (string, error) {
	target, err := r.URL(base)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("curl -sS -i -X " + r.Method + " " + shellQuote(target))
	keys := make([]string, 0, len(r.Header))
	for k := range r.Header {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		for _, v := range r.Header[k] {
			b.WriteString(" \\\n  -H " + shellQuote(k+": "+v))
		}
	}
	if len(r.Body) > 0 {
		b.WriteString(" \\\n  --data-binary " + shellQuote(string(r.Body)))
	}
	return b.String(), nil
}

// shellQuote quotes s for a POSIX shell: inside single quotes everything is
// literal, newlines included; a single quote is written as '\”.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Sign returns the request t's platform would send for provider with body:
// a JSON request body (LINE, Standard Webhooks) or the message XML (WeCom,
// WeChat), signed and for WeCom and WeChat encrypted as opts.Mode says.
// Errors wrap [webhook.ErrUnknownProvider], [ErrNotConfigured] or
// [ErrBadBody].
func Sign(t *tenants.Tenant, provider string, body []byte, opts Options) (*Request, error) {
	opts.defaults()
	if opts.Mode != "" && provider != webhook.WeChat {
		return nil, fmt.Errorf("signer: a mode applies to wechat only, not %s: %w", provider, ErrNotConfigured)
	}
	switch provider {
	case webhook.LINE:
		return signLINE(t, body)
	case webhook.Standard:
		return signStandard(t, body, opts)
	case webhook.WeCom:
		return signWeCom(t, body, opts)
	case webhook.WeChat:
		return signWeChat(t, body, opts)
	}
	return nil, unknownProvider(provider)
}

func unknownProvider(provider string) error {
	return fmt.Errorf("signer: provider %q: want one of %s: %w", provider, strings.Join(Providers, ", "), webhook.ErrUnknownProvider)
}

func notConfigured(t *tenants.Tenant, provider string) error {
	return fmt.Errorf("signer: tenant %q has no %s settings in the tenants document: %w", t.Name, provider, ErrNotConfigured)
}

func newRequest(t *tenants.Tenant, provider, method string) *Request {
	return &Request{Method: method, Provider: provider, Tenant: t.Name, Query: url.Values{}, Header: http.Header{}}
}

func signLINE(t *tenants.Tenant, body []byte) (*Request, error) {
	if t.LINE == nil {
		return nil, notConfigured(t, webhook.LINE)
	}
	if !json.Valid(body) {
		return nil, fmt.Errorf("signer: a LINE body is a JSON object with \"events\": %w", ErrBadBody)
	}
	mac := hmac.New(sha256.New, []byte(t.LINE.ChannelSecret.Reveal()))
	mac.Write(body)
	r := newRequest(t, webhook.LINE, http.MethodPost)
	r.Header.Set("Content-Type", "application/json; charset=utf-8")
	r.Header.Set("X-Line-Signature", base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	r.Body = body
	return r, nil
}

func signStandard(t *tenants.Tenant, body []byte, opts Options) (*Request, error) {
	s := t.Standard
	if s == nil {
		return nil, notConfigured(t, webhook.Standard)
	}
	if !json.Valid(body) {
		return nil, fmt.Errorf("signer: a Standard Webhooks body is JSON: %w", ErrBadBody)
	}
	var secret string
	switch {
	case len(s.Secrets) > 0:
		secret = s.Secrets[0].Reveal()
	case len(s.RawSecrets) > 0: // a raw key, as its Base64 spelling
		secret = base64.StdEncoding.EncodeToString([]byte(s.RawSecrets[0].Reveal()))
	default:
		return nil, notConfigured(t, webhook.Standard)
	}
	id := opts.MessageID
	if id == "" {
		rid, err := randomID(opts.Random)
		if err != nil {
			return nil, err
		}
		id = "msg_" + rid
	}
	sig, err := standard.Sign(secret, id, opts.Now.Unix(), body)
	if err != nil {
		return nil, fmt.Errorf("signer: tenant %q standard secret: %w", t.Name, err)
	}
	r := newRequest(t, webhook.Standard, http.MethodPost)
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Webhook-Id", id)
	r.Header.Set("Webhook-Timestamp", strconv.FormatInt(opts.Now.Unix(), 10))
	r.Header.Set("Webhook-Signature", sig)
	r.Body = body
	return r, nil
}

// message is what the signer reads of a WeCom/WeChat message to address its
// envelope and query.
type message struct {
	XMLName      xml.Name `xml:"xml"`
	ToUserName   string   `xml:"ToUserName"`
	FromUserName string   `xml:"FromUserName"`
	AgentID      string   `xml:"AgentID"`
}

func parseMessage(provider string, body []byte) (message, error) {
	var m message
	if err := xml.Unmarshal(body, &m); err != nil {
		return m, fmt.Errorf("signer: a %s body is the message XML (<xml><ToUserName>…</xml>): %w", provider, ErrBadBody)
	}
	return m, nil
}

func signWeCom(t *tenants.Tenant, body []byte, opts Options) (*Request, error) {
	c := t.WeCom
	if c == nil {
		return nil, notConfigured(t, webhook.WeCom)
	}
	m, err := parseMessage(webhook.WeCom, body)
	if err != nil {
		return nil, err
	}
	ct, err := encrypt(c.EncodingAESKey.Reveal(), body, c.CorpID, opts.Random)
	if err != nil {
		return nil, fmt.Errorf("signer: tenant %q wecom: %w", t.Name, err)
	}
	ts, nonce, err := stamp(&opts)
	if err != nil {
		return nil, err
	}
	r := newRequest(t, webhook.WeCom, http.MethodPost)
	r.Query.Set("msg_signature", wxcrypto.Signature(c.Token.Reveal(), ts, nonce, ct))
	r.Query.Set("timestamp", ts)
	r.Query.Set("nonce", nonce)
	r.Header.Set("Content-Type", "text/xml")
	env := "<xml><ToUserName>" + cdata(c.CorpID) + "</ToUserName>"
	if m.AgentID != "" {
		env += "<AgentID>" + cdata(m.AgentID) + "</AgentID>"
	}
	r.Body = []byte(env + "<Encrypt>" + cdata(ct) + "</Encrypt></xml>")
	return r, nil
}

func signWeChat(t *tenants.Tenant, body []byte, opts Options) (*Request, error) {
	c := t.WeChat
	if c == nil {
		return nil, notConfigured(t, webhook.WeChat)
	}
	hasKey := c.EncodingAESKey != ""
	mode := opts.Mode
	switch {
	case mode == "" && hasKey:
		mode = ModeSafe
	case mode == "":
		mode = ModePlain
	case !slices.Contains(Modes, mode):
		return nil, fmt.Errorf("signer: wechat mode %q: want safe, compat or plain: %w", mode, ErrNotConfigured)
	case mode == ModePlain && hasKey:
		return nil, fmt.Errorf("signer: tenant %q has a wechat encodingAESKey, so the receiver refuses its unencrypted (plain) posts; use mode safe or compat: %w", t.Name, ErrNotConfigured)
	case mode != ModePlain && !hasKey:
		return nil, fmt.Errorf("signer: tenant %q has no wechat encodingAESKey (plaintext mode); mode %s needs one: %w", t.Name, mode, ErrNotConfigured)
	}
	m, err := parseMessage(webhook.WeChat, body)
	if err != nil {
		return nil, err
	}
	ts, nonce, err := stamp(&opts)
	if err != nil {
		return nil, err
	}
	token := c.Token.Reveal()
	r := newRequest(t, webhook.WeChat, http.MethodPost)
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
	ct, err := encrypt(c.EncodingAESKey.Reveal(), body, c.AppID, opts.Random)
	if err != nil {
		return nil, fmt.Errorf("signer: tenant %q wechat: %w", t.Name, err)
	}
	r.Query.Set("encrypt_type", "aes")
	r.Query.Set("msg_signature", wxcrypto.Signature(token, ts, nonce, ct))
	encrypted := "<Encrypt>" + cdata(ct) + "</Encrypt>"
	if mode == ModeSafe {
		r.Body = []byte("<xml><ToUserName>" + cdata(m.ToUserName) + "</ToUserName>" + encrypted + "</xml>")
		return r, nil
	}
	// Compatible mode: the plaintext fields, then <Encrypt>, in one <xml>.
	trimmed := bytes.TrimSpace(body)
	end := bytes.LastIndex(trimmed, []byte("</xml>"))
	if end < 0 {
		return nil, fmt.Errorf("signer: a wechat body ends with </xml>: %w", ErrBadBody)
	}
	r.Body = slices.Concat(trimmed[:end], []byte(encrypted), trimmed[end:])
	return r, nil
}

// Verification returns the GET URL-verification handshake of provider
// (wecom or wechat) for t, carrying echo: WeCom's echostr is echo encrypted
// for the CorpID (the receiver answers echo), WeChat's is echo itself.
func Verification(t *tenants.Tenant, provider, echo string, opts Options) (*Request, error) {
	opts.defaults()
	if echo == "" {
		return nil, errors.New("signer: empty echostr")
	}
	ts, nonce, err := stamp(&opts)
	if err != nil {
		return nil, err
	}
	switch provider {
	case webhook.WeCom:
		c := t.WeCom
		if c == nil {
			return nil, notConfigured(t, provider)
		}
		enc, err := encrypt(c.EncodingAESKey.Reveal(), []byte(echo), c.CorpID, opts.Random)
		if err != nil {
			return nil, fmt.Errorf("signer: tenant %q wecom: %w", t.Name, err)
		}
		r := newRequest(t, provider, http.MethodGet)
		r.Query.Set("msg_signature", wxcrypto.Signature(c.Token.Reveal(), ts, nonce, enc))
		r.Query.Set("timestamp", ts)
		r.Query.Set("nonce", nonce)
		r.Query.Set("echostr", enc)
		return r, nil
	case webhook.WeChat:
		c := t.WeChat
		if c == nil {
			return nil, notConfigured(t, provider)
		}
		r := newRequest(t, provider, http.MethodGet)
		r.Query.Set("signature", wxcrypto.Signature(c.Token.Reveal(), ts, nonce))
		r.Query.Set("timestamp", ts)
		r.Query.Set("nonce", nonce)
		r.Query.Set("echostr", echo)
		return r, nil
	case webhook.LINE, webhook.Standard:
		return nil, fmt.Errorf("signer: %s has no GET URL verification: %w", provider, ErrNotConfigured)
	}
	return nil, unknownProvider(provider)
}

// stamp returns the timestamp and nonce of a WeCom/WeChat request.
func stamp(opts *Options) (ts, nonce string, err error) {
	nonce = opts.Nonce
	if nonce == "" {
		var b [10]byte
		if _, err := io.ReadFull(opts.Random, b[:]); err != nil {
			return "", "", fmt.Errorf("signer: nonce: %w", err)
		}
		for i := range b {
			b[i] = '0' + b[i]%10
		}
		nonce = string(b[:])
	}
	return strconv.FormatInt(opts.Now.Unix(), 10), nonce, nil
}

// encrypt encrypts msg for receiveID under encodingAESKey with a random prefix.
func encrypt(encodingAESKey string, msg []byte, receiveID string, random io.Reader) (string, error) {
	key, err := wxcrypto.ParseKey(encodingAESKey)
	if err != nil {
		return "", err
	}
	var prefix [16]byte
	if _, err := io.ReadFull(random, prefix[:]); err != nil {
		return "", fmt.Errorf("random prefix: %w", err)
	}
	return wxcrypto.Encrypt(key, prefix[:], msg, receiveID)
}

// cdata wraps s in a CDATA section (splitting any "]]>" it holds).
func cdata(s string) string {
	return "<![CDATA[" + strings.ReplaceAll(s, "]]>", "]]]]><![CDATA[>") + "]]>"
}

// randomID returns 26 random characters of A–Z and 2–7 read from random.
func randomID(random io.Reader) (string, error) {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	var b [26]byte
	if _, err := io.ReadFull(random, b[:]); err != nil {
		return "", fmt.Errorf("signer: random id: %w", err)
	}
	for i := range b {
		b[i] = alphabet[b[i]%32]
	}
	return string(b[:]), nil
}

package wechat

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/protocol/provider/wxcrypto"
	"github.com/hookwall/hookwall/shared/protocol/provider/wxmsg"
	"github.com/hookwall/hookwall/shared/protocol/provider/xmljson"
)

// DefaultTolerance is the timestamp window used when [Config.Tolerance] is 0.
const DefaultTolerance = wxmsg.DefaultTolerance

// Config holds one Official Account's server settings.
type Config struct {
	// Token signs requests. Required.
	Token string
	// AppID is the receiveid of encrypted messages. Required with EncodingAESKey.
	AppID string
	// EncodingAESKey is the 43-character message key. Optional: empty means
	// plaintext mode only; when set, unencrypted POSTs are rejected.
	EncodingAESKey string
	// Tolerance is the accepted |now - timestamp| for the query timestamp.
	// Optional: 0 means [DefaultTolerance], a negative value disables the check.
	Tolerance time.Duration
}

// Parser verifies and parses one Official Account's pushes. It implements
// [webhook.Parser] and is safe for concurrent use.
type Parser struct {
	acct wxmsg.Account // Key is nil in plaintext mode
}

var _ webhook.Parser = (*Parser)(nil)

// New validates c and returns a Parser for it.
func New(c Config) (*Parser, error) {
	if c.Token == "" {
		return nil, errors.New("wechat: config: Token is required")
	}
	p := &Parser{acct: wxmsg.Account{Token: c.Token, ReceiveID: c.AppID, Tolerance: c.Tolerance}}
	if c.EncodingAESKey != "" {
		if c.AppID == "" {
			return nil, errors.New("wechat: config: AppID is required with EncodingAESKey")
		}
		key, err := wxcrypto.ParseKey(c.EncodingAESKey)
		if err != nil {
			return nil, fmt.Errorf("wechat: config: EncodingAESKey: %w", err)
		}
		p.acct.Key = key
	}
	return p, nil
}

// rules are WeChat's on top of the family's callback protocol: the type of
// a message is its Event or MsgType, its dedup key the one of the package
// documentation, and a POST is acknowledged with "success".
var rules = wxmsg.Rules{Provider: Name, Type: wxmsg.Type, Key: dedupKey, Ack: wxmsg.Ack([]byte("success"))}

// Parse verifies req and returns the handshake reply (GET) or the one event
// of a POST. Errors wrap [webhook.ErrBadSignature], [webhook.ErrStaleTimestamp],
// [webhook.ErrMalformed] or [webhook.ErrMethodNotAllowed].
func (p *Parser) Parse(ctx context.Context, req *webhook.Request) (*webhook.Delivery, error) {
	return rules.Parse(req, p.echo, p.DecryptBody)
}

// echo authenticates a GET URL verification (the plain signature and the
// window) and returns its echostr.
func (p *Parser) echo(req *webhook.Request) (string, error) {
	if err := p.verifyPlain(req); err != nil {
		return "", err
	}
	echo := req.Query.Get("echostr")
	if echo == "" {
		return "", fmt.Errorf("wechat: missing echostr: %w", webhook.ErrMalformed)
	}
	return echo, nil
}

// DecryptBody authenticates a POST and returns its message bytes: the
// decrypted <Encrypt> for encrypt_type=aes, else (plaintext mode, no key
// configured) the body itself. [Parser.Parse] uses it; it is exported so the
// official crypto vectors, whose plaintext is not XML, can be checked alone.
func (p *Parser) DecryptBody(req *webhook.Request) ([]byte, error) {
	switch req.Query.Get("encrypt_type") {
	case "aes":
		return p.decrypt(req)
	case "", "raw":
		if p.acct.Key != nil {
			return nil, fmt.Errorf("wechat: unencrypted message for an account with encryption enabled: %w", webhook.ErrBadSignature)
		}
		if err := p.verifyPlain(req); err != nil {
			return nil, err
		}
		return req.Body, nil
	default:
		return nil, fmt.Errorf("wechat: unknown encrypt_type: %w", webhook.ErrBadSignature)
	}
}

// verifyPlain checks signature over [token, timestamp, nonce] and the window.
func (p *Parser) verifyPlain(req *webhook.Request) error {
	sig, ts, nonce := req.Query.Get("signature"), req.Query.Get("timestamp"), req.Query.Get("nonce")
	if sig == "" || ts == "" || nonce == "" {
		return fmt.Errorf("wechat: missing signature, timestamp or nonce: %w", webhook.ErrBadSignature)
	}
	if !wxcrypto.VerifySignature(sig, p.acct.Token, ts, nonce) {
		return fmt.Errorf("wechat: signature: %w", webhook.ErrBadSignature)
	}
	return p.checkWindow(ts, req.Now)
}

func (p *Parser) decrypt(req *webhook.Request) ([]byte, error) {
	if p.acct.Key == nil {
		return nil, fmt.Errorf("wechat: encrypted message but no EncodingAESKey configured: %w", webhook.ErrBadSignature)
	}
	plain, err := p.acct.OpenEnvelope(req.Query, req.Body, req.Now)
	if err != nil {
		return nil, fmt.Errorf("wechat: %w", err)
	}
	return plain, nil
}

// checkWindow enforces the tolerance on the (already signed) timestamp.
func (p *Parser) checkWindow(ts string, now time.Time) error {
	if err := wxmsg.CheckWindow(ts, now, p.acct.Tolerance); err != nil {
		return fmt.Errorf("wechat: %w", err)
	}
	return nil
}

// NewEvent builds the [webhook.Event] for an authentic message XML: type,
// time, normalised JSON, payload hash and the dedup key described in the
// package documentation. Errors wrap [webhook.ErrMalformed].
func NewEvent(plainXML []byte) (*webhook.Event, error) {
	return rules.Event(plainXML)
}

// eventFields are the fingerprint names of events, in order.
var eventFields = []string{"ToUserName", "FromUserName", "CreateTime", "Event", "EventKey", "MsgID"}

func dedupKey(doc *xmljson.Doc, _ *webhook.Event) string {
	if id := doc.Get("MsgId"); id != "" {
		if wxmsg.IsToken(id, 64) {
			return "msg:" + id
		}
		return "msgh:" + wxmsg.Fingerprint(wxmsg.Field{Name: "MsgId", Value: id})
	}
	fields := make([]wxmsg.Field, len(eventFields))
	for i, n := range eventFields {
		fields[i] = wxmsg.Field{Name: n, Value: doc.Get(n)}
	}
	return "evt:" + wxmsg.Fingerprint(fields...)
}

package wecom

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hookwall/hookwall/shared/provider/wxcrypto"
	"github.com/hookwall/hookwall/shared/provider/wxmsg"
	"github.com/hookwall/hookwall/shared/provider/xmljson"
	"github.com/hookwall/hookwall/shared/webhook"
)

// DefaultTolerance is the timestamp window used when [Config.Tolerance] is 0.
const DefaultTolerance = wxmsg.DefaultTolerance

// Config holds one tenant's WeCom callback settings.
type Config struct {
	// Token signs requests. Required.
	Token string
	// EncodingAESKey is the 43-character key from the callback settings. Required.
	EncodingAESKey string
	// CorpID is the expected receiveid: the CorpID for an enterprise's own
	// apps, the suite id for third-party suite callbacks. Required.
	CorpID string
	// Tolerance is the accepted |now - timestamp| for the query timestamp.
	// Optional: 0 means [DefaultTolerance], a negative value disables the check.
	Tolerance time.Duration
}

// Parser verifies and parses one tenant's WeCom callbacks. It implements
// [webhook.Parser] and is safe for concurrent use.
type Parser struct {
	acct wxmsg.Account
}

var _ webhook.Parser = (*Parser)(nil)

// New validates c and returns a Parser for it.
func New(c Config) (*Parser, error) {
	if c.Token == "" {
		return nil, errors.New("wecom: config: Token is required")
	}
	if c.CorpID == "" {
		return nil, errors.New("wecom: config: CorpID is required")
	}
	key, err := wxcrypto.ParseKey(c.EncodingAESKey)
	if err != nil {
		return nil, fmt.Errorf("wecom: config: EncodingAESKey: %w", err)
	}
	tol := c.Tolerance
	if tol == 0 {
		tol = DefaultTolerance
	}
	return &Parser{acct: wxmsg.Account{Token: c.Token, Key: key, ReceiveID: c.CorpID, Tolerance: tol}}, nil
}

// Parse verifies req and returns the handshake reply (GET) or the one event
// of a POST. Errors wrap [webhook.ErrBadSignature], [webhook.ErrStaleTimestamp],
// [webhook.ErrMalformed] or [webhook.ErrMethodNotAllowed].
func (p *Parser) Parse(ctx context.Context, req *webhook.Request) (*webhook.Delivery, error) {
	if req == nil {
		return nil, fmt.Errorf("wecom: nil request: %w", webhook.ErrMalformed)
	}
	switch req.Method {
	case "GET":
		return p.verifyURL(req)
	case "POST":
		return p.parsePost(req)
	default:
		return nil, fmt.Errorf("wecom: method %.10q: %w", req.Method, webhook.ErrMethodNotAllowed)
	}
}

func (p *Parser) verifyURL(req *webhook.Request) (*webhook.Delivery, error) {
	echo := req.Query.Get("echostr")
	if echo == "" {
		return nil, fmt.Errorf("wecom: missing echostr: %w", webhook.ErrBadSignature)
	}
	plain, err := p.acct.OpenCiphertext(req.Query, echo, req.Now)
	if err != nil {
		return nil, fmt.Errorf("wecom: url verification: %w", err)
	}
	return &webhook.Delivery{Verification: true, Reply: webhook.EchoReply(string(plain))}, nil
}

// DecryptBody verifies a POST's query signature and timestamp over the
// envelope's <Encrypt> and returns the decrypted message bytes. [Parser.Parse]
// uses it; it is exported for tools and tests that need the plaintext alone.
func (p *Parser) DecryptBody(req *webhook.Request) ([]byte, error) {
	plain, err := p.acct.OpenEnvelope(req.Query, req.Body, req.Now)
	if err != nil {
		return nil, fmt.Errorf("wecom: %w", err)
	}
	return plain, nil
}

func (p *Parser) parsePost(req *webhook.Request) (*webhook.Delivery, error) {
	plain, err := p.DecryptBody(req)
	if err != nil {
		return nil, err
	}
	ev, err := NewEvent(plain)
	if err != nil {
		return nil, err
	}
	return &webhook.Delivery{
		Events: []webhook.Event{*ev},
		Reply:  wxmsg.Ack(ackBody),
	}, nil
}

// ackBody is the acknowledgement WeCom expects for a POST: an empty body.
var ackBody = []byte{}

// NewEvent builds the [webhook.Event] for an authentic, decrypted callback
// XML: type, time, normalised JSON, payload hash and the dedup key described
// in the package documentation. Errors wrap [webhook.ErrMalformed].
func NewEvent(plainXML []byte) (*webhook.Event, error) {
	doc, err := xmljson.Convert(plainXML)
	if err != nil {
		return nil, fmt.Errorf("wecom: decrypted message: %w", err)
	}
	typ := wxmsg.Type(doc)
	if doc.Get("MsgType") == "" {
		typ = doc.Get("InfoType") // suite callbacks carry InfoType instead
	}
	if typ == "" {
		return nil, fmt.Errorf("wecom: decrypted message has no MsgType, Event or InfoType: %w", webhook.ErrMalformed)
	}
	ev := wxmsg.NewEvent(plainXML, doc, typ)
	ev.DedupKey = dedupKey(doc, typ, ev.PayloadHash)
	if !wxmsg.ValidKey(ev.DedupKey) { // unreachable with the key rules: a last guard
		return nil, fmt.Errorf("wecom: dedup key breaks the key contract: %w", webhook.ErrMalformed)
	}
	return ev, nil
}

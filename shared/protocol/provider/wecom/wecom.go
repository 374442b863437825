package wecom

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
	return &Parser{acct: wxmsg.Account{Token: c.Token, Key: key, ReceiveID: c.CorpID, Tolerance: c.Tolerance}}, nil
}

// rules are WeCom's on top of the family's callback protocol: the type of
// a message is its Event or MsgType (InfoType for suite callbacks), its
// dedup key the one of the package documentation, and a POST is
// acknowledged with an empty body.
var rules = wxmsg.Rules{Provider: Name, Type: eventType, Key: dedupKey, Ack: wxmsg.Ack([]byte{})}

// Parse verifies req and returns the handshake reply (GET) or the one event
// of a POST. Errors wrap [webhook.ErrBadSignature], [webhook.ErrStaleTimestamp],
// [webhook.ErrMalformed] or [webhook.ErrMethodNotAllowed].
func (p *Parser) Parse(ctx context.Context, req *webhook.Request) (*webhook.Delivery, error) {
	return rules.Parse(req, p.echo, p.DecryptBody)
}

// echo authenticates a GET URL verification and returns the plaintext of
// its echostr, the ciphertext its msg_signature covers.
func (p *Parser) echo(req *webhook.Request) (string, error) {
	echo := req.Query.Get("echostr")
	if echo == "" {
		return "", fmt.Errorf("wecom: missing echostr: %w", webhook.ErrBadSignature)
	}
	plain, err := p.acct.OpenCiphertext(req.Query, echo, req.Now)
	if err != nil {
		return "", fmt.Errorf("wecom: url verification: %w", err)
	}
	return string(plain), nil
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

// NewEvent builds the [webhook.Event] for an authentic, decrypted callback
// XML: type, time, normalised JSON, payload hash and the dedup key described
// in the package documentation. Errors wrap [webhook.ErrMalformed].
func NewEvent(plainXML []byte) (*webhook.Event, error) {
	return rules.Event(plainXML)
}

// eventType is [wxmsg.Type], or the InfoType of a suite callback, which
// carries no MsgType.
func eventType(doc *xmljson.Doc) string {
	if doc.Get("MsgType") == "" {
		return doc.Get("InfoType")
	}
	return wxmsg.Type(doc)
}

package feishu

import (
	"context"
	"crypto/cipher"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
)

// Name is the provider's name: the {provider} segment of the route
// /webhooks/{provider}/{tenant} and the record's provider attribute.
const Name = "feishu"

// DefaultTolerance is the accepted distance between X-Lark-Request-Timestamp
// and the verifier's clock when [Config.Tolerance] is zero (see the package
// documentation for the choice).
const DefaultTolerance = 5 * time.Minute

// MaxUnsignedBody is the largest unsigned body a tenant with an Encrypt Key
// decrypts: only the url_verification handshake comes unsigned, and its
// encrypted body is a few hundred bytes.
const MaxUnsignedBody = 4 << 10

// Config is one tenant's Feishu / Lark app configuration (the app's
// "Events and callbacks > Encryption strategy" page).
type Config struct {
	// VerificationToken is the app's Verification Token. Every request must
	// carry it. Required.
	VerificationToken string
	// EncryptKey is the app's Encrypt Key. Optional: empty means Feishu
	// sends plaintext and signs nothing, so the token is the only check.
	EncryptKey string
	// Tolerance bounds |now - X-Lark-Request-Timestamp| for signed requests.
	// Optional: 0 means [DefaultTolerance], a negative value disables the
	// check.
	Tolerance time.Duration
}

// Parser verifies and parses one tenant's Feishu deliveries. It implements
// [webhook.Parser] and is safe for concurrent use.
type Parser struct {
	token      []byte
	encryptKey string
	block      cipher.Block // nil without an Encrypt Key
	tolerance  time.Duration
}

var _ webhook.Parser = (*Parser)(nil)

// New validates c and returns a Parser for it.
func New(c Config) (*Parser, error) {
	if c.VerificationToken == "" {
		return nil, errors.New("feishu: config: VerificationToken is required")
	}
	p := &Parser{token: []byte(c.VerificationToken), encryptKey: c.EncryptKey, tolerance: c.Tolerance}
	if p.tolerance == 0 {
		p.tolerance = DefaultTolerance
	}
	if c.EncryptKey != "" {
		p.block = cipherKey(c.EncryptKey)
	}
	return p, nil
}

// Parse verifies req and returns the url_verification reply or the one
// event of the delivery, as the package documentation describes. Errors
// wrap [webhook.ErrMethodNotAllowed] (not a POST), [webhook.ErrBadSignature]
// (not authenticated), [webhook.ErrStaleTimestamp] or [webhook.ErrMalformed]
// (authentic, but not an event).
func (p *Parser) Parse(ctx context.Context, req *webhook.Request) (*webhook.Delivery, error) {
	if err := webhook.CheckPost(Name, req); err != nil {
		return nil, err
	}
	var (
		plain  []byte
		signed bool
		err    error
	)
	if p.block != nil {
		plain, signed, err = p.open(req)
	} else {
		plain, err = p.plaintext(req.Body)
	}
	if err != nil {
		return nil, err
	}
	m, err := parseMessage(plain)
	if err != nil {
		return nil, err
	}
	if m.challenge {
		return &webhook.Delivery{Verification: true, Reply: challengeReply(m.challengeValue)}, nil
	}
	if p.block != nil && !signed {
		return nil, fmt.Errorf("feishu: unsigned event: %w", webhook.ErrBadSignature)
	}
	ev, err := m.event(plain)
	if err != nil {
		return nil, err
	}
	return &webhook.Delivery{Events: []webhook.Event{*ev}, Reply: successReply()}, nil
}

// open authenticates and decrypts the body of a tenant with an Encrypt Key.
// A signed request is checked (signature, then window) before its body is
// read; an unsigned one (a handshake, or a forgery) must be small and carry
// the token, and a bad padding is reported only with the token check so
// that neither the answer nor its timing tells one from the other.
func (p *Parser) open(req *webhook.Request) (plain []byte, signed bool, err error) {
	signed = req.Header.Get(SignatureHeader) != ""
	if signed {
		if err := verifySignature(req, p.encryptKey, p.tolerance); err != nil {
			return nil, false, err
		}
	} else if len(req.Body) > MaxUnsignedBody {
		return nil, false, fmt.Errorf("feishu: unsigned body of %d bytes: %w", len(req.Body), webhook.ErrBadSignature)
	}
	// fail is the error of a body that is not a usable ciphertext: malformed
	// if it is authentic, unauthenticated otherwise.
	fail := func(what string) error {
		if signed {
			return fmt.Errorf("feishu: %s: %w", what, webhook.ErrMalformed)
		}
		return fmt.Errorf("feishu: %s: %w", what, webhook.ErrBadSignature)
	}
	var env struct {
		Encrypt *string `json:"encrypt"`
	}
	if json.Unmarshal(req.Body, &env) != nil || env.Encrypt == nil {
		return nil, signed, fail("body has no encrypt member, and the tenant has an Encrypt Key")
	}
	plain, padOK, err := open(p.block, *env.Encrypt)
	if err != nil {
		return nil, signed, fail(err.Error())
	}
	if signed && !padOK {
		return nil, signed, fail(errPadding.Error())
	}
	if err := p.checkToken(plain, padOK); err != nil {
		return nil, signed, err
	}
	return plain, signed, nil
}

// plaintext authenticates the body of a tenant without an Encrypt Key.
func (p *Parser) plaintext(body []byte) ([]byte, error) {
	var env struct {
		Encrypt json.RawMessage `json:"encrypt"`
	}
	if json.Unmarshal(body, &env) == nil && env.Encrypt != nil {
		return nil, fmt.Errorf("feishu: encrypted body, and the tenant has no Encrypt Key: %w", webhook.ErrBadSignature)
	}
	if err := p.checkToken(body, true); err != nil {
		return nil, err
	}
	return body, nil
}

// checkToken authenticates plain by its verification token: header.token
// in a schema 2.0 body, token otherwise. Every failure, a bad padding
// (padOK false) included, is the same error, found after the same work.
func (p *Parser) checkToken(plain []byte, padOK bool) error {
	tok, jsonOK := tokenOf(plain)
	ok := subtle.ConstantTimeCompare([]byte(tok), p.token)
	if ok&b2i(padOK)&b2i(jsonOK) != 1 {
		return fmt.Errorf("feishu: verification token mismatch: %w", webhook.ErrBadSignature)
	}
	return nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// tokenOf returns the verification token of a JSON body, and false if the
// body is not a JSON object.
func tokenOf(plain []byte) (string, bool) {
	var top struct {
		Schema json.RawMessage `json:"schema"`
		Token  json.RawMessage `json:"token"`
		Header json.RawMessage `json:"header"`
	}
	if json.Unmarshal(plain, &top) != nil {
		return "", false
	}
	raw := top.Token
	if top.Schema != nil {
		var h struct {
			Token json.RawMessage `json:"token"`
		}
		raw = nil
		if json.Unmarshal(top.Header, &h) == nil {
			raw = h.Token
		}
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", true
	}
	return s, true
}

// challengeReply is the answer to a url_verification: the challenge echoed
// as {"challenge": ...}.
func challengeReply(challenge string) webhook.Reply {
	// A struct of one string always encodes (invalid UTF-8 becomes U+FFFD).
	body, _ := json.Marshal(struct {
		Challenge string `json:"challenge"`
	}{challenge})
	return webhook.Reply{Status: http.StatusOK, ContentType: contentType, Body: body}
}

const contentType = "application/json; charset=utf-8"

// successReply is the answer to an event (new or duplicate), as the SDKs
// give it; Feishu looks at the status only.
func successReply() webhook.Reply {
	return webhook.Reply{Status: http.StatusOK, ContentType: contentType, Body: []byte(`{"msg":"success"}`)}
}

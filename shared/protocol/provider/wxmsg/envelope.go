package wxmsg

import (
	"fmt"
	"net/url"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/protocol/provider/wxcrypto"
)

// Account holds what authenticates one WeCom app or WeChat account's
// encrypted callbacks.
type Account struct {
	// Token signs requests.
	Token string
	// Key is the AES key (wxcrypto.ParseKey of the EncodingAESKey).
	Key []byte
	// ReceiveID is the expected receiveid: the CorpID (WeCom) or AppID (WeChat).
	ReceiveID string
	// Tolerance is the timestamp window: 0 means [DefaultTolerance], a
	// negative value disables the check (see [CheckWindow]).
	Tolerance time.Duration
}

// Signed returns the msg_signature, timestamp and nonce of query, or an
// error wrapping [webhook.ErrBadSignature] if one is missing.
func Signed(query url.Values) (sig, ts, nonce string, err error) {
	sig, ts, nonce = query.Get("msg_signature"), query.Get("timestamp"), query.Get("nonce")
	if sig == "" || ts == "" || nonce == "" {
		return "", "", "", fmt.Errorf("missing msg_signature, timestamp or nonce: %w", webhook.ErrBadSignature)
	}
	return sig, ts, nonce, nil
}

// OpenCiphertext authenticates and decrypts a base64 ciphertext (a POST's
// <Encrypt> or WeCom's echostr), in the order the schemes require: the
// msg_signature over [token, timestamp, nonce, ciphertext], then the
// timestamp window, then the decryption with the exact receiveid. Errors wrap
// [webhook.ErrBadSignature] or [webhook.ErrStaleTimestamp] and carry no
// provider prefix: callers add theirs.
func (a Account) OpenCiphertext(query url.Values, ciphertext string, now time.Time) ([]byte, error) {
	sig, ts, nonce, err := Signed(query)
	if err != nil {
		return nil, err
	}
	if !wxcrypto.VerifySignature(sig, a.Token, ts, nonce, ciphertext) {
		return nil, fmt.Errorf("msg_signature: %w", webhook.ErrBadSignature)
	}
	if err := CheckWindow(ts, now, a.Tolerance); err != nil {
		return nil, err
	}
	plain, err := wxcrypto.Decrypt(a.Key, ciphertext, a.ReceiveID)
	if err != nil {
		return nil, fmt.Errorf("message: %w", err)
	}
	return plain, nil
}

// OpenEnvelope authenticates an encrypted POST: its body is the XML envelope
// whose <Encrypt> goes through OpenCiphertext. The envelope's other fields
// (ToUserName, AgentID, compatible mode's plaintext copy) are not signed and
// are ignored. A body that is not an envelope wraps [webhook.ErrMalformed].
//
// Until the signature has been checked the body is read once, by
// [EncryptText], which builds no tree and allocates only the <Encrypt> text:
// an unauthenticated sender costs one linear pass and about the body's size
// in memory. Only an authentic ciphertext is decrypted, and only its
// plaintext is parsed, by the caller.
func (a Account) OpenEnvelope(query url.Values, body []byte, now time.Time) ([]byte, error) {
	if _, _, _, err := Signed(query); err != nil {
		return nil, err
	}
	encrypted, err := EncryptText(body)
	if err != nil {
		return nil, err
	}
	return a.OpenCiphertext(query, encrypted, now)
}

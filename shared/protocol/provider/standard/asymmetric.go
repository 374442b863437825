package standard

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"filippo.io/edwards25519"
)

// Prefixes of the specification's asymmetric keys ("Secret serialization"
// row of its table of signature schemes).
const (
	publicKeyPrefix  = "whpk_"
	signingKeyPrefix = "whsk_"
)

// spkiPrefix is the DER of an Ed25519 SubjectPublicKeyInfo (RFC 8410 §4)
// up to its 32-byte key.
var spkiPrefix = []byte{0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00}

// v1aLen is the length of a v1a signature: the standard, padded Base64 of
// a 64-byte Ed25519 signature.
const v1aLen = 88

// MaxV1aEntries is the most v1a entries of one webhook-signature header
// that are verified (each costs one Ed25519 verification per public key);
// later ones are ignored. Rotation needs two or three; an unsigned request
// cannot make the receiver do more than this many verifications per key.
const MaxV1aEntries = 8

// Errors of [DecodePublicKey] and [DecodeSigningKey]; they say what is
// wrong without the key.
var (
	errNotPublicKey  = errors.New(`must be "whpk_" and the Base64 of a 32-byte Ed25519 public key (or of its 44-byte DER SubjectPublicKeyInfo)`)
	errNotSigningKey = errors.New(`must be "whsk_" and the Base64 of a 32-byte Ed25519 seed, or of the 64-byte seed and public key`)
	errKeyMismatch   = errors.New("its last 32 bytes are not the public key of its first 32 (a 64-byte whsk_ key is the seed, then its public key)")
	errNotPoint      = errors.New("is not a point of the Ed25519 curve: it would verify nothing (a truncated or mistyped key?)")
	errNonCanonical  = errors.New("is not canonical: it spells a point in a way no Ed25519 implementation writes a public key")
	errSmallOrder    = errors.New("is a point of small order (such as the identity), under which one fixed signature verifies any body: refused")
)

// checkPublicKey returns pub, 32 bytes, unless it cannot be an honest
// Ed25519 public key: not a point of the curve, a non-canonical encoding
// (a coordinate not reduced modulo p, or a negative zero), or a point of
// small order (its order divides the cofactor 8: the identity and the
// other 7 torsion points), under which a fixed signature verifies every
// message, so that a "public" key in the tenants document would let anyone
// forge v1a signatures. A key that crypto/ed25519 made passes.
func checkPublicKey(pub []byte) (ed25519.PublicKey, error) {
	p, err := new(edwards25519.Point).SetBytes(pub)
	switch {
	case err != nil:
		return nil, errNotPoint
	case !bytes.Equal(p.Bytes(), pub):
		return nil, errNonCanonical
	case new(edwards25519.Point).MultByCofactor(p).Equal(edwards25519.NewIdentityPoint()) == 1:
		return nil, errSmallOrder
	}
	return ed25519.PublicKey(bytes.Clone(pub)), nil
}

// DecodePublicKey returns the Ed25519 public key of a "whpk_" key, the
// specification's serialisation of the key that verifies v1a signatures:
// "whpk_" and the standard Base64 of the 32-byte key, as the Svix server
// (the specification's authors') writes it. The 44-byte DER
// SubjectPublicKeyInfo of the key is accepted too (the form some
// implementations write, e.g. github.com/Cosium/standard-webhooks-consumer).
// The prefix is required, so a whsec_ secret pasted in the wrong place is
// refused rather than read as a public key; padding is optional and
// whitespace ignored, as for secrets ([DecodeSecret]). A key that is not a
// point of the curve, not in canonical form, or of small order (the
// identity and the other torsion points, under which one fixed signature
// verifies any body) is refused, with the reason.
func DecodePublicKey(s string) (ed25519.PublicKey, error) {
	b, ok := decodePrefixed(s, publicKeyPrefix)
	switch {
	case ok && len(b) == ed25519.PublicKeySize:
		return checkPublicKey(b)
	case ok && len(b) == len(spkiPrefix)+ed25519.PublicKeySize && bytes.HasPrefix(b, spkiPrefix):
		return checkPublicKey(b[len(spkiPrefix):])
	}
	return nil, errNotPublicKey
}

// DecodeSigningKey returns the Ed25519 private key of a "whsk_" key, the
// specification's serialisation of the key that makes v1a signatures:
// "whsk_" and the standard Base64 of either the 32-byte seed (RFC 8032's
// private key; the reference Go library's asymmetric support reads this
// form) or the 64-byte seed followed by its public key (what the Svix
// server writes, and Go's [ed25519.PrivateKey]). A 64-byte key whose public
// half is not that of its seed is refused: it would make signatures that
// verify under no key. Padding is optional and whitespace ignored.
func DecodeSigningKey(s string) (ed25519.PrivateKey, error) {
	b, ok := decodePrefixed(s, signingKeyPrefix)
	switch {
	case ok && len(b) == ed25519.SeedSize:
		return ed25519.NewKeyFromSeed(b), nil
	case ok && len(b) == ed25519.PrivateKeySize:
		k := ed25519.NewKeyFromSeed(b[:ed25519.SeedSize])
		if !bytes.Equal(k[ed25519.SeedSize:], b[ed25519.SeedSize:]) {
			return nil, errKeyMismatch
		}
		return k, nil
	}
	return nil, errNotSigningKey
}

// PublicKeyOf returns the "whpk_" serialisation of the public key of a
// "whsk_" signing key: what a tenant gives the receivers of its v1a
// signatures.
func PublicKeyOf(signingKey string) (string, error) {
	k, err := DecodeSigningKey(signingKey)
	if err != nil {
		return "", err
	}
	return publicKeyPrefix + base64.StdEncoding.EncodeToString(k.Public().(ed25519.PublicKey)), nil
}

// decodePrefixed decodes prefix followed by standard Base64, padding
// optional, with spaces, tabs, CRs and LFs ignored.
func decodePrefixed(s, prefix string) ([]byte, bool) {
	s = strings.Map(func(r rune) rune {
		switch r {
		case ' ', '\t', '\r', '\n':
			return -1
		}
		return r
	}, s)
	rest, ok := strings.CutPrefix(s, prefix)
	if !ok {
		return nil, false
	}
	b, err := base64.RawStdEncoding.DecodeString(strings.TrimRight(rest, "="))
	return b, err == nil
}

// SignAsymmetric returns the v1a entry of the webhook-signature header
// ("v1a,<base64 Ed25519 signature>") for a message with webhook-id id and
// webhook-timestamp ts (unix seconds), signed with signingKey (a "whsk_"
// key, see [DecodeSigningKey]). Ed25519 signatures are deterministic: the
// same key and message give the same entry.
func SignAsymmetric(signingKey, id string, ts int64, body []byte) (string, error) {
	k, err := DecodeSigningKey(signingKey)
	if err != nil {
		return "", fmt.Errorf("standard: signing key %w", err)
	}
	return signV1a(k, id, strconv.FormatInt(ts, 10), body), nil
}

// signV1a returns the v1a entry for id.ts.body under k.
func signV1a(k ed25519.PrivateKey, id, ts string, body []byte) string {
	return "v1a," + base64.StdEncoding.EncodeToString(ed25519.Sign(k, signedContent(id, ts, body)))
}

// signedContent is what both schemes sign: "{id}.{timestamp}.{body}".
func signedContent(id, ts string, body []byte) []byte {
	msg := make([]byte, 0, len(id)+len(ts)+2+len(body))
	msg = append(msg, id...)
	msg = append(msg, '.')
	msg = append(msg, ts...)
	msg = append(msg, '.')
	return append(msg, body...)
}

// v1aMatches reports whether any of the first [MaxV1aEntries] v1a entries
// of header is the Ed25519 signature of id.ts.body under any of pubs.
// Entries must be the padded standard Base64 of 64 bytes with no stray
// bits, so a signature has one spelling. Public-key verification handles
// no secret, so it may stop at the first match.
func v1aMatches(pubs []ed25519.PublicKey, id, ts string, body []byte, header string) bool {
	if len(pubs) == 0 {
		return false
	}
	var msg []byte
	seen := 0
	for rest := header; rest != "" && seen < MaxV1aEntries; {
		var entry string
		entry, rest, _ = strings.Cut(rest, " ")
		version, sig, ok := strings.Cut(entry, ",")
		if !ok || version != "v1a" || len(sig) != v1aLen {
			continue
		}
		seen++
		raw, err := base64.StdEncoding.Strict().DecodeString(sig)
		if err != nil || len(raw) != ed25519.SignatureSize {
			continue
		}
		if msg == nil {
			msg = signedContent(id, ts, body)
		}
		for _, pub := range pubs {
			if ed25519.Verify(pub, msg, raw) {
				return true
			}
		}
	}
	return false
}

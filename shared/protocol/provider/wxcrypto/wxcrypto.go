package wxcrypto

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/sha1"
	"crypto/subtle"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/hookwall/hookwall/shared/base/webhook"
)

// KeySize is the length in bytes of a decoded EncodingAESKey (AES-256).
const KeySize = 32

// blockPad is the PKCS#7 block size the scheme pads to (not the AES block size).
const blockPad = 32

// ErrDecrypt reports a ciphertext that cannot be decrypted into a message for
// the expected receiveid: bad base64, bad length, bad padding, a message
// length that overruns the plaintext, or another receiveid. Such a message is
// not authentic for this receiver, so ErrDecrypt wraps
// [webhook.ErrBadSignature].
var ErrDecrypt = fmt.Errorf("wxcrypto: cannot decrypt: %w", webhook.ErrBadSignature)

// ErrKey reports an EncodingAESKey or AES key of the wrong shape. It is a
// configuration error and wraps no webhook sentinel.
var ErrKey = errors.New("wxcrypto: invalid key")

// ParseKey decodes a 43-character EncodingAESKey into the 32-byte AES key:
// Base64_Decode(encodingAESKey + "="). It uses the non-strict standard
// decoding on purpose: real keys, including the official sample key, have
// non-zero trailing bits in their last character.
func ParseKey(encodingAESKey string) ([]byte, error) {
	if len(encodingAESKey) != 43 {
		return nil, fmt.Errorf("%w: EncodingAESKey must be 43 characters", ErrKey)
	}
	for i := 0; i < len(encodingAESKey); i++ {
		c := encodingAESKey[i]
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '+' || c == '/') {
			return nil, fmt.Errorf("%w: EncodingAESKey has a non-base64 character", ErrKey)
		}
	}
	key, err := base64.StdEncoding.DecodeString(encodingAESKey + "=")
	if err != nil || len(key) != KeySize {
		return nil, fmt.Errorf("%w: EncodingAESKey does not decode to 32 bytes", ErrKey)
	}
	return key, nil
}

// Signature returns the lowercase hex SHA1 of parts sorted lexicographically
// (byte order) and concatenated: the msg_signature / signature of both
// providers. Its memory use does not grow with the parts' length (a part may
// be a megabyte of unauthenticated <Encrypt>): they are hashed through a
// fixed buffer, not copied.
func Signature(parts ...string) string {
	sorted := slices.Clone(parts)
	slices.Sort(sorted)
	h := sha1.New()
	var buf [4096]byte
	for _, p := range sorted {
		for len(p) > 0 {
			n := copy(buf[:], p)
			h.Write(buf[:n])
			p = p[n:]
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// VerifySignature reports whether got equals [Signature](parts...), compared
// in constant time. Only the canonical lowercase hex spelling is accepted, as
// the official libraries do.
func VerifySignature(got string, parts ...string) bool {
	want := Signature(parts...)
	return subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// Decrypt decrypts ciphertextB64 with key (32 bytes, IV = key[:16]) and
// returns the message, after checking the padding (1..32, all pad bytes
// equal), the embedded message length and that the trailing receiveid equals
// receiveID exactly. Every failure wraps [ErrDecrypt]. Decrypt never panics.
func Decrypt(key []byte, ciphertextB64 string, receiveID string) ([]byte, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("%w: key must be %d bytes", ErrKey, KeySize)
	}
	ct, err := base64.StdEncoding.DecodeString(ciphertextB64)
	if err != nil {
		return nil, fmt.Errorf("%w: bad base64", ErrDecrypt)
	}
	if len(ct) == 0 || len(ct)%aes.BlockSize != 0 {
		return nil, fmt.Errorf("%w: bad ciphertext length", ErrDecrypt)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrKey, err)
	}
	plain := make([]byte, len(ct))
	cipher.NewCBCDecrypter(block, key[:aes.BlockSize]).CryptBlocks(plain, ct)

	pad := int(plain[len(plain)-1])
	if pad < 1 || pad > blockPad || pad > len(plain) {
		return nil, fmt.Errorf("%w: bad padding", ErrDecrypt)
	}
	for _, b := range plain[len(plain)-pad:] {
		if int(b) != pad {
			return nil, fmt.Errorf("%w: bad padding", ErrDecrypt)
		}
	}
	content := plain[:len(plain)-pad]
	if len(content) < 20 {
		return nil, fmt.Errorf("%w: plaintext too short", ErrDecrypt)
	}
	msgLen := uint64(binary.BigEndian.Uint32(content[16:20]))
	if msgLen > uint64(len(content)-20) {
		return nil, fmt.Errorf("%w: bad message length", ErrDecrypt)
	}
	end := 20 + int(msgLen)
	if subtle.ConstantTimeCompare(content[end:], []byte(receiveID)) != 1 {
		return nil, fmt.Errorf("%w: receiveid mismatch", ErrDecrypt)
	}
	return content[20:end:end], nil
}

// Encrypt encrypts msg for receiveID with key (32 bytes) and the 16 random
// bytes random16, padding with PKCS#7 to a multiple of 32 bytes, and returns
// the base64 ciphertext. It is used for passive replies and tests.
func Encrypt(key []byte, random16 []byte, msg []byte, receiveID string) (string, error) {
	if len(key) != KeySize {
		return "", fmt.Errorf("%w: key must be %d bytes", ErrKey, KeySize)
	}
	if len(random16) != 16 {
		return "", errors.New("wxcrypto: random prefix must be 16 bytes")
	}
	if uint64(len(msg)) > math.MaxUint32 {
		return "", errors.New("wxcrypto: message too long")
	}
	n := 20 + len(msg) + len(receiveID)
	pad := blockPad - n%blockPad
	var buf bytes.Buffer
	buf.Grow(n + pad)
	buf.Write(random16)
	buf.Write(binary.BigEndian.AppendUint32(nil, uint32(len(msg))))
	buf.Write(msg)
	buf.WriteString(receiveID)
	buf.Write(bytes.Repeat([]byte{byte(pad)}, pad))
	plain := buf.Bytes()

	block, err := aes.NewCipher(key)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrKey, err)
	}
	cipher.NewCBCEncrypter(block, key[:aes.BlockSize]).CryptBlocks(plain, plain)
	return base64.StdEncoding.EncodeToString(plain), nil
}

package feishu

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
)

// errCiphertext reports an "encrypt" value that is not the Base64 of an IV
// and whole AES blocks. It names no value.
var errCiphertext = errors.New("encrypt is not Base64 of an IV and whole AES blocks")

// errPadding reports a plaintext whose PKCS#7 padding is wrong: the key is
// not the one it was encrypted with, or the ciphertext was altered.
var errPadding = errors.New("bad padding: wrong Encrypt Key or altered ciphertext")

// cipherKey is the AES-256 key of an Encrypt Key: SHA-256 of its UTF-8 bytes.
func cipherKey(encryptKey string) cipher.Block {
	k := sha256.Sum256([]byte(encryptKey))
	b, _ := aes.NewCipher(k[:]) // a 32-byte key never fails
	return b
}

// Decrypt returns the plaintext of an "encrypt" value made with encryptKey:
// the Base64 is decoded, its first 16 bytes are the IV, the rest is
// AES-256-CBC under SHA-256(encryptKey) with PKCS#7 padding, checked in full.
// It never panics; errors name no secret and no plaintext.
//
// Decrypt does not authenticate: AES-CBC has no integrity. [Parser.Parse]
// checks the signature first.
func Decrypt(encryptKey, encrypt string) ([]byte, error) {
	plain, ok, err := open(cipherKey(encryptKey), encrypt)
	if err != nil {
		return nil, fmt.Errorf("feishu: decrypt: %w", err)
	}
	if !ok {
		return nil, fmt.Errorf("feishu: decrypt: %w", errPadding)
	}
	return plain, nil
}

// open decrypts encrypt with block. It reports the padding's validity as ok
// instead of failing on it, and computes it without a data-dependent branch:
// the caller decides what a bad padding means (and when to say so). With a
// bad padding, plain is the whole decrypted buffer.
func open(block cipher.Block, encrypt string) (plain []byte, ok bool, err error) {
	buf, err := base64.StdEncoding.DecodeString(encrypt)
	if err != nil || len(buf) < 2*aes.BlockSize || len(buf)%aes.BlockSize != 0 {
		return nil, false, errCiphertext
	}
	iv, data := buf[:aes.BlockSize], buf[aes.BlockSize:]
	cipher.NewCBCDecrypter(block, iv).CryptBlocks(data, data)
	n, good := unpadLen(data)
	return data[:len(data)-n], good == 1, nil
}

// unpadLen returns the PKCS#7 padding length of b (len(b) >= 16) and 1 if
// the padding is valid; for an invalid padding it returns 0, 0. It takes
// the same time whatever the bytes.
func unpadLen(b []byte) (n, good int) {
	last := b[len(b)-1]
	pad := int(last)
	good = subtle.ConstantTimeLessOrEq(1, pad) & subtle.ConstantTimeLessOrEq(pad, aes.BlockSize)
	// A pad byte outside 1..16 already failed; check one byte of padding
	// then, so that the arithmetic below stays in range.
	p := subtle.ConstantTimeSelect(good, pad, 1)
	tail := b[len(b)-aes.BlockSize:]
	for i := range aes.BlockSize {
		// Byte i of the last block is padding when i >= 16 - p.
		inPad := subtle.ConstantTimeLessOrEq(aes.BlockSize-p, i)
		same := subtle.ConstantTimeByteEq(tail[i], last)
		good &= subtle.ConstantTimeSelect(inPad, same, 1)
	}
	return subtle.ConstantTimeSelect(good, pad, 0), good
}

// Encrypt returns the "encrypt" value Feishu would send for plaintext: the
// Base64 of a random IV (16 bytes read from random) followed by the
// AES-256-CBC ciphertext of plaintext under SHA-256(encryptKey), PKCS#7
// padded; a nil random is crypto/rand. The signer and the tests use it.
func Encrypt(encryptKey string, plaintext []byte, random io.Reader) (string, error) {
	if random == nil {
		random = rand.Reader
	}
	if encryptKey == "" {
		return "", errors.New("feishu: encrypt: empty Encrypt Key")
	}
	pad := aes.BlockSize - len(plaintext)%aes.BlockSize
	buf := make([]byte, aes.BlockSize+len(plaintext)+pad)
	if _, err := io.ReadFull(random, buf[:aes.BlockSize]); err != nil {
		return "", fmt.Errorf("feishu: encrypt: read IV: %w", err)
	}
	data := buf[aes.BlockSize:]
	copy(data, plaintext)
	for i := len(plaintext); i < len(data); i++ {
		data[i] = byte(pad)
	}
	cipher.NewCBCEncrypter(cipherKey(encryptKey), buf[:aes.BlockSize]).CryptBlocks(data, data)
	return base64.StdEncoding.EncodeToString(buf), nil
}

package feishu

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
)

func TestDecryptOfficialExample(t *testing.T) {
	// The documentation's decryption example (testdata/README.md).
	const enc = "P37w+VZImNgPEO1RBhJ6RtKl7n6zymIbEG1pReEzghk="
	got, err := Decrypt("test key", enc)
	if err != nil || string(got) != "hello world" {
		t.Fatalf("Decrypt = %q, %v; want hello world", got, err)
	}
	if _, err := Decrypt("test key ", enc); err == nil {
		t.Error("another key decrypted the example")
	}
}

func TestEncryptRoundTrip(t *testing.T) {
	for _, n := range []int{0, 1, 15, 16, 17, 31, 32, 1000} {
		plain := bytes.Repeat([]byte{'x'}, n)
		enc, err := Encrypt("k", plain, rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := base64.StdEncoding.DecodeString(enc)
		if want := aes.BlockSize + (n/aes.BlockSize+1)*aes.BlockSize; len(raw) != want {
			t.Errorf("%d bytes: ciphertext of %d bytes, want %d (IV and PKCS#7)", n, len(raw), want)
		}
		got, err := Decrypt("k", enc)
		if err != nil || !bytes.Equal(got, plain) {
			t.Errorf("%d bytes: round trip = %q, %v", n, got, err)
		}
	}
	if _, err := Encrypt("", []byte("x"), rand.Reader); err == nil {
		t.Error("Encrypt accepted an empty key")
	}
	if _, err := Encrypt("k", []byte("x"), bytes.NewReader(nil)); err == nil {
		t.Error("Encrypt without randomness succeeded")
	}
}

// rawCBC encrypts data (whole blocks, padding included) under key's cipher
// with a zero IV, to forge paddings.
func rawCBC(key string, data []byte) string {
	k := sha256.Sum256([]byte(key))
	b, _ := aes.NewCipher(k[:])
	buf := make([]byte, aes.BlockSize+len(data))
	cipher.NewCBCEncrypter(b, buf[:aes.BlockSize]).CryptBlocks(buf[aes.BlockSize:], data)
	return base64.StdEncoding.EncodeToString(buf)
}

func TestDecryptRejects(t *testing.T) {
	block := func(tail ...byte) []byte {
		b := bytes.Repeat([]byte{'a'}, aes.BlockSize-len(tail))
		return append(b, tail...)
	}
	cases := map[string]string{
		"not base64":              "%%%",
		"IV only":                 base64.StdEncoding.EncodeToString(make([]byte, 16)),
		"partial block":           base64.StdEncoding.EncodeToString(make([]byte, 40)),
		"pad byte zero":           rawCBC("k", block(0)),
		"pad byte over 16":        rawCBC("k", block(17)),
		"pad bytes unequal":       rawCBC("k", block(2, 3, 3)),
		"pad of 16 with one off":  rawCBC("k", append([]byte{15}, bytes.Repeat([]byte{16}, 15)...)),
		"empty":                   "",
		"wrong key (bad padding)": rawCBC("other", block(1)),
	}
	for name, enc := range cases {
		if got, err := Decrypt("k", enc); err == nil {
			t.Errorf("%s: Decrypt = %q, want an error", name, got)
		} else if strings.Contains(err.Error(), "aaaa") {
			t.Errorf("%s: error %q shows plaintext", name, err)
		}
	}
	// The paddings that are right decrypt.
	for _, n := range []int{1, 2, 16} {
		data := append(bytes.Repeat([]byte{'a'}, 2*aes.BlockSize-n), bytes.Repeat([]byte{byte(n)}, n)...)
		got, err := Decrypt("k", rawCBC("k", data))
		if err != nil || len(got) != 2*aes.BlockSize-n {
			t.Errorf("pad %d: Decrypt = %d bytes, %v", n, len(got), err)
		}
	}
}

func TestUnpadLen(t *testing.T) {
	for pad := 0; pad < 256; pad++ {
		b := bytes.Repeat([]byte{byte(pad)}, 32)
		n, good := unpadLen(b)
		wantGood := pad >= 1 && pad <= 16
		if (good == 1) != wantGood || (wantGood && n != pad) || (!wantGood && n != 0) {
			t.Errorf("pad %d: n, good = %d, %d", pad, n, good)
		}
	}
	// Only the last pad bytes count: a byte before them may differ.
	b := append(bytes.Repeat([]byte{9}, 28), 4, 4, 4, 4)
	if n, good := unpadLen(b); n != 4 || good != 1 {
		t.Errorf("pad 4 after other bytes: n, good = %d, %d", n, good)
	}
	b[28] = 5
	if _, good := unpadLen(b); good != 0 {
		t.Error("pad 4 with one byte off accepted")
	}
}

func TestDecryptErrorsWrapNothingSecret(t *testing.T) {
	_, err := Decrypt("secret-key", "%%%")
	if err == nil || strings.Contains(err.Error(), "secret-key") || !errors.Is(err, errCiphertext) {
		t.Errorf("error = %v", err)
	}
}

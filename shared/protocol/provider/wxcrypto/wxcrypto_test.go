package wxcrypto

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/hookwall/hookwall/shared/base/webhook"
)

// Official vectors (providers.md 2.4 and 3.3).
const (
	wecomKey    = "jWmYm7qr5nMoAUwZRjGtBxmz3KA1tkAj3ykkR6q2B2C"
	wecomCorp   = "wx5823bf96d3bd56c7"
	wecomToken  = "QDG6eK"
	wecomEcho   = "P9nAzCzyDtyTWESHep1vC5X9xho/qYX3Zpb4yKa9SKld1DsH3Iyt3tP3zNdtp+4RPcs8TgAE7OaBO+FZXvnaqQ=="
	wecomPost   = "RypEvHKD8QQKFhvQ6QleEB4J58tiPdvo+rtK1I9qca6aM/wvqnLSV5zEPeusUiX5L5X/0lWfrf0QADHHhGd3QczcdCUpj911L3vg3W/sYYvuJTs3TUUkSUXxaccAS0qhxchrRYt66wiSpGLYL42aM6A8dTT+6k4aSknmPj48kzJs8qLjvd4Xgpue06DOdnLxAUHzM6+kDZ+HMZfJYuR+LtwGc2hgf5gsijff0ekUNXZiqATP7PF5mZxZ3Izoun1s4zG4LUMnvw2r+KqCKIw+3IQH03v+BCA9nMELNqbSf6tiWSrXJB3LAVGUcallcrw8V2t9EL4EhzJWrQUax5wLVMNS0+rUPA3k22Ncx4XXZS9o0MBH27Bo6BpNelZpS+/uh9KsNlY6bHCmJU9p8g7m3fVKn28H3KDYA5Pl/T8Z1ptDAVe0lXdQ2YoyyH2uyPIGHBZZIs2pDBS8R07+qN+E7Q=="
	wecomPostPT = "<xml><ToUserName><![CDATA[wx5823bf96d3bd56c7]]></ToUserName>\n<FromUserName><![CDATA[mycreate]]></FromUserName>\n<CreateTime>1409659813</CreateTime>\n<MsgType><![CDATA[text]]></MsgType>\n<Content><![CDATA[hello]]></Content>\n<MsgId>4561255354251345929</MsgId>\n<AgentID>218</AgentID>\n</xml>"

	wechatKey    = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG"
	wechatAppID  = "wxb11529c136998cb6"
	wechatRandom = "aaaabbbbccccdddd"
	wechatMsg    = "我是中文abcd123"
	wechatCT     = "jn1L23DB+6ELqJ+6bruv21Y6MD7KeIfP82D6gU39rmkgczbWwt5+3bnyg5K55bgVtVzd832WzZGMhkP72vVOfg=="
)

func mustKey(t testing.TB, s string) []byte {
	t.Helper()
	k, err := ParseKey(s)
	if err != nil {
		t.Fatalf("ParseKey: %v", err)
	}
	return k
}

// encryptRaw CBC-encrypts plain (a multiple of 16 bytes) as the scheme does,
// without any framing or padding, so tests can craft broken plaintexts.
func encryptRaw(t testing.TB, key, plain []byte) string {
	t.Helper()
	block, err := aes.NewCipher(key)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]byte, len(plain))
	cipher.NewCBCEncrypter(block, key[:16]).CryptBlocks(out, plain)
	return base64.StdEncoding.EncodeToString(out)
}

// frame builds random(16) || len || msg || rid with no padding.
func frame(msgLen uint32, msg []byte, rid string) []byte {
	b := []byte(wechatRandom)
	b = binary.BigEndian.AppendUint32(b, msgLen)
	b = append(b, msg...)
	return append(b, rid...)
}

func TestParseKey(t *testing.T) {
	for _, k := range []string{wecomKey, wechatKey, "9Fhbus9vGcz2PWcLtV0u6HyuCsCwTyYfPiVLMDF1Y0Q"} {
		key, err := ParseKey(k)
		if err != nil || len(key) != 32 {
			t.Errorf("ParseKey(%q) = %d bytes, %v; want 32 bytes, nil", k, len(key), err)
		}
	}
	for _, k := range []string{"", wecomKey[:42], wecomKey + "A", wecomKey[:42] + "=", wecomKey[:41] + "\n" + "C", wecomKey[:42] + "-"} {
		if _, err := ParseKey(k); !errors.Is(err, ErrKey) {
			t.Errorf("ParseKey(%q) error = %v, want ErrKey", k, err)
		}
	}
}

func TestSignature(t *testing.T) {
	// WeChat GET example (providers.md 3.2) and the WeCom official GET.
	if got, want := Signature("AAAAA", "1714036504", "1514711492"), "f464b24fc39322e44b38aa78f5edd27bd1441696"; got != want {
		t.Errorf("Signature(wechat example) = %s, want %s", got, want)
	}
	parts := []string{wecomToken, "1409659589", "263014780", wecomEcho}
	want := "5c45ff5e21c57e6ad56bac8758b79b1d9ac89fd3"
	if got := Signature(parts...); got != want {
		t.Errorf("Signature(wecom GET) = %s, want %s", got, want)
	}
	if !VerifySignature(want, parts...) {
		t.Error("VerifySignature(correct) = false")
	}
	if parts[0] != wecomToken {
		t.Error("Signature sorted its caller's slice")
	}
	for _, bad := range []string{"", strings.ToUpper(want), want[:39], want + "0", "0" + want[1:]} {
		if VerifySignature(bad, parts...) {
			t.Errorf("VerifySignature(%q) = true, want false", bad)
		}
	}
}

func TestDecryptOfficial(t *testing.T) {
	got, err := Decrypt(mustKey(t, wecomKey), wecomEcho, wecomCorp)
	if err != nil || string(got) != "1616140317555161061" {
		t.Errorf("Decrypt(wecom echostr) = %q, %v; want 1616140317555161061", got, err)
	}
	// The official POST has pad 30 (> 16).
	got, err = Decrypt(mustKey(t, wecomKey), wecomPost, wecomCorp)
	if err != nil || string(got) != wecomPostPT {
		t.Errorf("Decrypt(wecom post) = %q, %v", got, err)
	}
	got, err = Decrypt(mustKey(t, wechatKey), wechatCT, wechatAppID)
	if err != nil || string(got) != wechatMsg {
		t.Errorf("Decrypt(wechat vector) = %q, %v; want %q", got, err, wechatMsg)
	}
}

func TestEncryptOfficial(t *testing.T) {
	got, err := Encrypt(mustKey(t, wechatKey), []byte(wechatRandom), []byte(wechatMsg), wechatAppID)
	if err != nil || got != wechatCT {
		t.Errorf("Encrypt(wechat vector) = %q, %v; want %q", got, err, wechatCT)
	}
	if _, err := Encrypt(mustKey(t, wechatKey), []byte("short"), nil, ""); err == nil {
		t.Error("Encrypt with a 5-byte random prefix: want error")
	}
	if _, err := Encrypt([]byte("short"), []byte(wechatRandom), nil, ""); !errors.Is(err, ErrKey) {
		t.Errorf("Encrypt with a short key: error = %v, want ErrKey", err)
	}
}

func TestDecryptRejects(t *testing.T) {
	key := mustKey(t, wecomKey)
	msg := []byte("<xml>hi</xml>")
	body := frame(uint32(len(msg)), msg, wecomCorp) // 16+4+13+18 = 51 bytes

	pad := func(b []byte, n int, v byte) []byte {
		return append(append([]byte{}, b...), bytes.Repeat([]byte{v}, n)...)
	}
	// sized returns a valid frame of exactly n bytes for receiveid rid.
	sized := func(n int, rid string) []byte {
		m := bytes.Repeat([]byte("m"), n-20-len(rid))
		return frame(uint32(len(m)), m, rid)
	}
	// nulRID ends in a zero byte, so a frame for it with no padding at all
	// ends in a "pad value 0" byte: only the pad check can reject it.
	const nulRID = "wx5823bf96d3bd56\x00"

	tests := []struct {
		name  string
		plain []byte
		rid   string
		ok    bool
	}{
		{"pad 13 accepted", pad(body, 13, 13), wecomCorp, true},
		{"pad 29 accepted (multiple of 16, not 32)", pad(body, 29, 29), wecomCorp, true},
		{"pad 30 accepted", pad(sized(66, wecomCorp), 30, 30), wecomCorp, true},
		{"pad 32 accepted", pad(sized(64, wecomCorp), 32, 32), wecomCorp, true},
		{"pad 1 accepted", pad(sized(63, wecomCorp), 1, 1), wecomCorp, true},
		{"pad 0 rejected", sized(64, nulRID), nulRID, false},
		{"pad 0 after padding rejected", pad(body, 13, 0), wecomCorp, false},
		{"pad 33 rejected", pad(sized(63, wecomCorp), 33, 33), wecomCorp, false},
		{"pad 48 rejected", pad(sized(48, wecomCorp), 48, 48), wecomCorp, false},
		{"pad larger than plaintext rejected", bytes.Repeat([]byte{32}, 16), wecomCorp, false},
		{"unequal pad bytes rejected", append(pad(sized(51, wecomCorp), 12, 7), 13), wecomCorp, false},
		{"one pad byte differs", append(append(pad(sized(51, wecomCorp), 5, 13), 7), bytes.Repeat([]byte{13}, 7)...), wecomCorp, false},
		{"msgLen overruns", pad(frame(uint32(len(msg))+len32(wecomCorp)+1, msg, wecomCorp), 13, 13), wecomCorp, false},
		{"msgLen huge", pad(frame(0xffffffff, msg, wecomCorp), 13, 13), wecomCorp, false},
		{"plaintext shorter than 20", pad([]byte("0123456789abcdef"), 16, 16), wecomCorp, false},
		{"wrong receiveid", pad(frame(uint32(len(msg)), msg, "wx5823bf96d3bd56c8"), 13, 13), wecomCorp, false},
		{"receiveid prefix only", pad(frame(uint32(len(msg)), msg, wecomCorp[:17]), 14, 14), wecomCorp, false},
		{"empty receiveid", pad(frame(uint32(len(msg)), msg, ""), 15, 15), wecomCorp, false},
		{"receiveid with suffix", pad(frame(uint32(len(msg)), msg, wecomCorp+"x"), 12, 12), wecomCorp, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if len(tt.plain)%16 != 0 {
				t.Fatalf("test plaintext is %d bytes, not a multiple of 16", len(tt.plain))
			}
			got, err := Decrypt(key, encryptRaw(t, key, tt.plain), tt.rid)
			if tt.ok {
				if err != nil || len(got) == 0 {
					t.Errorf("Decrypt = %q, %v; want success", got, err)
				}
				return
			}
			if !errors.Is(err, ErrDecrypt) || !errors.Is(err, webhook.ErrBadSignature) {
				t.Errorf("Decrypt error = %v, want ErrDecrypt wrapping webhook.ErrBadSignature", err)
			}
		})
	}
}

func len32(s string) uint32 { return uint32(len(s)) }

func TestDecryptMalformedInput(t *testing.T) {
	key := mustKey(t, wecomKey)
	for _, ct := range []string{"", "!!!", "AAAA", base64.StdEncoding.EncodeToString(make([]byte, 15)), base64.StdEncoding.EncodeToString(make([]byte, 33)), wecomPost[:len(wecomPost)-4]} {
		if _, err := Decrypt(key, ct, wecomCorp); !errors.Is(err, ErrDecrypt) {
			t.Errorf("Decrypt(%.10q...) error = %v, want ErrDecrypt", ct, err)
		}
	}
	if _, err := Decrypt(key[:16], wecomPost, wecomCorp); !errors.Is(err, ErrKey) {
		t.Errorf("Decrypt with a 16-byte key: error = %v, want ErrKey", err)
	}
	// Another tenant's key or receiveid.
	if _, err := Decrypt(key, wecomPost, "ww8763a2c9851f8563"); !errors.Is(err, ErrDecrypt) {
		t.Errorf("Decrypt with another corp id: error = %v, want ErrDecrypt", err)
	}
	if _, err := Decrypt(mustKey(t, wechatKey), wecomPost, wecomCorp); !errors.Is(err, ErrDecrypt) {
		t.Errorf("Decrypt with another key: error = %v, want ErrDecrypt", err)
	}
}

func FuzzDecrypt(f *testing.F) {
	f.Add(wecomEcho, wecomCorp)
	f.Add(wecomPost, wecomCorp)
	f.Add(wechatCT, wechatAppID)
	f.Add(wechatCT, "")
	f.Add("AAAAAAAAAAAAAAAAAAAAAA==", "")
	key := mustKey(f, wecomKey)
	key2 := mustKey(f, wechatKey)
	f.Fuzz(func(t *testing.T, ct, rid string) {
		for _, k := range [][]byte{key, key2} {
			msg, err := Decrypt(k, ct, rid)
			if err != nil {
				if !errors.Is(err, ErrDecrypt) {
					t.Fatalf("error %v does not wrap ErrDecrypt", err)
				}
				continue
			}
			// Anything accepted must re-encrypt to a ciphertext that decrypts back.
			enc, err := Encrypt(k, []byte(wechatRandom), msg, rid)
			if err != nil {
				t.Fatal(err)
			}
			back, err := Decrypt(k, enc, rid)
			if err != nil || !bytes.Equal(back, msg) {
				t.Fatalf("re-encrypted message did not round-trip: %v", err)
			}
		}
	})
}

func FuzzRoundTrip(f *testing.F) {
	f.Add([]byte(wechatRandom), []byte(wechatMsg), wechatAppID)
	f.Add([]byte("0123456789abcdef"), []byte(""), "")
	f.Add([]byte("0123456789abcdef"), []byte(wecomPostPT), wecomCorp)
	f.Add([]byte("0123456789abcdef"), bytes.Repeat([]byte{32}, 44), "x")
	key := mustKey(f, wecomKey)
	f.Fuzz(func(t *testing.T, random, msg []byte, rid string) {
		if len(msg) > 64<<10 {
			return // keep the fuzzer fast; lengths past this add nothing to the layout checks
		}
		if len(random) != 16 {
			random = append(append([]byte{}, random...), make([]byte, 16)...)[:16]
		}
		ct, err := Encrypt(key, random, msg, rid)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := base64.StdEncoding.DecodeString(ct)
		if len(raw)%32 != 0 {
			t.Fatalf("ciphertext length %d is not a multiple of 32", len(raw))
		}
		got, err := Decrypt(key, ct, rid)
		if err != nil || !bytes.Equal(got, msg) {
			t.Fatalf("round trip failed: %v", err)
		}
		if _, err := Decrypt(key, ct, rid+"x"); err == nil {
			t.Fatal("accepted a longer receiveid")
		}
	})
}

func BenchmarkDecrypt(b *testing.B) {
	key := mustKey(b, wecomKey)
	b.SetBytes(int64(base64.StdEncoding.DecodedLen(len(wecomPost))))
	for b.Loop() {
		if _, err := Decrypt(key, wecomPost, wecomCorp); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSignature(b *testing.B) {
	for b.Loop() {
		if !VerifySignature("477715d11cdb4164915debcba66cb864d751f3e6", wecomToken, "1409659813", "1372623149", wecomPost) {
			b.Fatal("signature mismatch")
		}
	}
}

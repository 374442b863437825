package wechat

import (
	"context"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/protocol/provider/wxmsg/wxmsgtest"
)

// TestInvalidCharacters checks that a plaintext-mode body or a decrypted
// message that is not valid UTF-8 or holds characters XML does not allow is
// rejected as malformed, wherever they are, and so never reaches the store.
func TestInvalidCharacters(t *testing.T) {
	const head = `<xml><ToUserName><![CDATA[gh_b91768ca0897]]></ToUserName><FromUserName><![CDATA[o]]></FromUserName><CreateTime>1767312100</CreateTime><MsgType><![CDATA[text]]></MsgType><MsgId>7312345678901234567</MsgId>`
	plain, safe := newParser(t, "", 0), newParser(t, testKey, 0)
	for name, msg := range map[string]string{
		"invalid UTF-8 in a comment":       head + "<!--\xff--></xml>",
		"control character in a comment":   head + "<!--\x1b[2J--></xml>",
		"invalid UTF-8 in a PI":            head + "<?x \xc3?></xml>",
		"NUL in a PI":                      head + "<?x \x00?></xml>",
		"reference to a surrogate":         head + "<Content>&#xDFFF;</Content></xml>",
		"invalid UTF-8 in content":         head + "<Content>\xff</Content></xml>",
		"control character in content":     head + "<Content>\x07</Content></xml>",
		"invalid UTF-8 after the document": head + "</xml>\n\xfe",
	} {
		t.Run(name, func(t *testing.T) {
			if d, err := plain.Parse(context.Background(), plainPost(msg, testTS)); !errors.Is(err, webhook.ErrMalformed) || d != nil {
				t.Errorf("plaintext mode: Parse = %+v, %v; want ErrMalformed", d, err)
			}
			if d, err := safe.Parse(context.Background(), safePost(t, msg, testAppID, "", testTS)); !errors.Is(err, webhook.ErrMalformed) || d != nil {
				t.Errorf("safe mode: Parse = %+v, %v; want ErrMalformed", d, err)
			}
		})
	}
}

// TestDedupKeyBounds checks that whatever the message's identity fields hold
// (very long, control characters, non-ASCII), the dedup key stays printable
// ASCII of at most 256 bytes: odd values are hashed.
func TestDedupKeyBounds(t *testing.T) {
	p := newParser(t, "", 0)
	long := strings.Repeat("9", 1<<16)
	for name, msg := range map[string]string{
		"long MsgId":             `<xml><MsgType>text</MsgType><MsgId>` + long + `</MsgId></xml>`,
		"MsgId with a newline":   "<xml><MsgType>text</MsgType><MsgId>1&#10;2</MsgId></xml>",
		"MsgId with a tab":       "<xml><MsgType>text</MsgType><MsgId>1\t2</MsgId></xml>",
		"MsgId with DEL and C1":  "<xml><MsgType>text</MsgType><MsgId>1\x7f\u0085</MsgId></xml>",
		"non-ASCII MsgId":        "<xml><MsgType>text</MsgType><MsgId>１２３</MsgId></xml>",
		"MsgId with U+FFFD":      "<xml><MsgType>text</MsgType><MsgId>&#xFFFD;</MsgId></xml>",
		"long event fields":      `<xml><MsgType>event</MsgType><Event>` + long + `</Event><EventKey>` + long + `</EventKey></xml>`,
		"event with a CR":        "<xml><MsgType>event</MsgType><Event>subscribe</Event><FromUserName>a&#13;</FromUserName></xml>",
		"event with non-ASCII":   "<xml><MsgType>event</MsgType><Event>subscribe</Event><EventKey>场景</EventKey></xml>",
		"event type with a tab":  "<xml><MsgType>event</MsgType><Event>a\tb</Event></xml>",
		"message type with a LF": "<xml><MsgType>te\nxt</MsgType><MsgId>1</MsgId></xml>",
	} {
		t.Run(name, func(t *testing.T) {
			k := parseOne(t, p, plainPost(msg, testTS)).DedupKey
			if len(k) == 0 || len(k) > 256 || !utf8.ValidString(k) {
				t.Fatalf("DedupKey of %d bytes, want 1..256 bytes of UTF-8", len(k))
			}
			wxmsgtest.CheckKey(t, k)
		})
	}
}

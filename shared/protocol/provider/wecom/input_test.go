package wecom

import (
	"context"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/protocol/provider/wxmsg/wxmsgtest"
)

// TestDecryptedInvalidCharacters checks that a decrypted message that is not
// valid UTF-8 or holds characters XML does not allow is rejected as
// malformed, wherever they are, and so never reaches the store.
func TestDecryptedInvalidCharacters(t *testing.T) {
	const head = `<xml><ToUserName><![CDATA[ww8763a2c9851f8563]]></ToUserName><CreateTime>1767225700</CreateTime><MsgType><![CDATA[text]]></MsgType><MsgId>7456789012345678901</MsgId>`
	p := newParser(t, 0)
	for name, plain := range map[string]string{
		"invalid UTF-8 in a comment":       head + "<!--\xff--></xml>",
		"control character in a comment":   head + "<!--\x1b[2J--></xml>",
		"invalid UTF-8 in a PI":            head + "<?x \xc3?></xml>",
		"NUL in a PI":                      head + "<?x \x00?></xml>",
		"reference to a surrogate":         head + "<Content>&#xD83D;</Content></xml>",
		"invalid UTF-8 in content":         head + "<Content>\xff</Content></xml>",
		"control character in content":     head + "<Content>\x07</Content></xml>",
		"U+FFFE in CDATA":                  head + "<Content><![CDATA[\uFFFE]]></Content></xml>",
		"invalid UTF-8 after the document": head + "</xml>\n\xfe",
	} {
		t.Run(name, func(t *testing.T) {
			d, err := p.Parse(context.Background(), signedPost(t, plain, testCorp, testCorp, "", testTS))
			if !errors.Is(err, webhook.ErrMalformed) || d != nil {
				t.Fatalf("Parse = %+v, %v; want ErrMalformed", d, err)
			}
		})
	}
}

// TestDedupKeyBounds checks that whatever the message's identity fields hold
// (very long, control characters, non-ASCII), the dedup key stays printable
// ASCII of at most 256 bytes: odd values are hashed.
func TestDedupKeyBounds(t *testing.T) {
	p := newParser(t, 0)
	long := strings.Repeat("9", 1<<16)
	for name, plain := range map[string]string{
		"long MsgId":                  `<xml><MsgType>text</MsgType><MsgId>` + long + `</MsgId><AgentID>1</AgentID></xml>`,
		"long AgentID":                `<xml><MsgType>text</MsgType><MsgId>1</MsgId><AgentID>` + long + `</AgentID></xml>`,
		"MsgId with a newline":        "<xml><MsgType>text</MsgType><MsgId>1&#10;2</MsgId></xml>",
		"MsgId with a tab":            "<xml><MsgType>text</MsgType><MsgId>1\t2</MsgId></xml>",
		"AgentID with a CR":           "<xml><MsgType>text</MsgType><MsgId>1</MsgId><AgentID>1&#13;</AgentID></xml>",
		"MsgId with DEL and C1":       "<xml><MsgType>text</MsgType><MsgId>1\x7f\u0085</MsgId></xml>",
		"non-ASCII MsgId":             "<xml><MsgType>text</MsgType><MsgId>１２３</MsgId></xml>",
		"MsgId with U+FFFD":           "<xml><MsgType>text</MsgType><MsgId>&#xFFFD;</MsgId></xml>",
		"MsgId with a colon":          "<xml><MsgType>text</MsgType><MsgId>1:2</MsgId><AgentID>3</AgentID></xml>",
		"long event type":             `<xml><MsgType>event</MsgType><Event>` + strings.Repeat("e", 1<<12) + `</Event></xml>`,
		"event type with a newline":   "<xml><MsgType>event</MsgType><Event>a\nb</Event></xml>",
		"long InfoType":               `<xml><InfoType>` + long + `</InfoType></xml>`,
		"approval with long SpNo":     `<xml><MsgType>event</MsgType><Event>sys_approval_change</Event><ApprovalInfo><SpNo>` + long + `</SpNo></ApprovalInfo></xml>`,
		"contact with a control char": "<xml><MsgType>event</MsgType><Event>change_contact</Event><UserID>a&#9;b</UserID></xml>",
	} {
		t.Run(name, func(t *testing.T) {
			ev := parseOne(t, p, signedPost(t, plain, testCorp, testCorp, "", testTS))
			k := ev.DedupKey
			if len(k) == 0 || len(k) > 256 || !utf8.ValidString(k) {
				t.Fatalf("DedupKey of %d bytes, want 1..256 bytes of UTF-8", len(k))
			}
			wxmsgtest.CheckKey(t, k)
		})
	}
}

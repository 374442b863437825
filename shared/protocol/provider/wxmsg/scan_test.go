package wxmsg

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/protocol/provider/wxmsg/wxmsgtest"
	"github.com/hookwall/hookwall/shared/protocol/provider/xmljson"
)

func TestEncryptText(t *testing.T) {
	for _, tt := range []struct{ name, body, want string }{
		{"WeCom envelope", "<xml><ToUserName><![CDATA[wx5823bf96d3bd56c7]]></ToUserName><Encrypt><![CDATA[RypEvHKD8QQKFhvQ6QleEB4J58tiPdvo+rtK1I9qca6aM/wvqnLSV5zEPeusUiX5L5X/0lWfrf0QADHHhGd3QczcdCUpj911L3vg3W/sYYvuJTs3TUUkSUXxaccAS0qhxchrRYt66wiSpGLYL42aM6A8dTT+6k4aSknmPj48kzJs8qLjvd4Xgpue06DOdnLxAUHzM6+kDZ+HMZfJYuR+LtwGc2hgf5gsijff0ekUNXZiqATP7PF5mZxZ3Izoun1s4zG4LUMnvw2r+KqCKIw+3IQH03v+BCA9nMELNqbSf6tiWSrXJB3LAVGUcallcrw8V2t9EL4EhzJWrQUax5wLVMNS0+rUPA3k22Ncx4XXZS9o0MBH27Bo6BpNelZpS+/uh9KsNlY6bHCmJU9p8g7m3fVKn28H3KDYA5Pl/T8Z1ptDAVe0lXdQ2YoyyH2uyPIGHBZZIs2pDBS8R07+qN+E7Q==]]></Encrypt>\n<AgentID><![CDATA[218]]></AgentID>\n</xml>",
			"RypEvHKD8QQKFhvQ6QleEB4J58tiPdvo+rtK1I9qca6aM/wvqnLSV5zEPeusUiX5L5X/0lWfrf0QADHHhGd3QczcdCUpj911L3vg3W/sYYvuJTs3TUUkSUXxaccAS0qhxchrRYt66wiSpGLYL42aM6A8dTT+6k4aSknmPj48kzJs8qLjvd4Xgpue06DOdnLxAUHzM6+kDZ+HMZfJYuR+LtwGc2hgf5gsijff0ekUNXZiqATP7PF5mZxZ3Izoun1s4zG4LUMnvw2r+KqCKIw+3IQH03v+BCA9nMELNqbSf6tiWSrXJB3LAVGUcallcrw8V2t9EL4EhzJWrQUax5wLVMNS0+rUPA3k22Ncx4XXZS9o0MBH27Bo6BpNelZpS+/uh9KsNlY6bHCmJU9p8g7m3fVKn28H3KDYA5Pl/T8Z1ptDAVe0lXdQ2YoyyH2uyPIGHBZZIs2pDBS8R07+qN+E7Q=="},
		{"plain text", "<xml><Encrypt>abc+/=</Encrypt></xml>", "abc+/="},
		{"predefined entities and references", "<xml><Encrypt>a&amp;b&lt;&gt;&apos;&quot;&#65;&#x42;&#0067;&#x1F642;&#x" + strings.Repeat("0", 60) + "44;</Encrypt></xml>", "a&b<>'\"ABC🙂D"},
		{"white space around the root", " \r\n\t<![CDATA[ \n]]><xml><Encrypt>abc</Encrypt></xml><![CDATA[\t]]> ", "abc"},
		{"pieces concatenated", "<xml><Encrypt>a<![CDATA[b]]>c<!-- x --><?pi y?><![CDATA[]]>d</Encrypt></xml>", "abcd"},
		{"CR LF and CR become LF", "<xml><Encrypt>a\r\nb\rc<![CDATA[d\r\ne\r]]>\r</Encrypt></xml>", "a\nb\ncd\ne\n\n"},
		{"CDATA keeps markup", "<xml><Encrypt><![CDATA[<a>&amp;]]]]></Encrypt></xml>", "<a>&amp;]]"},
		{"surrounding white space kept", "<xml><Encrypt>\n  abc\n</Encrypt></xml>", "\n  abc\n"},
		{"prefixed name", `<xml><p:Encrypt xmlns:p="u">abc</p:Encrypt></xml>`, "abc"},
		{"prefixed root", `<w:xml xmlns:w="u"><Encrypt>abc</Encrypt></w:xml>`, "abc"},
		{"attributes", `<xml a="1" b='2&amp;' c = ">"d="&#x41;"><Encrypt x="y">abc</Encrypt><a b="c"/></xml>`, "abc"},
		{"prolog and epilog", "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!-- c -->\n<xml><Encrypt>abc</Encrypt></xml>\n<!-- d --><?pi?>\n", "abc"},
		{"compatible mode", "<xml><ToUserName><![CDATA[gh_1]]></ToUserName><FromUserName><![CDATA[o]]></FromUserName><CreateTime>1</CreateTime><MsgType><![CDATA[text]]></MsgType><Content><![CDATA[你好]]></Content><MsgId>1</MsgId><Encrypt><![CDATA[abc]]></Encrypt></xml>", "abc"},
		{"nested siblings and deeper Encrypt", "<xml><a><Encrypt>no</Encrypt><b/></a><Encrypt>abc</Encrypt><c><d>1</d></c></xml>", "abc"},
		{"end tags with space", "<xml ><Encrypt >abc</Encrypt\n></xml\t>", "abc"},
		{"non-ASCII names", "<xml><名前>x</名前><Encrypt>abc</Encrypt></xml>", "abc"},
		{"maximum depth", "<xml><Encrypt>abc</Encrypt>" + strings.Repeat("<a>", xmljson.MaxDepth-1) + strings.Repeat("</a>", xmljson.MaxDepth-1) + "</xml>", "abc"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := EncryptText([]byte(tt.body))
			if err != nil || got != tt.want {
				t.Fatalf("EncryptText = %q, %v; want %q", got, err, tt.want)
			}
			// Same value as a full parse of the envelope.
			if doc, err := xmljson.Convert([]byte(tt.body)); err != nil || doc.Get("Encrypt") != tt.want {
				t.Errorf("xmljson reads %q, %v", doc.Get("Encrypt"), err)
			}
		})
	}
}

func TestEncryptTextRejects(t *testing.T) {
	deep := strings.Repeat("<a>", xmljson.MaxDepth) + strings.Repeat("</a>", xmljson.MaxDepth)
	for name, body := range map[string]string{
		"empty":                          "",
		"not XML":                        `{"Encrypt":"abc"}`,
		"no Encrypt":                     "<xml><ToUserName>x</ToUserName></xml>",
		"empty Encrypt":                  "<xml><Encrypt></Encrypt></xml>",
		"self-closed Encrypt":            "<xml><Encrypt/></xml>",
		"Encrypt with only a comment":    "<xml><Encrypt><!--abc--></Encrypt></xml>",
		"two Encrypts":                   "<xml><Encrypt>abc</Encrypt><Encrypt>def</Encrypt></xml>",
		"two Encrypts, one prefixed":     "<xml><Encrypt>abc</Encrypt><p:Encrypt>abc</p:Encrypt></xml>",
		"Encrypt with a child":           "<xml><Encrypt>abc<b/></Encrypt></xml>",
		"Encrypt with a nested Encrypt":  "<xml><Encrypt><Encrypt>abc</Encrypt></Encrypt></xml>",
		"Encrypt only deeper":            "<xml><a><Encrypt>abc</Encrypt></a></xml>",
		"Encrypt outside the root":       "<xml></xml><Encrypt>abc</Encrypt>",
		"wrong root":                     "<root><Encrypt>abc</Encrypt></root>",
		"two roots":                      "<xml><Encrypt>abc</Encrypt></xml><xml></xml>",
		"text after root":                "<xml><Encrypt>abc</Encrypt></xml>junk",
		"]]> in text":                    "<xml><a>]]></a><Encrypt>abc</Encrypt></xml>",
		"text before root":               "junk<xml><Encrypt>abc</Encrypt></xml>",
		"reference outside the root":     "&amp;<xml><Encrypt>abc</Encrypt></xml>",
		"CDATA outside the root":         "<![CDATA[x]]><xml><Encrypt>abc</Encrypt></xml>",
		"byte order mark":                "\uFEFF<xml><Encrypt>abc</Encrypt></xml>",
		"unclosed":                       "<xml><Encrypt>abc</Encrypt>",
		"unclosed Encrypt":               "<xml><Encrypt>abc",
		"unclosed tag":                   "<xml><Encrypt>abc</Encrypt></xml",
		"lone <":                         "<xml><Encrypt>abc</Encrypt><",
		"mismatched":                     "<xml><Encrypt>abc</Encrypt><a>1</b></xml>",
		"mismatched prefix":              "<xml><p:Encrypt>abc</q:Encrypt></xml>",
		"end without start":              "</xml>",
		"doctype":                        `<!DOCTYPE xml [<!ENTITY e "boom">]><xml><Encrypt>&e;</Encrypt></xml>`,
		"plain doctype":                  "<!DOCTYPE xml><xml><Encrypt>abc</Encrypt></xml>",
		"directive inside":               "<xml><!ELEMENT a ANY><Encrypt>abc</Encrypt></xml>",
		"undefined entity":               "<xml><Encrypt>a&nbsp;b</Encrypt></xml>",
		"bare ampersand":                 "<xml><Encrypt>a & b</Encrypt></xml>",
		"unterminated reference":         "<xml><Encrypt>a&amp</Encrypt></xml>",
		"empty character reference":      "<xml><Encrypt>a&#;</Encrypt></xml>",
		"upper-case X reference":         "<xml><Encrypt>a&#X41;</Encrypt></xml>",
		"reference to NUL":               "<xml><Encrypt>a&#0;</Encrypt></xml>",
		"reference to a surrogate":       "<xml><Encrypt>a&#xD800;</Encrypt></xml>",
		"reference beyond Unicode":       "<xml><Encrypt>a&#x110000;</Encrypt></xml>",
		"huge reference":                 "<xml><Encrypt>a&#99999999999999999999;</Encrypt></xml>",
		"bad reference in an attribute":  `<xml a="&x;"><Encrypt>abc</Encrypt></xml>`,
		"< in an attribute":              `<xml a="<"><Encrypt>abc</Encrypt></xml>`,
		"unquoted attribute":             "<xml a=b><Encrypt>abc</Encrypt></xml>",
		"attribute without value":        "<xml a><Encrypt>abc</Encrypt></xml>",
		"unterminated attribute":         `<xml a="b><Encrypt>abc</Encrypt></xml>`,
		"slash without >":                "<xml><a/ ><Encrypt>abc</Encrypt></xml>",
		"name starting with a digit":     "<xml><1a/><Encrypt>abc</Encrypt></xml>",
		"name with two colons":           "<xml><a:b:c/><Encrypt>abc</Encrypt></xml>",
		"space after <":                  "<xml>< a/><Encrypt>abc</Encrypt></xml>",
		"too deep":                       "<xml><Encrypt>abc</Encrypt>" + deep + "</xml>",
		"GBK encoding":                   `<?xml version="1.0" encoding="GBK"?><xml><Encrypt>abc</Encrypt></xml>`,
		"XML 1.1":                        `<?xml version="1.1"?><xml><Encrypt>abc</Encrypt></xml>`,
		"PI without target":              "<? ?><xml><Encrypt>abc</Encrypt></xml>",
		"unterminated PI":                "<xml><Encrypt>abc</Encrypt></xml><?pi",
		"-- in a comment":                "<xml><!-- a -- b --><Encrypt>abc</Encrypt></xml>",
		"comment ending --->":            "<xml><!-- a ---><Encrypt>abc</Encrypt></xml>",
		"unterminated comment":           "<xml><Encrypt>abc</Encrypt></xml><!--",
		"unterminated CDATA":             "<xml><Encrypt><![CDATA[abc</Encrypt></xml>",
		"invalid UTF-8 in Encrypt":       "<xml><Encrypt>ab\xffc</Encrypt></xml>",
		"invalid UTF-8 in CDATA":         "<xml><Encrypt><![CDATA[ab\xc3]]></Encrypt></xml>",
		"invalid UTF-8 in a comment":     "<xml><!--\xff--><Encrypt>abc</Encrypt></xml>",
		"invalid UTF-8 in a name":        "<xml><a\xff/><Encrypt>abc</Encrypt></xml>",
		"invalid UTF-8 in an attribute":  "<xml a=\"\xff\"><Encrypt>abc</Encrypt></xml>",
		"control character in Encrypt":   "<xml><Encrypt>ab\x01c</Encrypt></xml>",
		"control character in a comment": "<xml><!--\x1b--><Encrypt>abc</Encrypt></xml>",
		"control character in a PI":      "<xml><?pi \x00?><Encrypt>abc</Encrypt></xml>",
		"U+FFFF in text":                 "<xml><a>\uFFFF</a><Encrypt>abc</Encrypt></xml>",
		"encoded surrogate":              "<xml><Encrypt>ab\xed\xa0\x80</Encrypt></xml>",
	} {
		t.Run(name, func(t *testing.T) {
			got, err := EncryptText([]byte(body))
			if !errors.Is(err, webhook.ErrMalformed) {
				t.Fatalf("EncryptText = %q, %v; want ErrMalformed", got, err)
			}
			if strings.Contains(err.Error(), "abc") || strings.Contains(err.Error(), "boom") {
				t.Errorf("error %q quotes the input", err)
			}
		})
	}
}

// TestEncryptTextAllocations checks that the junk an unauthenticated sender
// can post costs no memory beyond the <Encrypt> text.
func TestEncryptTextAllocations(t *testing.T) {
	for _, j := range wxmsgtest.JunkEnvelopes(64 << 10) {
		allocs := testing.AllocsPerRun(5, func() {
			if _, err := EncryptText(j.Body); err != nil {
				t.Fatalf("%s: %v", j.Name, err)
			}
		})
		// The text (one exact allocation when it is one piece, a growing
		// builder when it is decoded piece by piece) and at most the error.
		if max := 32.0; allocs > max {
			t.Errorf("%s: %v allocations per call, want at most %v", j.Name, allocs, max)
		}
	}
}

// vectorBodies returns the POST bodies of the WeCom and WeChat vectors.
func vectorBodies(t testing.TB) []string {
	var bodies []string
	for _, file := range []struct{ name, provider string }{{"wecom.json", "wecom"}, {"wechat.json", "wechat_official_account"}} {
		for _, c := range wxmsgtest.Load[wxmsgtest.Case](t, file.name, file.provider) {
			if c.Method == "POST" {
				bodies = append(bodies, c.Body)
			}
		}
	}
	return bodies
}

// TestEncryptTextVectors reads every vector envelope as a full xmljson parse
// does (the code EncryptText replaces).
func TestEncryptTextVectors(t *testing.T) {
	n := 0
	for _, body := range vectorBodies(t) {
		doc, err := xmljson.Convert([]byte(body))
		if err != nil || doc.Get("Encrypt") == "" {
			continue // a plaintext-mode body
		}
		n++
		if got, err := EncryptText([]byte(body)); err != nil || got != doc.Get("Encrypt") {
			t.Errorf("EncryptText = %q, %v; want %q", got, err, doc.Get("Encrypt"))
		}
	}
	if n < 10 {
		t.Errorf("only %d vector envelopes", n)
	}
}

// FuzzEncryptText checks EncryptText against a full parse of the envelope by
// package xmljson (the code it replaces): when both accept, they read the
// same <Encrypt>; on ASCII input they accept the same envelopes. (Non-ASCII
// names are not checked against the XML name tables, and xmljson accepts
// non-ASCII white space outside the root.)
func FuzzEncryptText(f *testing.F) {
	for _, body := range vectorBodies(f) {
		f.Add([]byte(body))
	}
	f.Add([]byte("<xml><ToUserName><![CDATA[x]]></ToUserName><Encrypt><![CDATA[abc]]></Encrypt><AgentID>1</AgentID></xml>"))
	f.Add([]byte("<?xml version=\"1.0\"?><xml a='1'><Encrypt>a&amp;&#x42;\r\nc<!--c--></Encrypt><b><c/></b></xml>"))
	f.Add([]byte("<xml><p:Encrypt>abc</p:Encrypt><Encrypt>x</Encrypt></xml>"))
	f.Fuzz(func(t *testing.T, body []byte) {
		got, err := EncryptText(body)
		if err != nil && !errors.Is(err, webhook.ErrMalformed) {
			t.Fatalf("error %v does not wrap ErrMalformed", err)
		}
		if err == nil && (got == "" || !utf8.ValidString(got)) {
			t.Fatalf("EncryptText = %q", got)
		}
		doc, cerr := xmljson.Convert(body)
		want := ""
		if cerr == nil {
			want = doc.Get("Encrypt")
		}
		switch {
		case err == nil && want != "" && got != want:
			t.Fatalf("EncryptText = %q, xmljson reads %q", got, want)
		case err == nil && want == "" && isASCII(body):
			t.Fatalf("EncryptText = %q, xmljson: %v", got, cerr)
		case err != nil && want != "" && isASCII(body):
			t.Fatalf("EncryptText: %v, xmljson reads %q", err, want)
		}
	})
}

func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

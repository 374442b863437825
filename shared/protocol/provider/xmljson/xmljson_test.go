package xmljson

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/hookwall/hookwall/shared/base/webhook"
)

const approvalXML = `<xml><ToUserName><![CDATA[ww8763a2c9851f8563]]></ToUserName><FromUserName><![CDATA[sys]]></FromUserName><CreateTime>1767226000</CreateTime><MsgType><![CDATA[event]]></MsgType><Event><![CDATA[sys_approval_change]]></Event><AgentID>3010040</AgentID><ApprovalInfo><SpNo>202601010007</SpNo><SpName><![CDATA[采购申请]]></SpName><SpStatus>1</SpStatus><Applyer><UserId><![CDATA[LiSi]]></UserId><Party><![CDATA[2]]></Party></Applyer><SpRecord><SpStatus>1</SpStatus><Details><Approver><UserId><![CDATA[WangWu]]></UserId></Approver><Speech><![CDATA[]]></Speech></Details></SpRecord><SpRecord><SpStatus>2</SpStatus></SpRecord><StatuChangeEvent>1</StatuChangeEvent></ApprovalInfo></xml>`

func TestConvert(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"official text message with newlines",
			"<xml><ToUserName><![CDATA[wx5823bf96d3bd56c7]]></ToUserName>\n<FromUserName><![CDATA[mycreate]]></FromUserName>\n<CreateTime>1409659813</CreateTime>\n<MsgType><![CDATA[text]]></MsgType>\n<Content><![CDATA[hello]]></Content>\n<MsgId>4561255354251345929</MsgId>\n<AgentID>218</AgentID>\n</xml>",
			`{"AgentID":"218","Content":"hello","CreateTime":"1409659813","FromUserName":"mycreate","MsgId":"4561255354251345929","MsgType":"text","ToUserName":"wx5823bf96d3bd56c7"}`},
		{"nested, repeated and empty CDATA", approvalXML,
			`{"AgentID":"3010040","ApprovalInfo":{"Applyer":{"Party":"2","UserId":"LiSi"},"SpName":"采购申请","SpNo":"202601010007","SpRecord":[{"Details":{"Approver":{"UserId":"WangWu"},"Speech":""},"SpStatus":"1"},{"SpStatus":"2"}],"SpStatus":"1","StatuChangeEvent":"1"},"CreateTime":"1767226000","Event":"sys_approval_change","FromUserName":"sys","MsgType":"event","ToUserName":"ww8763a2c9851f8563"}`},
		{"three repeats stay one array", `<xml><a>1</a><b/><a>2</a><a><c>3</c></a></xml>`, `{"a":["1","2",{"c":"3"}],"b":""}`},
		{"prolog, comments and entities", "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!-- c --><xml><a>x &amp; &lt;y&gt; &#x1F642;<![CDATA[<z>]]></a><?pi x?></xml>\n", `{"a":"x & <y> 🙂<z>"}`},
		{"mixed text kept", `<xml>hi<a>1</a> there</xml>`, `{"#text":"hi there","a":"1"}`},
		{"empty root", `<xml></xml>`, `{}`},
		{"text-only root", `<xml>t</xml>`, `{"#text":"t"}`},
		{"namespaced names use local part", `<xml><p:a xmlns:p="u">1</p:a></xml>`, `{"a":"1"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Convert([]byte(tt.in))
			if err != nil {
				t.Fatalf("Convert: %v", err)
			}
			if string(d.JSON) != tt.want {
				t.Errorf("JSON = %s\nwant   %s", d.JSON, tt.want)
			}
			var back map[string]any
			if err := json.Unmarshal(d.JSON, &back); err != nil {
				t.Errorf("JSON does not decode: %v", err)
			}
		})
	}
}

func TestDocGet(t *testing.T) {
	d, err := Convert([]byte(approvalXML))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		path []string
		want string
	}{
		{[]string{"Event"}, "sys_approval_change"},
		{[]string{"ApprovalInfo", "SpNo"}, "202601010007"},
		{[]string{"ApprovalInfo", "Applyer", "UserId"}, "LiSi"},
		{[]string{"ApprovalInfo"}, ""},
		{[]string{"ApprovalInfo", "SpRecord"}, ""},
		{[]string{"ApprovalInfo", "SpRecord", "SpStatus"}, ""},
		{[]string{"Missing"}, ""},
		{[]string{"Event", "x"}, ""},
		{nil, ""},
	} {
		if got := d.Get(tt.path...); got != tt.want {
			t.Errorf("Get(%q) = %q, want %q", tt.path, got, tt.want)
		}
	}
	if !d.Has("AgentID") || d.Has("MsgId") {
		t.Error("Has: wrong answer")
	}
	var nilDoc *Doc
	if nilDoc.Get("a") != "" || nilDoc.Has("a") {
		t.Error("nil Doc should be empty")
	}
}

func TestConvertRejects(t *testing.T) {
	deep := strings.Repeat("<a>", MaxDepth) + strings.Repeat("</a>", MaxDepth)
	tests := map[string]string{
		"empty":               "",
		"not XML":             "我是中文abcd123",
		"wrong root":          "<root><a>1</a></root>",
		"two roots":           "<xml></xml><xml></xml>",
		"text after root":     "<xml></xml>junk",
		"text before root":    "junk<xml></xml>",
		"unclosed":            "<xml><a>1</a>",
		"mismatched":          "<xml><a>1</b></xml>",
		"mismatched prefix":   "<xml><p:a>1</q:a></xml>",
		"doctype":             `<!DOCTYPE xml [<!ENTITY e "boom">]><xml><a>&e;</a></xml>`,
		"external entity":     `<!DOCTYPE xml [<!ENTITY e SYSTEM "file:///etc/passwd">]><xml>&e;</xml>`,
		"undefined entity":    `<xml><a>&nbsp;</a></xml>`,
		"plain doctype":       `<!DOCTYPE xml><xml></xml>`,
		"too deep":            "<xml>" + deep + "</xml>",
		"GBK encoding":        `<?xml version="1.0" encoding="GBK"?><xml></xml>`,
		"bare ampersand":      `<xml><a>a & b</a></xml>`,
		"invalid char ref":    `<xml><a>&#0;</a></xml>`,
		"end without start":   `</xml>`,
		"unterminated cdata":  `<xml><a><![CDATA[x</a></xml>`,
		"attribute no quotes": `<xml a=b></xml>`,
	}
	for name, in := range tests {
		t.Run(name, func(t *testing.T) {
			d, err := Convert([]byte(in))
			if !errors.Is(err, webhook.ErrMalformed) {
				t.Fatalf("Convert = %v, %v; want ErrMalformed", d, err)
			}
			if strings.Contains(err.Error(), "boom") || strings.Contains(err.Error(), "passwd") || strings.Contains(err.Error(), "中文") {
				t.Errorf("error %q quotes the input", err)
			}
		})
	}
	// MaxDepth itself is accepted.
	ok := "<xml>" + strings.Repeat("<a>", MaxDepth-1) + "1" + strings.Repeat("</a>", MaxDepth-1) + "</xml>"
	if _, err := Convert([]byte(ok)); err != nil {
		t.Errorf("depth %d: %v", MaxDepth, err)
	}
}

func FuzzConvert(f *testing.F) {
	f.Add([]byte(approvalXML))
	f.Add([]byte("<xml><a>1</a><a>2</a><b><![CDATA[x]]></b></xml>"))
	f.Add([]byte(`<?xml version="1.0" encoding="utf-8"?><xml>t<a/>u</xml>`))
	f.Add([]byte("<xml><ToUserName><![CDATA[gh_b91768ca0897]]></ToUserName><Encrypt><![CDATA[abc]]></Encrypt></xml>"))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := Convert(data)
		if err != nil {
			if !errors.Is(err, webhook.ErrMalformed) {
				t.Fatalf("error %v does not wrap ErrMalformed", err)
			}
			return
		}
		var back map[string]any
		if err := json.Unmarshal(d.JSON, &back); err != nil {
			t.Fatalf("JSON does not decode: %v", err)
		}
		for k := range d.Fields {
			_ = d.Get(k)
		}
	})
}

func BenchmarkConvert(b *testing.B) {
	for b.Loop() {
		if _, err := Convert([]byte(approvalXML)); err != nil {
			b.Fatal(err)
		}
	}
}

func TestConvertRejectsInvalidCharacters(t *testing.T) {
	for name, in := range map[string]string{
		"invalid UTF-8 in a comment":            "<xml><MsgType>text</MsgType><!--\xff--></xml>",
		"control character in a comment":        "<xml><MsgType>text</MsgType><!--\x01--></xml>",
		"invalid UTF-8 in a PI":                 "<xml><MsgType>text</MsgType><?pi \xfe?></xml>",
		"control character in a PI":             "<xml><MsgType>text</MsgType><?pi \x1b[31m?></xml>",
		"invalid UTF-8 in the prolog":           "<!--\xc3--><xml><MsgType>text</MsgType></xml>",
		"hex reference to a surrogate":          "<xml><MsgType>te&#xD800;xt</MsgType></xml>",
		"decimal reference to a surrogate":      "<xml><MsgType>te&#57343;xt</MsgType></xml>",
		"surrogate reference in an attribute":   `<xml><MsgType a="&#xDC00;">text</MsgType></xml>`,
		"encoded surrogate":                     "<xml><MsgType>te\xed\xa0\x80xt</MsgType></xml>",
		"invalid UTF-8 in text":                 "<xml><MsgType>te\xffxt</MsgType></xml>",
		"NUL in text":                           "<xml><MsgType>te\x00xt</MsgType></xml>",
		"U+FFFE in text":                        "<xml><MsgType>te\uFFFExt</MsgType></xml>",
		"U+FFFF in CDATA":                       "<xml><MsgType><![CDATA[te\uFFFFxt]]></MsgType></xml>",
		"reference to a control character":      "<xml><MsgType>te&#x1B;xt</MsgType></xml>",
		"truncated UTF-8 at the end":            "<xml><MsgType>text</MsgType></xml>\xe4\xb8",
		"surrogate reference beside U+FFFD":     "<xml><MsgType>\uFFFD&#xD801;</MsgType></xml>",
		"surrogate reference after a valid one": "<xml><MsgType>&#xFFFD;&#xDBFF;</MsgType></xml>",
	} {
		t.Run(name, func(t *testing.T) {
			d, err := Convert([]byte(in))
			if !errors.Is(err, webhook.ErrMalformed) {
				t.Fatalf("Convert = %v, %v; want ErrMalformed", d, err)
			}
		})
	}
}

func TestConvertKeepsLegalLookalikes(t *testing.T) {
	for in, want := range map[string]string{
		"<xml><a>&#xFFFD;\uFFFD</a></xml>":                    `{"a":"��"}`,
		"<xml><a><![CDATA[&#xD800;]]></a></xml>":              `{"a":"&#xD800;"}`,
		"<xml><!-- &#xD800; --><a>\u0085\U0010FFFD</a></xml>": "{\"a\":\"\u0085\U0010FFFD\"}",
		"<xml><a b=\"&#xFFFD;\">\t\r\n</a></xml>":             "{\"a\":\"\\t\\n\"}",
	} {
		d, err := Convert([]byte(in))
		if err != nil {
			t.Errorf("Convert(%q): %v", in, err)
			continue
		}
		if string(d.JSON) != want {
			t.Errorf("Convert(%q) = %s, want %s", in, d.JSON, want)
		}
	}
}

func TestCheckChars(t *testing.T) {
	for in, ok := range map[string]bool{
		"":                   true,
		"a\t\n\r b":          true,
		"中文\U0001F642\uFFFD": true,
		"\x00":               false,
		"\x7f":               true,
		"\xc0\x80":           false,
		"\uFFFE":             false,
		"\xed\xbf\xbf":       false,
	} {
		if err := CheckChars([]byte(in)); (err == nil) != ok || (err != nil && !errors.Is(err, webhook.ErrMalformed)) {
			t.Errorf("CheckChars(%q) = %v, want ok = %v", in, err, ok)
		}
	}
}

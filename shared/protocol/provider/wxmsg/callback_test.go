package wxmsg

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/protocol/provider/xmljson"
)

// testRules key a message by its MsgId, or by what the test sets.
func testRules(key func(*xmljson.Doc, *webhook.Event) string) *Rules {
	if key == nil {
		key = func(doc *xmljson.Doc, _ *webhook.Event) string { return "msg:" + doc.Get("MsgId") }
	}
	return &Rules{Provider: "test", Type: Type, Key: key, Ack: Ack([]byte("ok"))}
}

const testMessage = "<xml><CreateTime>1767225700</CreateTime><MsgType>text</MsgType><Content>中文</Content><MsgId>42</MsgId></xml>"

func TestRulesParse(t *testing.T) {
	r := testRules(nil)
	errVerify := fmt.Errorf("test: signature: %w", webhook.ErrBadSignature)
	verify := func(req *webhook.Request) (string, error) {
		if req.Query.Get("ok") == "" {
			return "", errVerify
		}
		return "echo", nil
	}
	open := func(req *webhook.Request) ([]byte, error) {
		if req.Query.Get("ok") == "" {
			return nil, errVerify
		}
		return req.Body, nil
	}
	signed := func(method, body string) *webhook.Request {
		return &webhook.Request{Method: method, Query: map[string][]string{"ok": {"1"}}, Body: []byte(body)}
	}

	d, err := r.Parse(signed("GET", ""), verify, open)
	if err != nil || !d.Verification || string(d.Reply.Body) != "echo" || len(d.Events) != 0 {
		t.Errorf("GET: %+v, %v; want the verification answered with the echo", d, err)
	}
	d, err = r.Parse(signed("POST", testMessage), verify, open)
	if err != nil || d.Verification || len(d.Events) != 1 || string(d.Reply.Body) != "ok" || d.Reply.Status != 200 {
		t.Fatalf("POST: %+v, %v; want one event acknowledged with Ack", d, err)
	}
	if ev := d.Events[0]; ev.Type != "text" || ev.DedupKey != "msg:42" || string(ev.Raw) != testMessage {
		t.Errorf("POST event = %+v", ev)
	}
	for name, c := range map[string]struct {
		req  *webhook.Request
		want error
	}{
		"nil request":       {nil, webhook.ErrMalformed},
		"unsigned GET":      {&webhook.Request{Method: "GET"}, webhook.ErrBadSignature},
		"unsigned POST":     {&webhook.Request{Method: "POST", Body: []byte(testMessage)}, webhook.ErrBadSignature},
		"PUT":               {signed("PUT", testMessage), webhook.ErrMethodNotAllowed},
		"POST not XML":      {signed("POST", "中文 not xml"), webhook.ErrMalformed},
		"POST of no type":   {signed("POST", "<xml><MsgType>event</MsgType><MsgId>1</MsgId></xml>"), webhook.ErrMalformed},
		"lower-case method": {signed("post", testMessage), webhook.ErrMethodNotAllowed},
	} {
		d, err := r.Parse(c.req, verify, open)
		if !errors.Is(err, c.want) || d != nil {
			t.Errorf("%s: %+v, %v; want an error wrapping %v", name, d, err, c.want)
			continue
		}
		if !strings.HasPrefix(err.Error(), "test: ") || strings.Contains(err.Error(), "中文") {
			t.Errorf("%s: error %q: want the provider's prefix and no message content", name, err)
		}
	}
}

func TestRulesEventKeyGuard(t *testing.T) {
	var seen *webhook.Event
	r := testRules(func(_ *xmljson.Doc, ev *webhook.Event) string {
		c := *ev // as the key rule sees it
		seen = &c
		return "has space"
	})
	if ev, err := r.Event([]byte(testMessage)); !errors.Is(err, webhook.ErrMalformed) || ev != nil {
		t.Errorf("Event with an invalid key = %+v, %v; want ErrMalformed", ev, err)
	}
	if seen == nil || seen.Type != "text" || len(seen.PayloadHash) != 64 || seen.DedupKey != "" {
		t.Errorf("Key saw %+v; want the event with everything but its DedupKey", seen)
	}
}

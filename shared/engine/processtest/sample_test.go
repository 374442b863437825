package processtest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/protocol/provider/line"
)

// Every sample of events/bodies parses, through its provider's own parser,
// into an event of the type its name says, with its real fields.
func TestSamplesParseAsTheirPlatformsSendThem(t *testing.T) {
	for file, want := range map[string]struct{ provider, typ, field string }{
		"feishu-im-message-receive-v1.json": {"feishu", "im.message.receive_v1", "message_id"},
		"line-follow.json":                  {"line", "follow", "webhookEventId"},
		"line-message.json":                 {"line", "message", "534897012345678901"},
		"slack-app-mention.json":            {"slack", "app_mention", "event_id"},
		"standard-order-paid.json":          {"standard", "order.paid", "order"},
		"wechat-text.xml":                   {"wechat", "text", "MsgId"},
		"wecom-text.xml":                    {"wecom", "text", "MsgId"},
		"line-unfollow.json":                {"line", "unfollow", "webhookEventId"},
		"line-postback.json":                {"line", "postback", "itemid=111"},
		"slack-message.json":                {"slack", "message", "Hello world"},
		"wechat-subscribe.xml":              {"wechat", "subscribe", "oKzKivH6hwSntH4tXK9ieGIoh47G"},
		"wechat-click.xml":                  {"wechat", "CLICK", "V1001_TODAY_MUSIC"},
		"wecom-sys-approval-change.xml":     {"wecom", "sys_approval_change", "WuJunJie"},
		"wecom-change-contact.xml":          {"wecom", "change_contact", "zhangsan"},
		"wecom-change-external-contact.xml": {"wecom", "change_external_contact", "woAJ2GCAAAXtWyujaWJHDDGi0mACAAAA"},
		"line-beacon.json":                  {"line", "beacon", "d41d8cd98f"},
	} {
		body, err := os.ReadFile(filepath.Join("..", "..", "..", "events", "bodies", file))
		if err != nil {
			t.Fatal(err)
		}
		payload, err := sample(want.provider, want.typ, body, time.Now())
		if err != nil {
			t.Errorf("%s: %v", file, err)
			continue
		}
		if !json.Valid(payload) || !strings.Contains(string(payload), want.field) {
			t.Errorf("%s: payload %s, want JSON carrying %q", file, payload, want.field)
		}
	}
}

// A delivery without an event of the type asked for is refused, naming
// what it carries.
func TestSampleRefusesAnotherType(t *testing.T) {
	body, err := os.ReadFile(filepath.Join("..", "..", "..", "events", "bodies", "line-follow.json"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sample(line.Name, "message", body, time.Now()); err == nil || !strings.Contains(err.Error(), "follow") {
		t.Errorf("got %v, want an error naming the follow event the body carries", err)
	}
	if _, err := sample(line.Name, "message", []byte(`{}`), time.Now()); err == nil {
		t.Error("an empty delivery gave a sample")
	}
}

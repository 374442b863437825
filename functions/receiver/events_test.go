package main

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/hookwall/hookwall/shared/intake"
	"github.com/hookwall/hookwall/shared/provider/standard"
	"github.com/hookwall/hookwall/shared/provider/wxcrypto"
	"github.com/hookwall/hookwall/shared/store"
	"github.com/hookwall/hookwall/shared/tenants"
	"github.com/hookwall/hookwall/shared/webhook"
)

// The sample API Gateway events in events/receiver, for `sam local invoke`
// and for reading: each is signed with the local tenants document
// (infra/local/tenants.json). `make events` rewrites them with the current
// time (`go test ./functions/receiver -run TestSampleEvents -update`); this
// test checks that every committed sample is accepted by the receiver.

var update = flag.Bool("update", false, "rewrite events/receiver with fresh signatures")

const (
	eventsDir   = "../../events/receiver"
	tenantsFile = "../../infra/local/tenants.json"
	tenant      = "demo"
)

type sample struct {
	name, provider, method, query, body string
	headers                             map[string]string
}

func samples(t *testing.T, tn *tenants.Tenant, now time.Time) []sample {
	ts := strconv.FormatInt(now.Unix(), 10)
	nonce := "1597212914"
	lineEvent := func(kind, id, extra string) string {
		return fmt.Sprintf(`{"type":%q,%s"webhookEventId":%q,"deliveryContext":{"isRedelivery":false},"timestamp":%d,`+
			`"source":{"type":"user","userId":"U4af4980629aaaaaaaaaaaaaaaaaaaaaaa"},"replyToken":"b60d432864f44d079f6d8efe86cf404b","mode":"active"}`,
			kind, extra, id, now.UnixMilli())
	}
	lineBody := func(evs ...string) string {
		return `{"destination":"U00000000000000000000000000000001","events":[` + strings.Join(evs, ",") + `]}`
	}
	wxKey := func(k tenants.Secret) []byte {
		key, err := wxcrypto.ParseKey(k.Reveal())
		if err != nil {
			t.Fatal(err)
		}
		return key
	}
	encrypt := func(key []byte, xml, receiveID string) string {
		ct, err := wxcrypto.Encrypt(key, []byte("0123456789abcdef"), []byte(xml), receiveID)
		if err != nil {
			t.Fatal(err)
		}
		return ct
	}
	wecomKey := wxKey(tn.WeCom.EncodingAESKey)
	wecomToken := tn.WeCom.Token.Reveal()
	wecomPost := func(xml string) (query, body string) {
		ct := encrypt(wecomKey, xml, tn.WeCom.CorpID)
		q := url.Values{"msg_signature": {wxcrypto.Signature(wecomToken, ts, nonce, ct)}, "timestamp": {ts}, "nonce": {nonce}}
		return q.Encode(), "<xml><ToUserName><![CDATA[" + tn.WeCom.CorpID + "]]></ToUserName><AgentID><![CDATA[1000002]]></AgentID><Encrypt><![CDATA[" + ct + "]]></Encrypt></xml>"
	}
	echo := encrypt(wecomKey, "6386451842216651161", tn.WeCom.CorpID)
	wecomVerify := url.Values{"msg_signature": {wxcrypto.Signature(wecomToken, ts, nonce, echo)}, "timestamp": {ts}, "nonce": {nonce}, "echostr": {echo}}.Encode()
	wecomText, wecomTextBody := wecomPost(fmt.Sprintf(`<xml><ToUserName><![CDATA[%s]]></ToUserName><FromUserName><![CDATA[ZhangSan]]></FromUserName><CreateTime>%s</CreateTime><MsgType><![CDATA[text]]></MsgType><Content><![CDATA[order #A-1024?]]></Content><MsgId>7456789012345678901</MsgId><AgentID>1000002</AgentID></xml>`, tn.WeCom.CorpID, ts))
	wecomApproval, wecomApprovalBody := wecomPost(fmt.Sprintf(`<xml><ToUserName><![CDATA[%s]]></ToUserName><FromUserName><![CDATA[sys]]></FromUserName><CreateTime>%s</CreateTime><MsgType><![CDATA[event]]></MsgType><Event><![CDATA[sys_approval_change]]></Event><AgentID>3010040</AgentID><ApprovalInfo><SpNo>202611290001</SpNo><SpName><![CDATA[Purchase]]></SpName><SpStatus>2</SpStatus><TemplateId><![CDATA[3WLtyqgf6R9RgH84RzTakYp8b4kf5gAKTqNEfQAH]]></TemplateId><ApplyTime>%s</ApplyTime><Applyer><UserId><![CDATA[LiSi]]></UserId><Party><![CDATA[2]]></Party></Applyer><StatuChangeEvent>2</StatuChangeEvent></ApprovalInfo></xml>`, tn.WeCom.CorpID, ts, ts))

	wechatToken := tn.WeChat.Token.Reveal()
	plainSig := wxcrypto.Signature(wechatToken, ts, nonce)
	wechatVerify := url.Values{"signature": {plainSig}, "timestamp": {ts}, "nonce": {nonce}, "echostr": {"4375120948345356249"}}.Encode()
	subscribe := fmt.Sprintf(`<xml><ToUserName><![CDATA[gh_0000000000001]]></ToUserName><FromUserName><![CDATA[oKzKivH6hwSntH4tXK9ieGIoh47G]]></FromUserName><CreateTime>%s</CreateTime><MsgType><![CDATA[event]]></MsgType><Event><![CDATA[subscribe]]></Event><EventKey><![CDATA[qrscene_demo]]></EventKey></xml>`, ts)
	subCT := encrypt(wxKey(tn.WeChat.EncodingAESKey), subscribe, tn.WeChat.AppID)
	wechatSubscribe := url.Values{"signature": {plainSig}, "timestamp": {ts}, "nonce": {nonce}, "openid": {"oKzKivH6hwSntH4tXK9ieGIoh47G"},
		"encrypt_type": {"aes"}, "msg_signature": {wxcrypto.Signature(wechatToken, ts, nonce, subCT)}}.Encode()

	stdBody := `{"type":"order.paid","timestamp":"` + now.UTC().Format(time.RFC3339) + `","data":{"orderId":"A-1024","amount":4200}}`
	stdSig, err := standard.Sign(tn.Standard.Secrets[0].Reveal(), "msg_2Qx4demo0001", now.Unix(), []byte(stdBody))
	if err != nil {
		t.Fatal(err)
	}
	return []sample{
		{name: "line-message", provider: "line", method: "POST", body: lineBody(lineEvent("message", "01JDEMO0000000000000000001", `"message":{"type":"text","id":"534897012345678901","text":"Hello"},`))},
		{name: "line-follow", provider: "line", method: "POST", body: lineBody(lineEvent("follow", "01JDEMO0000000000000000002", `"follow":{"isUnblocked":false},`))},
		{name: "line-verify", provider: "line", method: "POST", body: lineBody()},
		{name: "wecom-url-verify", provider: "wecom", method: "GET", query: wecomVerify},
		{name: "wecom-text", provider: "wecom", method: "POST", query: wecomText, body: wecomTextBody},
		{name: "wecom-approval", provider: "wecom", method: "POST", query: wecomApproval, body: wecomApprovalBody},
		{name: "wechat-url-verify", provider: "wechat", method: "GET", query: wechatVerify},
		{name: "wechat-subscribe", provider: "wechat", method: "POST", query: wechatSubscribe, body: "<xml><ToUserName><![CDATA[gh_0000000000001]]></ToUserName><Encrypt><![CDATA[" + subCT + "]]></Encrypt></xml>"},
		{name: "standard-order-paid", provider: "standard", method: "POST", body: stdBody, headers: map[string]string{
			"content-type": "application/json", "webhook-id": "msg_2Qx4demo0001", "webhook-timestamp": strconv.FormatInt(now.Unix(), 10), "webhook-signature": stdSig}},
	}
}

func (s sample) apiGatewayEvent(lineSecret string) events.APIGatewayV2HTTPRequest {
	headers := map[string]string{"content-type": "text/xml"}
	for k, v := range s.headers {
		headers[k] = v
	}
	if s.provider == "line" {
		m := hmac.New(sha256.New, []byte(lineSecret))
		m.Write([]byte(s.body))
		headers["content-type"] = "application/json"
		headers["x-line-signature"] = base64.StdEncoding.EncodeToString(m.Sum(nil))
	}
	path := "/webhooks/" + s.provider + "/" + tenant
	e := events.APIGatewayV2HTTPRequest{
		Version: "2.0", RouteKey: "ANY /webhooks/{provider}/{tenant}", RawPath: path, RawQueryString: s.query,
		Headers: headers, PathParameters: map[string]string{"provider": s.provider, "tenant": tenant}, Body: s.body,
	}
	e.RequestContext.HTTP.Method = s.method
	e.RequestContext.HTTP.Path = path
	e.RequestContext.RequestID = "sample-" + s.name
	return e
}

// acceptAll claims every event as new and records nothing: the samples are
// checked for acceptance, not for storage.
type acceptAll struct{}

func (acceptAll) Claim(_ context.Context, ev store.NewEvent, _ time.Duration) (store.ClaimResult, error) {
	return store.ClaimResult{Outcome: store.Claimed, Record: &store.Record{Key: ev.Key, Status: webhook.StatusReceived, Version: 1}}, nil
}
func (acceptAll) Unclaim(context.Context, *store.Record) (bool, error) { return true, nil }
func (acceptAll) TakeOverEnqueue(context.Context, *store.Record, time.Duration) (bool, error) {
	return false, nil
}
func (acceptAll) RevertEnqueue(context.Context, *store.Record, int64) error { return nil }
func (acceptAll) Send(context.Context, []webhook.Envelope) error            { return nil }

func TestSampleEvents(t *testing.T) {
	tenants, err := tenants.LoadFile(tenantsFile)
	if err != nil {
		t.Fatal(err)
	}
	tn, ok := tenants.Tenant(tenant)
	if !ok {
		t.Fatalf("%s has no tenant %q", tenantsFile, tenant)
	}
	if *update {
		for _, s := range samples(t, tn, time.Now()) {
			b, err := json.MarshalIndent(s.apiGatewayEvent(tn.LINE.ChannelSecret.Reveal()), "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(eventsDir, s.name+".json"), append(b, '\n'), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	parsers, err := intake.BuildParsers(tenants, intake.ParserOptions{})
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(eventsDir, "*.json"))
	sort.Strings(files)
	if len(files) == 0 {
		t.Fatalf("no samples in %s: run make events", eventsDir)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			var e events.APIGatewayV2HTTPRequest
			b, err := os.ReadFile(f)
			if err != nil || json.Unmarshal(b, &e) != nil {
				t.Fatalf("read %s: %v", f, err)
			}
			signedAt := signedTime(t, e)
			h, err := intake.New(intake.Config{Parsers: parsers, Store: acceptAll{}, Queue: acceptAll{},
				Now: func() time.Time { return signedAt }})
			if err != nil {
				t.Fatal(err)
			}
			resp, _ := h.HandleAPIGateway(context.Background(), e)
			if resp.StatusCode != 200 {
				t.Fatalf("status %d (%s): the sample no longer verifies; run make events", resp.StatusCode, resp.Body)
			}
		})
	}
}

// signedTime is the time a sample was signed (its timestamp parameter or
// header), so that the committed samples keep verifying.
func signedTime(t *testing.T, e events.APIGatewayV2HTTPRequest) time.Time {
	q, _ := url.ParseQuery(e.RawQueryString)
	ts := q.Get("timestamp")
	if ts == "" {
		ts = e.Headers["webhook-timestamp"]
	}
	if ts == "" {
		return time.Now()
	}
	n, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		t.Fatalf("timestamp %q: %v", ts, err)
	}
	return time.Unix(n, 0)
}

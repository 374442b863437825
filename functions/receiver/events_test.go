package main

import (
	"context"
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

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/config/signer"
	"github.com/hookwall/hookwall/shared/config/tenants"
	"github.com/hookwall/hookwall/shared/engine/intake"
	"github.com/hookwall/hookwall/shared/protocol/provider/wecom"
	"github.com/hookwall/hookwall/shared/state/store"
)

// The sample API Gateway events in events/receiver, for reading and as the
// templates of `sam local invoke`'s: each is signed with the local tenants
// document (infra/local/tenants.json). `make events` signs them anew with the
// current time into a git-ignored directory (`go test ./functions/receiver
// -run TestSampleEvents -update -events-dir .local/events/receiver`), signed by
// package signer as `hookwall sign` signs, so the committed files stay as they
// are; `-update` alone rewrites the committed ones (when a sample changes).
// This test checks that every sample in the directory is accepted by the
// receiver.

var (
	update    = flag.Bool("update", false, "sign the samples anew (now) and write them to -events-dir")
	outputDir = flag.String("events-dir", "", "with -update, where to write and then check the samples (an absolute path; default events/receiver)")
)

const (
	eventsDir   = "../../events/receiver"
	tenantsFile = "../../infra/local/tenants.json"
	tenant      = "demo"
)

type sample struct {
	name string
	req  *signer.Request
}

// The sample bodies, with signer placeholders for the signing time.
const (
	lineEvent = `{"type":%q,%s"webhookEventId":%q,"deliveryContext":{"isRedelivery":false},"timestamp":{{now_ms}},` +
		`"source":{"type":"user","userId":"U4af4980629aaaaaaaaaaaaaaaaaaaaaaa"},"replyToken":"b60d432864f44d079f6d8efe86cf404b","mode":"active"}`
	wecomText         = `<xml><ToUserName><![CDATA[%s]]></ToUserName><FromUserName><![CDATA[ZhangSan]]></FromUserName><CreateTime>{{now}}</CreateTime><MsgType><![CDATA[text]]></MsgType><Content><![CDATA[order #A-1024?]]></Content><MsgId>7456789012345678901</MsgId><AgentID>1000002</AgentID></xml>`
	wecomApproval     = `<xml><ToUserName><![CDATA[%s]]></ToUserName><FromUserName><![CDATA[sys]]></FromUserName><CreateTime>{{now}}</CreateTime><MsgType><![CDATA[event]]></MsgType><Event><![CDATA[sys_approval_change]]></Event><AgentID>3010040</AgentID><ApprovalInfo><SpNo>202611290001</SpNo><SpName><![CDATA[Purchase]]></SpName><SpStatus>2</SpStatus><TemplateId><![CDATA[3WLtyqgf6R9RgH84RzTakYp8b4kf5gAKTqNEfQAH]]></TemplateId><ApplyTime>{{now}}</ApplyTime><Applyer><UserId><![CDATA[LiSi]]></UserId><Party><![CDATA[2]]></Party></Applyer><StatuChangeEvent>2</StatuChangeEvent></ApprovalInfo></xml>`
	wechatSubscribe   = `<xml><ToUserName><![CDATA[gh_0000000000001]]></ToUserName><FromUserName><![CDATA[oKzKivH6hwSntH4tXK9ieGIoh47G]]></FromUserName><CreateTime>{{now}}</CreateTime><MsgType><![CDATA[event]]></MsgType><Event><![CDATA[subscribe]]></Event><EventKey><![CDATA[qrscene_demo]]></EventKey></xml>`
	standardOrderPaid = `{"type":"order.paid","timestamp":"{{now_rfc3339}}","data":{"orderId":"A-1024","amount":4200}}`
)

// samples signs every sample with the tenant's secrets (package signer, as
// `hookwall sign` does) at now.
func samples(t *testing.T, tn *tenants.Tenant, now time.Time) []sample {
	opts := signer.Options{Now: now, Nonce: "1597212914", MessageID: "msg_2Qx4demo0001"}
	lineBody := func(evs ...string) string {
		return `{"destination":"U00000000000000000000000000000001","events":[` + strings.Join(evs, ",") + `]}`
	}
	post := func(name, provider, body string) sample {
		b, err := signer.Expand([]byte(body), now, nil)
		if err != nil {
			t.Fatal(err)
		}
		req, err := signer.Sign(tn, provider, b, opts)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return sample{name, req}
	}
	verify := func(name, provider, echo string) sample {
		req, err := signer.Verification(tn, provider, echo, opts)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return sample{name, req}
	}
	wc, ok := tn.Settings(wecom.Name)
	if !ok {
		t.Fatalf("tenant %s has no wecom settings", tn.Name)
	}
	corpID := wc.(*wecom.Settings).CorpID
	return []sample{
		post("line-message", "line", lineBody(fmt.Sprintf(lineEvent, "message", `"message":{"type":"text","id":"534897012345678901","text":"Hello"},`, "01JDEMO0000000000000000001"))),
		post("line-follow", "line", lineBody(fmt.Sprintf(lineEvent, "follow", `"follow":{"isUnblocked":false},`, "01JDEMO0000000000000000002"))),
		post("line-verify", "line", lineBody()),
		verify("wecom-url-verify", "wecom", "6386451842216651161"),
		post("wecom-text", "wecom", fmt.Sprintf(wecomText, corpID)),
		post("wecom-approval", "wecom", fmt.Sprintf(wecomApproval, corpID)),
		verify("wechat-url-verify", "wechat", "4375120948345356249"),
		post("wechat-subscribe", "wechat", wechatSubscribe),
		post("standard-order-paid", "standard", standardOrderPaid),
	}
}

// apiGatewayEvent is the request as API Gateway (HTTP API, payload 2.0)
// hands it to the receiver: lower-case header names, the raw query.
func (s sample) apiGatewayEvent() events.APIGatewayV2HTTPRequest {
	headers := map[string]string{}
	for k, v := range s.req.Header {
		headers[strings.ToLower(k)] = v[0]
	}
	path := s.req.Path()
	e := events.APIGatewayV2HTTPRequest{
		Version: "2.0", RouteKey: s.req.Method + " /webhooks/{provider}/{tenant}", RawPath: path, RawQueryString: s.req.Query.Encode(),
		Headers: headers, PathParameters: map[string]string{"provider": s.req.Provider, "tenant": s.req.Tenant}, Body: string(s.req.Body),
	}
	e.RequestContext.RouteKey = e.RouteKey // the template's routes: GET and POST, no ANY
	e.RequestContext.HTTP.Method = s.req.Method
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
func (acceptAll) RevertEnqueue(context.Context, *store.Record, int64) error  { return nil }
func (acceptAll) CountDelivery(context.Context, *store.Record) (bool, error) { return true, nil }
func (acceptAll) LoadProgress(context.Context, string) (store.Progress, error) {
	return store.Progress{}, nil
}
func (acceptAll) SaveProgress(context.Context, string, store.Progress) error { return nil }
func (acceptAll) Send(context.Context, []webhook.Envelope) error             { return nil }

func TestSampleEvents(t *testing.T) {
	tenants, err := tenants.LoadFile(tenantsFile)
	if err != nil {
		t.Fatal(err)
	}
	tn, ok := tenants.Tenant(tenant)
	if !ok {
		t.Fatalf("%s has no tenant %q", tenantsFile, tenant)
	}
	dir := eventsDir
	if *outputDir != "" {
		dir = *outputDir
	}
	if *update {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, s := range samples(t, tn, time.Now()) {
			b, err := json.MarshalIndent(s.apiGatewayEvent(), "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, s.name+".json"), append(b, '\n'), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	parsers, err := intake.BuildParsers(tenants, intake.ParserOptions{})
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	sort.Strings(files)
	if len(files) == 0 {
		t.Fatalf("no samples in %s: run make events (or, for events/receiver, go test ./functions/receiver -run TestSampleEvents -update)", dir)
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
				t.Fatalf("status %d (%s): the sample no longer verifies; run make events (or, for events/receiver, go test ./functions/receiver -run TestSampleEvents -update)", resp.StatusCode, resp.Body)
			}
		})
	}
}

// What `make events` writes is accepted at the moment it is written, by the
// receiver's own clock: signed now, verified now (the committed samples above
// are checked at their signing time, so they keep passing; the same samples
// re-signed by `make events` right before `sam local invoke` pass then). Every
// committed file is one of these samples, and every sample is committed.
func TestSampleEventsVerifyNow(t *testing.T) {
	doc, err := tenants.LoadFile(tenantsFile)
	if err != nil {
		t.Fatal(err)
	}
	tn, _ := doc.Tenant(tenant)
	parsers, err := intake.BuildParsers(doc, intake.ParserOptions{})
	if err != nil {
		t.Fatal(err)
	}
	h, err := intake.New(intake.Config{Parsers: parsers, Store: acceptAll{}, Queue: acceptAll{}}) // Now: time.Now
	if err != nil {
		t.Fatal(err)
	}
	committed := map[string]bool{}
	files, _ := filepath.Glob(filepath.Join(eventsDir, "*.json"))
	for _, f := range files {
		committed[strings.TrimSuffix(filepath.Base(f), ".json")] = true
	}
	for _, s := range samples(t, tn, time.Now()) {
		if !committed[s.name] {
			t.Errorf("%s.json is not in %s: run go test ./functions/receiver -run TestSampleEvents -update", s.name, eventsDir)
		}
		delete(committed, s.name)
		// Through JSON, as sam local hands the file to the function.
		b, err := json.Marshal(s.apiGatewayEvent())
		if err != nil {
			t.Fatal(err)
		}
		var e events.APIGatewayV2HTTPRequest
		if err := json.Unmarshal(b, &e); err != nil {
			t.Fatal(err)
		}
		if resp, _ := h.HandleAPIGateway(context.Background(), e); resp.StatusCode != 200 {
			t.Errorf("%s signed now: status %d (%s)", s.name, resp.StatusCode, resp.Body)
		}
	}
	for name := range committed {
		t.Errorf("%s/%s.json is no sample of this test (make events does not sign it)", eventsDir, name)
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

package signer_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/config/signer"
	"github.com/hookwall/hookwall/shared/config/tenants"
	"github.com/hookwall/hookwall/shared/engine/intake"
	"github.com/hookwall/hookwall/shared/protocol/provider/wechat"
)

const doc = `{"tenants":{
 "acme":{
  "line":{"channelSecret":"5e1f0c1d6a2b4e9f8a7b6c5d4e3f2a10"},
  "wecom":{"token":"T0ken","encodingAESKey":"HookwallLocalDemoKeyNotASecret0123456789abc","corpId":"ww0000000000000001"},
  "wechat":{"token":"T0ken","appId":"wx0000000000000001","encodingAESKey":"HookwallLocalWeChatKeyNotASecret0123456789a"},
  "standard":{"secrets":["whsec_gaTG2ftU1oeRGcKSkQLETLLJ3aPA+Hbw"]},
  "slack":{"signingSecret":"8f742231b10e8888abcd99yyyzzz85a5"},
  "feishu":{"verificationToken":"v-token","encryptKey":"k-key"}},
 "plain":{
  "wechat":{"token":"T0ken","appId":"wx0000000000000002"},
  "standard":{"rawSecrets":["a raw key"]}}}}`

var now = time.Unix(1767312100, 0)

const (
	lineBody   = `{"destination":"U1","events":[{"type":"follow","webhookEventId":"01JSIGNER0000000000000001","timestamp":{{now_ms}},"mode":"active","source":{"type":"user","userId":"U2"},"deliveryContext":{"isRedelivery":false},"follow":{"isUnblocked":false}}]}`
	stdBody    = `{"type":"order.paid","timestamp":"{{now_rfc3339}}","data":{"id":"{{id}}"}}`
	wecomBody  = `<xml><ToUserName><![CDATA[ww0000000000000001]]></ToUserName><FromUserName><![CDATA[ZhangSan]]></FromUserName><CreateTime>{{now}}</CreateTime><MsgType><![CDATA[text]]></MsgType><Content><![CDATA[hi & ]]]]><![CDATA[> 'quoted']]></Content><MsgId>7456789012345678901</MsgId><AgentID>1000002</AgentID></xml>`
	wechatBody = `<xml><ToUserName><![CDATA[gh_0000000000001]]></ToUserName><FromUserName><![CDATA[oKzKivH6hwSntH4tXK9ieGIoh47G]]></FromUserName><CreateTime>{{now}}</CreateTime><MsgType><![CDATA[text]]></MsgType><Content><![CDATA[hello]]></Content><MsgId>7312345678901234567</MsgId></xml>`
)

func load(t *testing.T) *tenants.Tenants {
	t.Helper()
	ts, err := tenants.Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

func tenant(t *testing.T, ts *tenants.Tenants, name string) *tenants.Tenant {
	t.Helper()
	tn, ok := ts.Tenant(name)
	if !ok {
		t.Fatalf("no tenant %s", name)
	}
	return tn
}

// accepting is an intake handler over the tenants of doc that claims every
// event as new.
func accepting(t *testing.T, ts *tenants.Tenants) (*intake.Handler, *recorder) {
	t.Helper()
	parsers, err := intake.BuildParsers(ts, intake.ParserOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	h, err := intake.New(intake.Config{Parsers: parsers, Store: rec, Queue: rec, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	return h, rec
}

func TestSignedRequestsAreAccepted(t *testing.T) {
	ts := load(t)
	h, rec := accepting(t, ts)
	srv := httptest.NewServer(h)
	defer srv.Close()
	cases := []struct {
		name, tenant, provider string
		mode                   string
		body                   string
		wantKey, wantInPayload string
	}{
		{"line", "acme", "line", "", lineBody, "line#acme#01JSIGNER0000000000000001", `"userId":"U2"`},
		{"standard", "acme", "standard", "", stdBody, "standard#acme#msg_fixed", `"type":"order.paid"`},
		{"standard raw secret", "plain", "standard", "", stdBody, "standard#plain#msg_fixed", `"type":"order.paid"`},
		{"wecom", "acme", "wecom", "", wecomBody, "wecom#acme#msg:1000002:7456789012345678901", `hi & ]]> 'quoted'`},
		{"wechat default (safe)", "acme", "wechat", "", wechatBody, "wechat#acme#msg:7312345678901234567", `"Content":"hello"`},
		{"wechat safe", "acme", "wechat", wechat.ModeSafe, wechatBody, "wechat#acme#msg:7312345678901234567", `"Content":"hello"`},
		{"wechat compat", "acme", "wechat", wechat.ModeCompat, wechatBody, "wechat#acme#msg:7312345678901234567", `"Content":"hello"`},
		{"wechat plain", "plain", "wechat", wechat.ModePlain, wechatBody, "wechat#plain#msg:7312345678901234567", `"Content":"hello"`},
		{"wechat default (plain)", "plain", "wechat", "", wechatBody, "wechat#plain#msg:7312345678901234567", `"Content":"hello"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			body, err := signer.Expand([]byte(c.body), now, nil)
			if err != nil {
				t.Fatal(err)
			}
			req, err := signer.Sign(tenant(t, ts, c.tenant), c.provider, body,
				signer.Options{Mode: c.mode, Now: now, MessageID: "msg_fixed"})
			if err != nil {
				t.Fatal(err)
			}
			hr, err := req.HTTPRequest(context.Background(), srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := http.DefaultClient.Do(hr)
			if err != nil {
				t.Fatal(err)
			}
			reply, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d %q, want 200", resp.StatusCode, reply)
			}
			got := rec.take()
			if len(got) != 1 || got[0].Key != c.wantKey {
				t.Fatalf("claimed %+v, want one event %s", got, c.wantKey)
			}
			if !strings.Contains(string(got[0].Payload), c.wantInPayload) {
				t.Errorf("payload %s does not hold %s", got[0].Payload, c.wantInPayload)
			}
			switch c.mode {
			case wechat.ModeCompat:
				if !bytes.Contains(req.Body, []byte("<Content><![CDATA[hello]]></Content>")) || !bytes.Contains(req.Body, []byte("<Encrypt>")) {
					t.Errorf("compat body %s lacks the plaintext fields or <Encrypt>", req.Body)
				}
			case wechat.ModeSafe:
				if bytes.Contains(req.Body, []byte("hello")) {
					t.Errorf("safe body %s carries the plaintext", req.Body)
				}
			}
		})
	}
}

func TestVerificationIsAnswered(t *testing.T) {
	ts := load(t)
	h, _ := accepting(t, ts)
	want := map[string]string{"wecom": "6386451842216651161", "wechat": "6386451842216651161", "slack": "6386451842216651161",
		"feishu": `{"challenge":"6386451842216651161"}`}
	if got := signer.HandshakeProviders(); len(got) != len(want) {
		t.Errorf("handshake providers %v, want those of %v", got, want)
	}
	for _, provider := range signer.HandshakeProviders() {
		req, err := signer.Verification(tenant(t, ts, "acme"), provider, "6386451842216651161", signer.Options{Now: now})
		if err != nil {
			t.Fatal(err)
		}
		if req.Reply == nil || string(req.Reply.Body) != want[provider] {
			t.Fatalf("%s verification: Reply %+v, want the body %q", provider, req.Reply, want[provider])
		}
		hr, err := req.HTTPRequest(context.Background(), "http://receiver.test")
		if err != nil {
			t.Fatal(err)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, hr)
		if w.Code != req.Reply.Status || w.Body.String() != string(req.Reply.Body) || w.Header().Get("Content-Type") != req.Reply.ContentType {
			t.Errorf("%s verification: %d %q %q, want its Reply %+v", provider, w.Code, w.Header().Get("Content-Type"), w.Body, req.Reply)
		}
	}
	if _, err := signer.Verification(tenant(t, ts, "acme"), "line", "x", signer.Options{}); !errors.Is(err, signer.ErrNotConfigured) {
		t.Errorf("line verification: %v, want ErrNotConfigured", err)
	}
}

func TestSignRefuses(t *testing.T) {
	ts := load(t)
	acme, plain := tenant(t, ts, "acme"), tenant(t, ts, "plain")
	cases := []struct {
		name     string
		tn       *tenants.Tenant
		provider string
		mode     string
		body     string
		want     error
		mention  string
	}{
		{"unknown provider", acme, "myspace", "", "{}", webhook.ErrUnknownProvider, "want one of " + strings.Join(signer.Providers(), ", ")},
		{"provider not configured", plain, "line", "", "{}", signer.ErrNotConfigured, `tenant "plain" has no line settings`},
		{"mode on line", acme, "line", wechat.ModeSafe, "{}", signer.ErrNotConfigured, "wechat only"},
		{"unknown mode", acme, "wechat", "loud", wechatBody, signer.ErrNotConfigured, "safe, compat or plain"},
		{"plain with a key", acme, "wechat", wechat.ModePlain, wechatBody, signer.ErrNotConfigured, "use mode safe or compat"},
		{"safe without a key", plain, "wechat", wechat.ModeSafe, wechatBody, signer.ErrNotConfigured, "no wechat encodingAESKey"},
		{"line body not JSON", acme, "line", "", "<xml/>", signer.ErrBadBody, "JSON"},
		{"standard body not JSON", acme, "standard", "", "nope", signer.ErrBadBody, "JSON"},
		{"wecom body not XML", acme, "wecom", "", `{"a":1}`, signer.ErrBadBody, "message XML"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := signer.Sign(c.tn, c.provider, []byte(c.body), signer.Options{Mode: c.mode})
			if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.mention) {
				t.Fatalf("err = %v, want %v mentioning %q", err, c.want, c.mention)
			}
		})
	}
}

func TestURL(t *testing.T) {
	req := &signer.Request{Provider: "line", Tenant: "acme", Query: url.Values{"a": {"1+2"}}}
	for base, want := range map[string]string{
		"http://127.0.0.1:3000":                               "http://127.0.0.1:3000/webhooks/line/acme?a=1%2B2",
		"https://api.example.com/prod/":                       "https://api.example.com/prod/webhooks/line/acme?a=1%2B2",
		"https://api.example.com/prod/webhooks/line/acme":     "https://api.example.com/prod/webhooks/line/acme?a=1%2B2",
		"https://api.example.com/webhooks/line/acme?old=gone": "https://api.example.com/webhooks/line/acme?a=1%2B2",
	} {
		got, err := req.URL(base)
		if err != nil || got != want {
			t.Errorf("URL(%q) = %q, %v; want %q", base, got, err, want)
		}
	}
	for _, bad := range []string{"", "127.0.0.1:3000", "ftp://x/", "http://"} {
		if _, err := req.URL(bad); err == nil {
			t.Errorf("URL(%q) accepted", bad)
		}
	}
}

// TestCurlQuotesExactly runs the printed command in sh with curl replaced by
// a function that prints its arguments, and checks the body and headers
// arrive byte for byte.
func TestCurlQuotesExactly(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	req := &signer.Request{Method: "POST", Provider: "line", Tenant: "acme", Query: url.Values{},
		Header: http.Header{"X-Line-Signature": {"a'b\"c$d"}},
		Body:   []byte("{\"text\":\"it's $HOME `x` \\\\ \n line two\"}\n")}
	cmd, err := req.Curl("http://127.0.0.1:3000")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(sh, "-c", `curl() { for a in "$@"; do printf '%s\0' "$a"; done; }; `+cmd).Output()
	if err != nil {
		t.Fatalf("%s: %v", cmd, err)
	}
	args := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	want := []string{"-sS", "-i", "-X", "POST", "http://127.0.0.1:3000/webhooks/line/acme",
		"-H", "X-Line-Signature: a'b\"c$d", "--data-binary", string(req.Body)}
	if strings.Join(args, "\x00") != strings.Join(want, "\x00") {
		t.Errorf("curl got\n%q\nwant\n%q", args, want)
	}
}

func TestExpand(t *testing.T) {
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.FixedZone("X", 3600))
	got, err := signer.Expand([]byte(`{{now}} {{now_ms}} {{now_rfc3339}} {{id}} {{id}} {{other}}`), at, nil)
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(got))
	if f[0] != "1777633200" || f[1] != "1777633200000" || f[2] != "2026-05-01T11:00:00Z" || f[5] != "{{other}}" {
		t.Errorf("Expand = %q", got)
	}
	if len(f[3]) != 26 || f[3] == f[4] {
		t.Errorf("ids %q and %q: want two different 26-character ids", f[3], f[4])
	}
	plain := []byte("no placeholders")
	if got, _ := signer.Expand(plain, at, nil); string(got) != string(plain) {
		t.Errorf("Expand changed %q to %q", plain, got)
	}
}

// TestSignV1a checks that a tenant with a Standard Webhooks whsk_ signing
// key gets v1a signatures that its receiver, and one that has only the
// matching whpk_ public key, accept; and that public keys alone cannot sign.
func TestSignV1a(t *testing.T) {
	ts, err := tenants.Parse([]byte(`{"tenants":{
 "ed":{"standard":{"signingKey":"whsk_IRh3yhWsBdk6VhFoVWmYOO2+WnkWxQGpETPRCV8V6XU="}},
 "pk":{"standard":{"publicKeys":["whpk_+K1jd4Iy8P1QOZfNes7M5V7r8q03tiFzbkDbP0Sok9E="]}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	h, rec := accepting(t, ts)
	body, err := signer.Expand([]byte(stdBody), now, nil)
	if err != nil {
		t.Fatal(err)
	}
	req, err := signer.Sign(tenant(t, ts, "ed"), "standard", body, signer.Options{Now: now, MessageID: "msg_v1a"})
	if err != nil {
		t.Fatal(err)
	}
	if sig := req.Header.Get("Webhook-Signature"); !strings.HasPrefix(sig, "v1a,") || strings.Contains(sig, " ") {
		t.Fatalf("webhook-signature %q, want one v1a entry", sig)
	}
	for _, tn := range []string{"ed", "pk"} {
		req.Tenant = tn
		hr, err := req.HTTPRequest(context.Background(), "http://receiver.test")
		if err != nil {
			t.Fatal(err)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, hr)
		if got := rec.take(); w.Code != http.StatusOK || len(got) != 1 || got[0].Key != "standard#"+tn+"#msg_v1a" {
			t.Errorf("tenant %s: %d %q, claimed %+v; want 200 and standard#%s#msg_v1a", tn, w.Code, w.Body, got, tn)
		}
	}
	if _, err := signer.Sign(tenant(t, ts, "pk"), "standard", body, signer.Options{Now: now}); !errors.Is(err, signer.ErrNotConfigured) || !strings.Contains(err.Error(), "cannot sign") {
		t.Errorf("sign with public keys only: %v, want ErrNotConfigured saying they cannot sign", err)
	}
}

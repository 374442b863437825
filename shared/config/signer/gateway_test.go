package signer

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"testing"
)

// TestGatewayEvent: the event carries the route, the path parameters, the
// lower-case headers, the query and the exact body.
func TestGatewayEvent(t *testing.T) {
	r := &Request{Method: http.MethodPost, Provider: "wecom", Tenant: "demo", Query: url.Values{"nonce": {"n1"}},
		Header: http.Header{"X-Line-Signature": {"sig"}}, Body: []byte("<xml/>")}
	ev := r.GatewayEvent("req-1", "ua")
	body, err := base64.StdEncoding.DecodeString(ev.Body)
	if err != nil || string(body) != "<xml/>" || !ev.IsBase64Encoded {
		t.Errorf("body %q (%v), base64 %v", body, err, ev.IsBase64Encoded)
	}
	if ev.RouteKey != "POST /webhooks/{provider}/{tenant}" || ev.RawPath != "/webhooks/wecom/demo" || ev.RawQueryString != "nonce=n1" {
		t.Errorf("route %q, path %q, query %q", ev.RouteKey, ev.RawPath, ev.RawQueryString)
	}
	if ev.Headers["x-line-signature"] != "sig" || ev.PathParameters["tenant"] != "demo" || ev.QueryStringParameters["nonce"] != "n1" {
		t.Errorf("headers %v, path parameters %v, query %v", ev.Headers, ev.PathParameters, ev.QueryStringParameters)
	}
	if ev.RequestContext.RequestID != "req-1" || ev.RequestContext.HTTP.UserAgent != "ua" || ev.RequestContext.HTTP.Method != "POST" {
		t.Errorf("request context %+v", ev.RequestContext)
	}
}

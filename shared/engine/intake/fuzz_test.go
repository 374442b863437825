package intake

import (
	"context"
	"encoding/base64"
	"testing"

	"github.com/aws/aws-lambda-go/events"
)

// FuzzHandleAPIGateway feeds arbitrary API Gateway requests (path, query,
// header, body, base64 flag) through the adapter and the whole receiver with
// in-memory store and queue: nothing may panic, every answer is an HTTP
// status, and only a 200 may have enqueued anything.
func FuzzHandleAPIGateway(f *testing.F) {
	body := lineBody("E1", "E2")
	f.Add("/webhooks/line/acme", "", lineSign(body), string(body), false, "POST")
	f.Add("/webhooks/line/acme", "", lineSign(body), base64.StdEncoding.EncodeToString(body), true, "POST")
	f.Add("/prod/webhooks/wecom/acme", "msg_signature=a&timestamp=1&nonce=2&echostr=a%2Bb%3D", "", "", false, "GET")
	f.Add("/webhooks/line/acme", "%zz", "", "{", false, "PUT")
	f.Add("/webhooks//", "", "", "", true, "POST")
	f.Fuzz(func(t *testing.T, path, rawQuery, sig, b string, isB64 bool, method string) {
		if len(b) > 64<<10 {
			return // the 413 path has its own test; large inputs only slow the fuzzer
		}
		st, q := newMemStore(), &memQueue{}
		h := newTestHandler(t, st, q)
		e := events.APIGatewayV2HTTPRequest{
			RawPath: path, RawQueryString: rawQuery, Body: b, IsBase64Encoded: isB64,
			Headers: map[string]string{"x-line-signature": sig},
		}
		e.RequestContext.HTTP.Method = method
		resp, err := h.HandleAPIGateway(context.Background(), e)
		if err != nil {
			t.Fatalf("adapter returned an error: %v", err)
		}
		if resp.StatusCode < 200 || resp.StatusCode > 599 {
			t.Fatalf("status %d", resp.StatusCode)
		}
		if resp.StatusCode != 200 && (q.count() != 0 || st.len() != 0) {
			t.Fatalf("status %d but %d messages, %d records", resp.StatusCode, q.count(), st.len())
		}
	})
}

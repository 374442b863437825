package intake

import (
	"context"
	"encoding/base64"
	"net/http"
	"strconv"
	"testing"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/config/tenants"
	"github.com/hookwall/hookwall/shared/protocol/provider/standard"
)

// Every form of a Standard Webhooks secret that the reference libraries
// accept works from the tenants document, end to end through the receiver.
func TestStandardSecretFormsFromTheTenantsDocument(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef") // 32 bytes
	b64 := base64.StdEncoding.EncodeToString(key)
	raw := base64.RawStdEncoding.EncodeToString(key)
	forms := map[string]string{
		"whsec_ and padding":        `"secrets":["whsec_` + b64 + `"]`,
		"no prefix":                 `"secrets":["` + b64 + `"]`,
		"no padding":                `"secrets":["whsec_` + raw + `"]`,
		"no prefix, no padding":     `"secrets":["` + raw + `"]`,
		"whitespace inside":         `"secrets":["whsec_` + b64[:10] + ` ` + b64[10:] + `\n"]`,
		"raw key":                   `"rawSecrets":["` + string(key) + `"]`,
		"rotation, second one used": `"secrets":["whsec_` + base64.StdEncoding.EncodeToString([]byte("old-key-old-key")) + `","` + b64 + `"]`,
	}
	for name, field := range forms {
		t.Run(name, func(t *testing.T) {
			tenants, err := tenants.Parse([]byte(`{"tenants":{"acme":{"standard":{` + field + `}}}}`))
			if err != nil {
				t.Fatalf("tenants document refused: %v", err)
			}
			parsers, err := BuildParsers(tenants, ParserOptions{})
			if err != nil {
				t.Fatal(err)
			}
			st, q := newMemStore(), &memQueue{}
			h, err := New(Config{Parsers: parsers, Store: st, Queue: q, Now: st.now})
			if err != nil {
				t.Fatal(err)
			}
			body := []byte(`{"type":"invoice.paid","data":{"id":"in_1"}}`)
			ts := st.now().Unix()
			sig, err := standard.Sign("whsec_"+b64, "msg_1", ts, body)
			if err != nil {
				t.Fatal(err)
			}
			hdr := http.Header{}
			hdr.Set("webhook-id", "msg_1")
			hdr.Set("webhook-timestamp", strconv.FormatInt(ts, 10))
			hdr.Set("webhook-signature", sig)
			r := h.Receive(context.Background(), &webhook.Request{Method: http.MethodPost, Provider: standard.Name,
				Tenant: "acme", Header: hdr, Body: body, Now: st.now()}, Meta{})
			if r.Status != 200 || q.count() != 1 {
				t.Fatalf("status %d, messages %d; want 200 and 1", r.Status, q.count())
			}
		})
	}
	for _, bad := range []string{`"secrets":["whsec_!!!"]`, `"secrets":["` + base64.URLEncoding.EncodeToString([]byte{0xfb, 0xff}) + `"]`, `"secrets":[]`} {
		if _, err := tenants.Parse([]byte(`{"tenants":{"acme":{"standard":{` + bad + `}}}}`)); err == nil {
			t.Errorf("tenants document with %s accepted", bad)
		}
	}
}

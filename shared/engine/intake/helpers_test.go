package intake

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/protocol/provider/line"
)

const testSecret = "4ff9d63e71e500b545dff84ca23787f3"

// testEventMillis is the timestamp of the events lineBody makes: recent, so
// that they are inside the accepted event age, and fixed for the test run,
// so that the same ids give the same payload.
var testEventMillis = time.Now().Add(-time.Minute).UnixMilli()

// lineBody returns a LINE webhook body with one text message event per id.
func lineBody(ids ...string) []byte {
	evs := make([]string, len(ids))
	for i, id := range ids {
		evs[i] = fmt.Sprintf(`{"type":"message","message":{"type":"text","id":"4121819528157%05d","text":"hello %s"},`+
			`"webhookEventId":%q,"deliveryContext":{"isRedelivery":false},"timestamp":%d,`+
			`"source":{"type":"user","userId":"U1f31c2a4c885ab0273b18b8b6a799b72"},"replyToken":"fe435e8eee6cf9a3513f95ee23341731","mode":"active"}`,
			i, id, id, testEventMillis)
	}
	return []byte(`{"destination":"Ub8b2d8e5add3e2eaff4ad4451caab599","events":[` + strings.Join(evs, ",") + `]}`)
}

func lineSign(body []byte) string {
	m := hmac.New(sha256.New, []byte(testSecret))
	m.Write(body)
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

func lineRequest(body []byte, sig string) *webhook.Request {
	h := http.Header{}
	h.Set("X-Line-Signature", sig)
	return &webhook.Request{Method: http.MethodPost, Provider: line.Name, Tenant: "acme", Header: h, Body: body}
}

func testParsers(t testing.TB) *Parsers {
	t.Helper()
	lp, err := line.New(line.Config{ChannelSecret: testSecret})
	if err != nil {
		t.Fatal(err)
	}
	p := &Parsers{}
	p.Set(line.Name, "acme", lp)
	return p
}

func newTestHandler(t testing.TB, st Store, q Queue, mut ...func(*Config)) *Handler {
	t.Helper()
	cfg := Config{Parsers: testParsers(t), Store: st, Queue: q}
	if ms, ok := st.(*memStore); ok {
		cfg.Now = ms.now // one clock for the handler and its store
	}
	for _, m := range mut {
		m(&cfg)
	}
	h, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

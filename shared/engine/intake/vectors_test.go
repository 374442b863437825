package intake

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/base/webhook/webhooktest"
	"github.com/hookwall/hookwall/shared/config/tenants"
	"github.com/hookwall/hookwall/shared/protocol/provider/line"
	"github.com/hookwall/hookwall/shared/protocol/provider/standard"
	"github.com/hookwall/hookwall/shared/protocol/provider/wechat"
	"github.com/hookwall/hookwall/shared/protocol/provider/wecom"
)

// The shared vectors, end to end over HTTP through the real route, tenants
// document and parsers (store and queue in memory): what a platform sees.

type vectorCase struct {
	Name            string            `json:"name"`
	Valid           bool              `json:"valid"`
	LenientOK       bool              `json:"lenientOk"`
	DecryptOnly     bool              `json:"decryptOnly"`
	Method          string            `json:"method"`
	RawQuery        string            `json:"rawQuery"`
	Query           map[string]string `json:"query"`
	Headers         map[string]string `json:"headers"`
	Body            string            `json:"body"`
	Now             int64             `json:"now"`
	SignatureHeader string            `json:"signatureHeader"`
	ExpectedEcho    *string           `json:"expectedEcho"`
	ExpectedIDs     []string          `json:"expectedEventIds"`
	// Secrets, whichever the provider has.
	ChannelSecret  string `json:"channelSecret"`
	Token          string `json:"token"`
	EncodingAESKey string `json:"encodingAESKey"`
	CorpID         string `json:"corpId"`
	AppID          string `json:"appId"`
	Secret         string `json:"secret"`
}

func loadVectorFile(t *testing.T, file string) []vectorCase {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(webhooktest.VectorsDir(t), file))
	if err != nil {
		t.Fatalf("read vectors (set HOOKWALL_VECTORS_DIR to ../shared/vectors): %v", err)
	}
	var f struct{ Cases []vectorCase }
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if len(f.Cases) == 0 {
		t.Fatalf("%s: no cases", file)
	}
	return f.Cases
}

// tenantDoc is the tenants document holding just this case's secrets.
func (c *vectorCase) tenantDoc(provider string) []byte {
	var p any
	switch provider {
	case line.Name:
		p = map[string]string{"channelSecret": c.ChannelSecret}
	case wecom.Name:
		p = map[string]string{"token": c.Token, "encodingAESKey": c.EncodingAESKey, "corpId": c.CorpID}
	case wechat.Name:
		p = map[string]string{"token": c.Token, "appId": c.AppID, "encodingAESKey": c.EncodingAESKey}
	case standard.Name:
		p = map[string][]string{"secrets": {c.Secret}}
	}
	doc, _ := json.Marshal(map[string]any{"tenants": map[string]any{"t1": map[string]any{provider: p}}})
	return doc
}

// clock is the case's own time: vectors are old, and the window is real.
func (c *vectorCase) clock() time.Time {
	if c.Now != 0 {
		return time.Unix(c.Now, 0)
	}
	if ts, err := strconv.ParseInt(c.Query["timestamp"], 10, 64); err == nil {
		return time.Unix(ts, 0)
	}
	return time.Now()
}

func TestVectorsOverHTTP(t *testing.T) {
	for _, file := range []struct{ name, provider string }{
		{"line.json", line.Name}, {"wecom.json", wecom.Name},
		{"wechat.json", wechat.Name}, {"standardwebhooks.json", standard.Name},
	} {
		for _, c := range loadVectorFile(t, file.name) {
			if c.DecryptOnly {
				continue // not a callback message; covered by the wechat package
			}
			t.Run(file.provider+"/"+c.Name, func(t *testing.T) { c.run(t, file.provider) })
		}
	}
}

func (c *vectorCase) run(t *testing.T, provider string) {
	tenants, err := tenants.Parse(c.tenantDoc(provider))
	if err != nil {
		t.Fatalf("tenants: %v", err)
	}
	parsers, err := BuildParsers(tenants, ParserOptions{})
	if err != nil {
		t.Fatal(err)
	}
	st, q := newMemStore(), &memQueue{}
	now := c.clock()
	// The vectors' events are years old: a dedup window that long keeps
	// them inside the accepted event age (its own tests are elsewhere).
	h, err := New(Config{Parsers: parsers, Store: st, Queue: q, Now: func() time.Time { return now },
		DedupWindow: 20 * 365 * 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	method := c.Method
	if method == "" {
		method = http.MethodPost
	}
	url := fmt.Sprintf("%s/webhooks/%s/t1", srv.URL, provider)
	if c.RawQuery != "" {
		url += "?" + c.RawQuery
	}
	req, _ := http.NewRequest(method, url, bytes.NewReader([]byte(c.Body)))
	for k, v := range c.Headers {
		req.Header.Set(k, v)
	}
	if provider == line.Name {
		req.Header.Set("x-line-signature", c.SignatureHeader)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if c.LenientOK && (resp.StatusCode == 200 || resp.StatusCode == 401) {
		return
	}
	if !c.Valid {
		if resp.StatusCode != 401 {
			t.Fatalf("status = %d, want 401", resp.StatusCode)
		}
		if st.len() != 0 || q.count() != 0 {
			t.Fatalf("a rejected delivery stored %d records, %d messages", st.len(), q.count())
		}
		return
	}
	if resp.StatusCode != 200 {
		t.Fatalf("status = %d (%s), want 200", resp.StatusCode, body)
	}
	switch {
	case c.ExpectedEcho != nil:
		if string(body) != *c.ExpectedEcho {
			t.Fatalf("echo = %q, want %q", body, *c.ExpectedEcho)
		}
		if st.len() != 0 {
			t.Fatal("URL verification stored a record")
		}
	case provider == wechat.Name && string(body) != "success":
		t.Fatalf("WeChat reply = %q, want success", body)
	case provider == wecom.Name && len(body) != 0:
		t.Fatalf("WeCom reply = %q, want empty", body)
	}
	wantEvents := 1
	if provider == line.Name {
		wantEvents = len(c.ExpectedIDs)
	}
	if c.ExpectedEcho != nil {
		wantEvents = 0
	}
	if q.count() != wantEvents || st.len() != wantEvents {
		t.Fatalf("messages %d, records %d; want %d", q.count(), st.len(), wantEvents)
	}
	for i, id := range c.ExpectedIDs {
		if want := webhook.Key(provider, "t1", id); q.sent[i].Key != want {
			t.Errorf("event %d key = %s, want %s", i, q.sent[i].Key, want)
		}
	}
}

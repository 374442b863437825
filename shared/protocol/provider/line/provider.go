package line

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/protocol/provider"
)

// Name is LINE's route name: /webhooks/line/{tenant}.
const Name = "line"

// Provider returns the provider (its line in shared/protocol/providers).
func Provider() *provider.Provider {
	return provider.New[Settings](provider.Provider{
		Name:         Name,
		Label:        "LINE",
		Docs:         "https://developers.line.biz/en/docs/messaging-api/receiving-messages/",
		Signature:    "X-Line-Signature over the JSON body",
		DedupKey:     "each event's webhookEventId (one delivery may carry several events)",
		Reply:        okReply(),
		AnswerWithin: 2 * time.Second,
		Demo: provider.Demo{
			Settings:   map[string]string{"channelSecret": "5e1f0c1d6a2b4e9f8a7b6c5d4e3f2a10"},
			ID:         demoID,
			Body:       demoBody,
			MultiEvent: true,
			// LINE redelivers (isRedelivery true) with growing gaps.
			Retry: provider.Retry{Policy: "line redelivery", Waits: []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second}, Marked: true},
		},
	})
}

// Settings is a tenant's LINE channel: its "line" section of the tenants
// document.
type Settings struct {
	// ChannelSecret is the channel secret from the LINE Developers console.
	ChannelSecret provider.Secret `json:"channelSecret"`
}

// Validate reports a missing channel secret.
func (s *Settings) Validate() []provider.Problem {
	var ps provider.Problems
	ps.Require("channelSecret", s.ChannelSecret.Reveal())
	return ps
}

// Parser returns the channel's [Parser] (LINE signs no timestamp, so
// opts.Tolerance does not apply).
func (s *Settings) Parser(provider.ParserOptions) (webhook.Parser, error) {
	return New(Config{ChannelSecret: s.ChannelSecret.Reveal()})
}

// Sign returns LINE's POST of body (a JSON object with "events"), with its
// X-Line-Signature.
func (s *Settings) Sign(body []byte, _ provider.SignOptions) (*provider.Request, error) {
	if !json.Valid(body) {
		return nil, fmt.Errorf("a LINE body is a JSON object with \"events\": %w", provider.ErrBadBody)
	}
	mac := hmac.New(sha256.New, []byte(s.ChannelSecret.Reveal()))
	mac.Write(body)
	r := provider.NewRequest(http.MethodPost)
	r.Header.Set("Content-Type", "application/json; charset=utf-8")
	r.Header.Set(SignatureHeader, base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	r.Body = body
	return r, nil
}

// demoID returns a webhookEventId-like id: 26 upper-case characters.
func demoID(tag string, n uint64) string {
	return fmt.Sprintf("01%.14s%010d", strings.ToUpper(tag)+"00000000000000", n%1e10)
}

// demoBody returns a delivery of one text message event per id.
func demoBody(ids []string, at time.Time, retry bool) []byte {
	var b strings.Builder
	b.WriteString(`{"destination":"U00000000000000000000000000000001","events":[`)
	for j, id := range ids {
		if j > 0 {
			b.WriteByte(',')
		}
		q, _ := json.Marshal(id)
		fmt.Fprintf(&b, `{"type":"message","message":{"type":"text","id":"5348970%011d","quoteToken":"q1","text":"Hello from Hookwall %d/%d"},`+
			`"webhookEventId":%s,"deliveryContext":{"isRedelivery":%t},"timestamp":%s,`+
			`"source":{"type":"user","userId":"U4af4980629aaaaaaaaaaaaaaaaaaaaaaa"},"replyToken":"b60d432864f44d079f6d8efe86cf404b","mode":"active"}`,
			j+1, j+1, len(ids), q, retry, strconv.FormatInt(at.UnixMilli(), 10))
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}

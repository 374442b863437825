package slack

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/protocol/provider"
)

// Name is Slack's route name: /webhooks/slack/{tenant}.
const Name = "slack"

// Provider returns the provider (its line in shared/protocol/providers).
func Provider() *provider.Provider {
	return provider.New[Settings](provider.Provider{
		Name:         Name,
		Label:        "Slack",
		Docs:         "https://api.slack.com/apis/events-api",
		Signature:    Version + " HMAC-SHA256 of \"v0:<timestamp>:<JSON body>\" (X-Slack-Signature, X-Slack-Request-Timestamp)",
		DedupKey:     "the envelope's event_id (the same on every retry)",
		Reply:        okReply(),
		AnswerWithin: 3 * time.Second,
		Demo: provider.Demo{
			Settings: map[string]string{"signingSecret": "HookwallLocalSlackSigningSecret0"},
			ID:       func(tag string, n uint64) string { return "Ev" + strings.ToUpper(tag) + strconv.FormatUint(n, 10) },
			Body:     demoBody,
			// Slack retries nearly at once, after a minute and after five
			// minutes (compressed tenfold), marking X-Slack-Retry-Num.
			Retry: provider.Retry{Policy: "slack 3 retries (0s, 1m, 5m; compressed)",
				Waits: []time.Duration{500 * time.Millisecond, 6 * time.Second, 30 * time.Second}, Marked: true},
		},
	})
}

// Settings is a tenant's Slack app: its "slack" section of the tenants
// document.
type Settings struct {
	// SigningSecret is the app's signing secret.
	SigningSecret provider.Secret `json:"signingSecret"`
}

// Validate reports a missing signing secret.
func (s *Settings) Validate() []provider.Problem {
	var ps provider.Problems
	ps.Require("signingSecret", s.SigningSecret.Reveal())
	return ps
}

// Parser returns the app's [Parser]; opts.Tolerance bounds the timestamp
// window (zero or negative: [DefaultTolerance]).
func (s *Settings) Parser(opts provider.ParserOptions) (webhook.Parser, error) {
	return New(Config{SigningSecret: s.SigningSecret.Reveal(), Tolerance: opts.Tolerance})
}

// Sign returns Slack's POST of the JSON body, signed at opts.Now; a retry
// (opts.Retry > 0) carries X-Slack-Retry-Num and X-Slack-Retry-Reason
// http_timeout.
func (s *Settings) Sign(body []byte, opts provider.SignOptions) (*provider.Request, error) {
	if !json.Valid(body) {
		return nil, fmt.Errorf("a Slack body is the Events API JSON: %w", provider.ErrBadBody)
	}
	ts := strconv.FormatInt(opts.Now.Unix(), 10)
	r := provider.NewRequest(http.MethodPost)
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set(TimestampHeader, ts)
	r.Header.Set(SignatureHeader, Signature(s.SigningSecret.Reveal(), ts, body))
	if opts.Retry > 0 {
		r.Header.Set(RetryNumHeader, strconv.Itoa(opts.Retry))
		r.Header.Set(RetryReasonHeader, "http_timeout")
	}
	r.Body = body
	return r, nil
}

// Handshake returns the url_verification POST Slack sends when the Request
// URL is set, carrying challenge.
func (s *Settings) Handshake(challenge string, opts provider.SignOptions) (*provider.Request, error) {
	return provider.SignJSON(s, map[string]string{"type": TypeURLVerification, "challenge": challenge}, opts)
}

// HandshakeReply returns challenge itself as plain text
// ([webhook.EchoReply]), one of the answers Slack accepts.
func (s *Settings) HandshakeReply(challenge string) webhook.Reply {
	return webhook.EchoReply(challenge)
}

// demoBody returns an app_mention event_callback with event_id ids[0],
// shaped as Slack's example (https://api.slack.com/events/app_mention).
func demoBody(ids []string, at time.Time, _ bool) []byte {
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	ts := strconv.FormatInt(at.Unix(), 10) + ".000016"
	return []byte(`{"token":"ZZZZZZWSxiZZZ2yIvs3peJ","team_id":"T061EG9R6","api_app_id":"A0MDYCDME",` +
		`"event":{"type":"app_mention","user":"U061F7AUR","text":"<@U0LAN0Z89> Hello from Hookwall","ts":` + q(ts) +
		`,"channel":"C0LAN2Q65","event_ts":` + q(ts) + `},"type":"event_callback","event_id":` + q(ids[0]) +
		`,"event_time":` + strconv.FormatInt(at.Unix(), 10) + `,"authed_users":["U0LAN0Z89"]}`)
}

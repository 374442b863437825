// Package slack verifies and parses Slack Events API deliveries
// (https://api.slack.com/apis/events-api) and registers the "slack"
// provider: /webhooks/slack/{tenant}.
//
// A delivery is a POST of a JSON body signed with the app's signing secret
// (https://api.slack.com/authentication/verifying-requests-from-slack):
// X-Slack-Request-Timestamp holds the unix time of the request and
// X-Slack-Signature is "v0=" followed by the hex HMAC-SHA256, under the
// signing secret, of "v0:" + timestamp + ":" + the exact body. The
// signature is checked first (in constant time), then the timestamp, which
// must be within five minutes of now (the window Slack documents against
// replays; [DefaultTolerance]).
//
// The body's "type" says what it is:
//
//   - "event_callback": one event (https://api.slack.com/types/event). Its
//     dedup key is the envelope's event_id, the same on every retry; its
//     Type is the inner event's type ("app_mention", "message", ...); it
//     happened at event_time. What is stored and forwarded is the body
//     without its legacy verification token (the top-level token, a
//     tenant secret).
//   - "url_verification": the handshake Slack sends when the Request URL is
//     set (https://api.slack.com/events/url_verification). It is signed
//     like any delivery and answered 200 with the challenge as plain text;
//     nothing is stored.
//   - "app_rate_limited": Slack's notice that it drops the app's events for
//     a minute (https://api.slack.com/apis/events-api#rate-limiting). It
//     carries no event: answered 200, nothing stored.
//
// Any other type is refused as malformed (400).
//
// Slack waits 3 seconds for the answer. Without a 2xx by then (or on an
// error) it retries up to three times, nearly at once, after a minute and
// after five minutes, with the same body and event_id, marked by
// X-Slack-Retry-Num (1 to 3) and X-Slack-Retry-Reason ("http_timeout",
// "http_error", ...). Those headers are not signed, so they decide
// nothing: a retry of a claimed event is recognised by its event_id, a
// duplicate the receiver answers 200 without processing it again. [Retry]
// reads them for logs and tests.
//
// [Parser] implements [webhook.Parser]; [Settings] is a tenant's "slack"
// section of the tenants document: {"signingSecret": "…"}; [AppMention]
// and [Message] name the typed payloads processor handlers register on.
package slack

package slack

import "github.com/hookwall/hookwall/shared/base/webhook"

// Typed event types for processor handlers. Each decodes [webhook.Event.JSON],
// the whole event_callback body, into an [Envelope] of its inner event.
// Field names follow Slack's (https://api.slack.com/types/event,
// https://api.slack.com/events/app_mention, https://api.slack.com/events/message).
var (
	// AppMention is an app_mention event: a message mentioning the app.
	AppMention = webhook.NewType[Envelope[AppMentionEvent]](Name, "app_mention")
	// Message is a message event of a channel, group or DM the app is in.
	Message = webhook.NewType[Envelope[MessageEvent]](Name, "message")
)

// Envelope is an event_callback body: where the event happened, its id and
// time, and the inner event E.
type Envelope[E any] struct {
	// TeamID is the workspace; APIAppID the app the event is for.
	TeamID   string `json:"team_id"`
	APIAppID string `json:"api_app_id"`
	// EventID identifies the event across retries: its dedup key.
	EventID string `json:"event_id"`
	// EventTime is when the event happened, in unix seconds.
	EventTime int64 `json:"event_time"`
	// Event is the inner event.
	Event E `json:"event"`
}

// AppMentionEvent is the inner event of [AppMention].
type AppMentionEvent struct {
	Type    string `json:"type"`
	User    string `json:"user"`
	Text    string `json:"text"`
	TS      string `json:"ts"`
	Channel string `json:"channel"`
	EventTS string `json:"event_ts"`
	// ThreadTS is set for a mention inside a thread.
	ThreadTS string `json:"thread_ts,omitempty"`
}

// MessageEvent is the inner event of [Message]. Subtype is set for edits,
// deletions, bot messages and the like.
type MessageEvent struct {
	Type        string `json:"type"`
	Subtype     string `json:"subtype,omitempty"`
	User        string `json:"user,omitempty"`
	BotID       string `json:"bot_id,omitempty"`
	Text        string `json:"text"`
	TS          string `json:"ts"`
	Channel     string `json:"channel"`
	ChannelType string `json:"channel_type,omitempty"`
	EventTS     string `json:"event_ts"`
	ThreadTS    string `json:"thread_ts,omitempty"`
}

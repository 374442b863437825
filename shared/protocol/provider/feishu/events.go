package feishu

import "github.com/hookwall/hookwall/shared/base/webhook"

// Typed event types for processor handlers. Each decodes [webhook.Event.JSON],
// the schema 2.0 event without its token, into an [Event] of its payload.
// Field names follow the event reference
// (https://open.feishu.cn/document/uAjLw4CM/ukTMukTMukTM/reference/im-v1/message/events/receive)
// and the SDK's model (github.com/larksuite/oapi-sdk-go service/im/v1).
var (
	// MessageReceived is im.message.receive_v1: a user sent the bot a
	// message, in a one-to-one chat or mentioning it in a group.
	MessageReceived = webhook.NewType[Event[MessageReceive]](Name, "im.message.receive_v1")
)

// Event is a schema 2.0 event whose event member decodes into T.
type Event[T any] struct {
	// Schema is "2.0".
	Schema string `json:"schema"`
	// Header identifies the event.
	Header Header `json:"header"`
	// Event is the event's own content.
	Event T `json:"event"`
}

// Header is the header of a schema 2.0 event. Its token, the tenant's
// Verification Token, is removed before the event is stored.
type Header struct {
	// EventID is the event's unique id, the same in every retry: its dedup key.
	EventID string `json:"event_id"`
	// EventType is the event type ("im.message.receive_v1", ...).
	EventType string `json:"event_type"`
	// CreateTime is when the event was sent, in milliseconds since the
	// epoch, as a decimal string.
	CreateTime string `json:"create_time"`
	// AppID is the app the event is for ("cli_...").
	AppID string `json:"app_id"`
	// TenantKey identifies the Feishu tenant (organisation) of the event.
	TenantKey string `json:"tenant_key"`
}

// UserID is a user's ids; which are set depends on the app's permissions.
type UserID struct {
	UnionID string `json:"union_id,omitempty"`
	UserID  string `json:"user_id,omitempty"`
	OpenID  string `json:"open_id,omitempty"`
}

// MessageReceive is the event member of [MessageReceived].
type MessageReceive struct {
	// Sender is who sent the message.
	Sender Sender `json:"sender"`
	// Message is the message.
	Message Message `json:"message"`
}

// Sender is the sender of a received message.
type Sender struct {
	SenderID UserID `json:"sender_id"`
	// SenderType is "user".
	SenderType string `json:"sender_type"`
	TenantKey  string `json:"tenant_key"`
}

// Message is a received message.
type Message struct {
	// MessageID is the message's id ("om_..."); RootID and ParentID are set
	// on replies.
	MessageID string `json:"message_id"`
	RootID    string `json:"root_id,omitempty"`
	ParentID  string `json:"parent_id,omitempty"`
	// CreateTime and UpdateTime are in milliseconds since the epoch, as
	// decimal strings.
	CreateTime string `json:"create_time"`
	UpdateTime string `json:"update_time,omitempty"`
	// ChatID is the chat ("oc_..."); ThreadID the topic, in topic groups.
	ChatID   string `json:"chat_id"`
	ThreadID string `json:"thread_id,omitempty"`
	// ChatType is "p2p", "group" or "topic_group".
	ChatType string `json:"chat_type"`
	// MessageType is "text", "post", "image", "file", "interactive", ...
	MessageType string `json:"message_type"`
	// Content is the message content, itself a JSON document whose shape
	// depends on MessageType ({"text":"..."} for text).
	Content string `json:"content"`
	// Mentions are the users the message mentions.
	Mentions []Mention `json:"mentions,omitempty"`
}

// Mention is a user mentioned in a message.
type Mention struct {
	// Key is the placeholder in Content ("@_user_1").
	Key       string `json:"key"`
	ID        UserID `json:"id"`
	Name      string `json:"name"`
	TenantKey string `json:"tenant_key,omitempty"`
}

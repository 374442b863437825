package line

import "github.com/hookwall/hookwall/shared/base/webhook"

// Typed event types for processor handlers. Each decodes [webhook.Event.JSON],
// the LINE event object, into its payload struct. Field names follow the LINE
// webhook schema (https://github.com/line/line-openapi/blob/main/webhook.yml,
// https://developers.line.biz/en/reference/messaging-api/#webhook-event-objects).
var (
	// Message is a message event: a user sent text, an image, a sticker, ...
	Message = webhook.NewType[MessageEvent](Name, "message")
	// Follow is a follow event: the bot was added as a friend or unblocked.
	Follow = webhook.NewType[FollowEvent](Name, "follow")
	// Unfollow is an unfollow event: the bot was blocked. It has no reply token.
	Unfollow = webhook.NewType[UnfollowEvent](Name, "unfollow")
	// Postback is a postback event: the user tapped a postback action.
	Postback = webhook.NewType[PostbackEvent](Name, "postback")
)

// Source is where an event came from: a user, a group chat or a multi-person
// chat (room).
type Source struct {
	// Type is "user", "group" or "room".
	Type string `json:"type"`
	// UserID is the user's ID. In groups and rooms it is present only on
	// message events.
	UserID string `json:"userId,omitempty"`
	// GroupID is set when Type is "group".
	GroupID string `json:"groupId,omitempty"`
	// RoomID is set when Type is "room".
	RoomID string `json:"roomId,omitempty"`
}

// DeliveryContext says whether an event is a redelivery.
type DeliveryContext struct {
	// IsRedelivery is true when LINE resends an event the bot failed to accept.
	IsRedelivery bool `json:"isRedelivery"`
}

// Event is what every LINE webhook event carries (the schema's Event); the
// payload types embed it.
type Event struct {
	// Type is the event type: "message", "follow", "unfollow", "postback", ...
	Type string `json:"type"`
	// Timestamp is when the event happened, in milliseconds since the epoch.
	Timestamp int64 `json:"timestamp"`
	// Mode is "active", or "standby" when another channel holds the chat.
	Mode string `json:"mode"`
	// WebhookEventID is the event's unique ID (a ULID), its dedup key.
	WebhookEventID string `json:"webhookEventId"`
	// DeliveryContext says whether this is a redelivery.
	DeliveryContext DeliveryContext `json:"deliveryContext"`
	// Source is the chat the event came from: for a message the chat it
	// was sent in, for a follow or an unfollow the user.
	Source Source `json:"source"`
}

// MessageEvent is the payload of [Message].
type MessageEvent struct {
	Event
	// ReplyToken answers the event with the reply API, once and briefly.
	ReplyToken string `json:"replyToken"`
	// Message is the message itself.
	Message MessageContent `json:"message"`
}

// MessageContent is the message of a [MessageEvent]. Which fields are set
// depends on Type.
type MessageContent struct {
	// ID is the message ID, a decimal string beyond float64 precision.
	ID string `json:"id"`
	// Type is "text", "image", "video", "audio", "file", "location" or "sticker".
	Type string `json:"type"`
	// Text is the text of a text message.
	Text string `json:"text,omitempty"`
	// QuoteToken lets a reply quote this message.
	QuoteToken string `json:"quoteToken,omitempty"`
	// QuotedMessageID is the ID of the message this one quotes, if any.
	QuotedMessageID string `json:"quotedMessageId,omitempty"`
	// FileName and FileSize describe a file message.
	FileName string `json:"fileName,omitempty"`
	FileSize int64  `json:"fileSize,omitempty"`
	// Duration is the length of a video or audio message in milliseconds.
	Duration int64 `json:"duration,omitempty"`
	// Title, Address, Latitude and Longitude describe a location message.
	Title     string  `json:"title,omitempty"`
	Address   string  `json:"address,omitempty"`
	Latitude  float64 `json:"latitude,omitempty"`
	Longitude float64 `json:"longitude,omitempty"`
	// PackageID and StickerID identify a sticker.
	PackageID string `json:"packageId,omitempty"`
	StickerID string `json:"stickerId,omitempty"`
}

// FollowEvent is the payload of [Follow].
type FollowEvent struct {
	Event
	// ReplyToken answers the event with the reply API.
	ReplyToken string `json:"replyToken"`
	// Follow tells a new friend from an unblock.
	Follow FollowDetail `json:"follow"`
}

// FollowDetail is the follow member of a [FollowEvent].
type FollowDetail struct {
	// IsUnblocked is true if the user unblocked the bot rather than adding it.
	IsUnblocked bool `json:"isUnblocked"`
}

// UnfollowEvent is the payload of [Unfollow]: the event alone (it has no
// reply token).
type UnfollowEvent struct {
	Event
}

// PostbackEvent is the payload of [Postback].
type PostbackEvent struct {
	Event
	// ReplyToken answers the event with the reply API (may be absent).
	ReplyToken string `json:"replyToken,omitempty"`
	// Postback is the action's data.
	Postback PostbackContent `json:"postback"`
}

// PostbackContent is the postback member of a [PostbackEvent].
type PostbackContent struct {
	// Data is the postback action's data string.
	Data string `json:"data"`
	// Params holds the picker's choice ("date", "time" or "datetime") or the
	// rich menu switch result ("newRichMenuAliasId", "status").
	Params map[string]string `json:"params,omitempty"`
}

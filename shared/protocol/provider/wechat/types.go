package wechat

import (
	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/protocol/provider/wxmsg"
)

// Event types. Processor handlers register on them; the payload is the
// event's normalised JSON decoded into the Go type.
var (
	// Text is a text message (MsgType "text").
	Text = webhook.NewType[TextMessage](Name, "text")
	// Subscribe is a follow, possibly through a parametric QR code (Event "subscribe").
	Subscribe = webhook.NewType[SubscribeEvent](Name, "subscribe")
	// Click is a custom-menu click (Event "CLICK").
	Click = webhook.NewType[ClickEvent](Name, "CLICK")
)

// TextMessage is a text message from a user
// (https://developers.weixin.qq.com/doc/offiaccount/Message_Management/Receiving_standard_messages.html).
// MsgID is a 64-bit decimal kept as a string.
type TextMessage struct {
	wxmsg.Header
	Content string `json:"Content"`
	MsgID   string `json:"MsgId"`
}

// SubscribeEvent is a follow. For a scan of a parametric QR code EventKey is
// "qrscene_" + the scene value and Ticket the QR ticket
// (https://developers.weixin.qq.com/doc/offiaccount/Message_Management/Receiving_event_pushes.html).
type SubscribeEvent struct {
	wxmsg.EventHeader
	EventKey string `json:"EventKey"`
	Ticket   string `json:"Ticket"`
}

// ClickEvent is a click on a custom-menu item; EventKey is the item's key.
type ClickEvent struct {
	wxmsg.EventHeader
	EventKey string `json:"EventKey"`
}

package wxmsg

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/protocol/provider/xmljson"
)

// Ack returns the answer to a POST that WeChat and WeCom take as delivered
// (no retry): 200 text/plain with body (WeChat's "success", WeCom's empty
// body). The body's capacity is cut to its length, so that no holder of a
// reply can append into another's.
func Ack(body []byte) webhook.Reply {
	return webhook.Reply{Status: http.StatusOK, ContentType: "text/plain; charset=utf-8", Body: body[:len(body):len(body)]}
}

// Header is what every WeCom and WeChat message and event carries, as the
// normalised JSON of package xmljson has it (every value a string). The
// providers' payload types embed it.
type Header struct {
	// ToUserName is the recipient: the CorpID (WeCom) or the account's
	// original id (WeChat).
	ToUserName string `json:"ToUserName"`
	// FromUserName is the sender: a member's UserID, or "sys" for WeCom's
	// system events (WeCom); a user's OpenID (WeChat).
	FromUserName string `json:"FromUserName"`
	// CreateTime is the unix time in seconds, in decimal.
	CreateTime string `json:"CreateTime"`
	// MsgType is the message type ("text", …), "event" for an event.
	MsgType string `json:"MsgType"`
}

// EventHeader is the [Header] of an event (MsgType "event") with its Event
// type.
type EventHeader struct {
	Header
	// Event is the event type ("subscribe", "change_contact", …).
	Event string `json:"Event"`
}

// Type returns the event type of a callback document: its Event when MsgType
// is "event", else its MsgType. It is empty when the element it names is
// missing or empty.
func Type(doc *xmljson.Doc) string {
	if typ := doc.Get("MsgType"); typ != "event" {
		return typ
	}
	return doc.Get("Event")
}

// NewEvent returns the [webhook.Event] of an authentic callback XML raw, doc
// being its normalisation by package xmljson, with Type typ: Raw is raw, JSON
// is doc.JSON, PayloadHash the lowercase hex SHA-256 of raw and OccurredAt
// the CreateTime (positive unix seconds; the zero Time otherwise), in UTC.
// DedupKey is left empty for the provider, whose key may use PayloadHash.
func NewEvent(raw []byte, doc *xmljson.Doc, typ string) *webhook.Event {
	sum := sha256.Sum256(raw)
	var occurred time.Time
	if sec, err := strconv.ParseInt(doc.Get("CreateTime"), 10, 64); err == nil && sec > 0 {
		occurred = time.Unix(sec, 0).UTC()
	}
	return &webhook.Event{
		Type:        typ,
		OccurredAt:  occurred,
		Raw:         raw,
		JSON:        doc.JSON,
		PayloadHash: hex.EncodeToString(sum[:]),
	}
}

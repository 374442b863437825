package wxmsg

import (
	"fmt"
	"net/http"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/protocol/provider/xmljson"
)

// AnswerWithin is how long WeChat and WeCom wait for the answer to a
// callback: past it they drop the connection and send it again, three times
// in all (https://developer.work.weixin.qq.com/document/path/90930,
// https://developers.weixin.qq.com/doc/offiaccount/Message_Management/Receiving_standard_messages.html).
const AnswerWithin = 5 * time.Second

// RetryPolicy names the family's retries in reports, after the provider's
// name ("wecom 3 retries in 5s").
const RetryPolicy = "3 retries in 5s"

// RetryWaits returns the waits before the family's three retries, in
// order, as the local demos replay them: all within about [AnswerWithin].
func RetryWaits() []time.Duration {
	return []time.Duration{time.Second, 1500 * time.Millisecond, 2 * time.Second}
}

// Rules are what one provider of the family states on top of the callback
// protocol WeChat and WeCom share: a GET is the URL verification, answered
// with its echo; a POST carries one message XML, answered with an [Ack].
// A provider declares its Rules once, as a package variable; they are safe
// for concurrent use.
type Rules struct {
	// Provider is the provider's route name, the prefix of the errors.
	Provider string
	// Type returns the event type of a message ([Type], or a provider's
	// own rule); an empty type refuses the message as malformed.
	Type func(doc *xmljson.Doc) string
	// Key returns the dedup key of a message: doc, and its event ev with
	// every field but DedupKey set. The key must pass [ValidKey].
	Key func(doc *xmljson.Doc, ev *webhook.Event) string
	// Ack is the answer to an accepted POST ([Ack] of the provider's body).
	Ack webhook.Reply
}

// Parse answers req as every callback URL of the family does. A GET is the
// URL verification: verify authenticates it and returns the echo, which is
// the reply. A POST carries one message: open authenticates it and returns
// the message XML, whose [Rules.Event] is the delivery's event, answered
// with r.Ack. The errors of verify and open are returned as they are (they
// carry the provider's prefix); Parse's own wrap [webhook.ErrMalformed] or
// [webhook.ErrMethodNotAllowed].
func (r *Rules) Parse(req *webhook.Request, verify func(*webhook.Request) (string, error), open func(*webhook.Request) ([]byte, error)) (*webhook.Delivery, error) {
	if req == nil {
		return nil, fmt.Errorf("%s: nil request: %w", r.Provider, webhook.ErrMalformed)
	}
	switch req.Method {
	case http.MethodGet:
		echo, err := verify(req)
		if err != nil {
			return nil, err
		}
		return &webhook.Delivery{Verification: true, Reply: webhook.EchoReply(echo)}, nil
	case http.MethodPost:
		plain, err := open(req)
		if err != nil {
			return nil, err
		}
		ev, err := r.Event(plain)
		if err != nil {
			return nil, err
		}
		return &webhook.Delivery{Events: []webhook.Event{*ev}, Reply: r.Ack}, nil
	default:
		return nil, fmt.Errorf("%s: method %.10q: %w", r.Provider, req.Method, webhook.ErrMethodNotAllowed)
	}
}

// Event builds the [webhook.Event] of an authentic message XML: its type
// (r.Type), time, normalised JSON, payload hash ([NewEvent]) and dedup key
// (r.Key). Errors wrap [webhook.ErrMalformed] and never quote the message.
func (r *Rules) Event(plainXML []byte) (*webhook.Event, error) {
	doc, err := xmljson.Convert(plainXML)
	if err != nil {
		return nil, fmt.Errorf("%s: message: %w", r.Provider, err)
	}
	typ := r.Type(doc)
	if typ == "" {
		return nil, fmt.Errorf("%s: message has no event type: %w", r.Provider, webhook.ErrMalformed)
	}
	ev := NewEvent(plainXML, doc, typ)
	ev.DedupKey = r.Key(doc, ev)
	if !ValidKey(ev.DedupKey) { // unreachable with the providers' key rules: a last guard
		return nil, fmt.Errorf("%s: dedup key breaks the key contract: %w", r.Provider, webhook.ErrMalformed)
	}
	return ev, nil
}

package dispatch

import (
	"encoding/json"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
)

func delivery(key, provider, typ string, payload any) Message {
	b, _ := json.Marshal(payload)
	env := webhook.Envelope{Key: key, Provider: provider, Tenant: "t1", Type: typ, ReceivedAt: time.Now().Add(-time.Second), Payload: b}
	body, _ := json.Marshal(env)
	return Message{MessageID: "m-" + key, ReceiptHandle: "rh-" + key, Body: body}
}

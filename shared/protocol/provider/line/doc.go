// Package line verifies and parses LINE Messaging API webhook deliveries.
//
// A delivery is a POST whose X-Line-Signature header carries the Base64 of
// HMAC-SHA256(channel secret, raw body)
// (https://developers.line.biz/en/docs/messaging-api/verify-webhook-signature/,
// https://developers.line.biz/en/docs/messaging-api/receiving-messages/).
// The body is {"destination": ..., "events": [...]}; one POST may carry many
// events, each with its own webhookEventId, which is the dedup key
// (https://github.com/line/line-openapi/blob/main/webhook.yml). A body with an
// empty events array is the console's URL-verification request
// (https://developers.line.biz/en/docs/messaging-api/verify-webhook-url/) and is
// answered 200 without storing anything.
//
// Redelivered events (an opt-in channel setting) keep their webhookEventId and
// set deliveryContext.isRedelivery; the payload hash leaves deliveryContext
// out so that a redelivery hashes like the original.
//
// Limits: once the signature has been verified, a body that is not valid
// UTF-8 (JSON must be, RFC 8259 §8.1), a body nested deeper than [MaxDepth]
// (256), and a webhookEventId longer than [MaxIDBytes] (256 bytes), holding a
// control character or a lone surrogate escape, are rejected with
// [webhook.ErrMalformed] (HTTP 400); an unsigned body is rejected with
// [webhook.ErrBadSignature] whatever it holds. Computing the payload hash
// takes O(n log n) time in the size n of an event, whatever its shape, and
// scratch memory of a small multiple of n.
//
// [Parser] implements [webhook.Parser]; [Message], [Follow], [Unfollow] and
// [Postback] name the typed payloads processor handlers register on.
package line

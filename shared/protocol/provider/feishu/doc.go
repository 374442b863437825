// Package feishu verifies, decrypts and parses Feishu / Lark event
// subscription deliveries ("将事件发送至开发者服务器", the webhook mode) for one
// tenant: one app's Verification Token and, optionally, its Encrypt Key.
//
// Provider documentation (Feishu and Lark serve the same protocol; Lark's
// pages are the English edition):
//   - https://open.feishu.cn/document/ukTMukTMukTM/uYDNxYjL2QTM24iN0EjN/event-subscription-configure-/choose-a-subscription-mode/send-notifications-to-developers-server
//     (Encrypt Key, Verification Token, the url_verification request)
//   - https://open.feishu.cn/document/ukTMukTMukTM/uYDNxYjL2QTM24iN0EjN/event-subscription-configure-/encrypt-key-encryption-configuration-case
//     (接收事件: the signature check, decryption, the token check)
//   - https://open.feishu.cn/document/ukTMukTMukTM/uUTNz4SN1MjL1UzM
//     (事件概述: schema 2.0 and 1.0, the 3-second answer, retries, event_id)
//   - the official SDKs, read for the exact algorithms:
//     github.com/larksuite/oapi-sdk-go event/event.go (EventDecrypt,
//     Signature) and event/dispatcher/dispatcher.go,
//     github.com/larksuite/oapi-sdk-python lark_oapi/event/dispatcher_handler.py,
//     github.com/larksuite/node-sdk dispatcher/request-handle.ts.
//
// # Delivery
//
// Feishu POSTs JSON. Without an Encrypt Key the body is the event itself;
// with one it is {"encrypt": "<base64>"}, where the Base64 decodes to a
// 16-byte IV followed by the AES-256-CBC ciphertext (PKCS#7 padding) of the
// event JSON under the key SHA-256(Encrypt Key) ([Decrypt], [Encrypt]).
//
// An event is schema 2.0, {"schema": "2.0", "header": {"event_id",
// "event_type", "create_time" (ms), "token", "app_id", "tenant_key"},
// "event": {...}}, or, for older subscriptions, schema 1.0, {"uuid", "ts",
// "token", "type": "event_callback", "event": {"type", ...}}. When the
// request URL is saved in the console Feishu first sends
// {"challenge", "token", "type": "url_verification"} (encrypted like an event
// when there is an Encrypt Key) and expects {"challenge": ...} back, in plain
// JSON, within a second.
//
// # Verification
//
// With an Encrypt Key every event carries X-Lark-Request-Timestamp (Unix
// seconds), X-Lark-Request-Nonce and X-Lark-Signature, the lowercase hex
// SHA-256 of timestamp + nonce + Encrypt Key + the exact body ([Signature]).
// It is checked, in constant time, before anything else is done with the
// body; then the timestamp must be within [Config.Tolerance] (default 5
// minutes) of [webhook.Request.Now] ([webhook.ErrStaleTimestamp]). Feishu
// signs each push when it sends it, retries included, so a retry carries a
// fresh timestamp: the window bounds how long a captured request can be
// replayed, and the event_id dedup covers replays inside it. The SDKs set
// no window; five minutes is the receiver's window for every other provider
// and Slack's documented one, ample for clock skew and transit.
//
// The url_verification request is not signed (the documentation's security
// check excludes it, and the SDKs skip the signature for it). An unsigned
// body is therefore accepted only if it is small (at most
// [MaxUnsignedBody] bytes), decrypts under the Encrypt Key and is a
// url_verification with the right token: nothing is stored for it. For an
// unsigned body the padding is checked without an early exit, so that its
// answer and its timing do not tell a valid padding from an invalid one.
//
// Every request, with or without an Encrypt Key, must carry the tenant's
// Verification Token (header.token in schema 2.0, token otherwise),
// compared in constant time. Without an Encrypt Key it is the only
// authentication Feishu offers: such a tenant relies on the token, the
// event_id dedup and the receiver's maximum event age (header.create_time)
// against replays. A body that cannot be authenticated, whatever it holds,
// is [webhook.ErrBadSignature] (HTTP 401); an authentic one that is not a
// well-formed event is [webhook.ErrMalformed] (HTTP 400). A tenant with an
// Encrypt Key refuses plaintext bodies, and one without refuses encrypted
// ones (it cannot read them): both are [webhook.ErrBadSignature].
//
// # Events and replies
//
// Each event delivery yields one [webhook.Event]: DedupKey is header.event_id
// (schema 1.0: "v1:" + uuid), Type header.event_type (1.0: event.type),
// OccurredAt header.create_time (1.0: ts). JSON is the decrypted event in
// canonical form (keys sorted, no insignificant space, numbers as written)
// without its verification token, which is a tenant secret: every member
// named token in any case ("Token", "TOKEN", ...) is removed, at the top
// and in the header, whatever the schema, since the token check matches
// names as encoding/json does; PayloadHash is
// the hex SHA-256 of JSON, so a retry (a new IV, the same event) hashes
// like the original. Raw is the decrypted body as sent.
//
// Feishu expects HTTP 200 within 3 seconds; otherwise it retries after 15 s,
// 5 min, 1 h and 6 h (at most 4 retries, about 7.1 hours), with the same
// event_id. An event is answered 200 {"msg":"success"}, a duplicate the
// same, and the handshake 200 {"challenge":"..."}.
//
// # Registration
//
// The package registers the provider "feishu" with package provider. A
// tenant's section of the tenants document is [Settings]:
// {"verificationToken": "...", "encryptKey": "..."} (encryptKey optional).
// [Settings.Sign] builds what Feishu sends, events and the handshake alike,
// for `hookwall sign`, the local runner and the tests. Settings is a
// [provider.Handshaker]: [Settings.Handshake] builds the url_verification
// (plain, or encrypted with the tenant's Encrypt Key) and
// [Settings.HandshakeReply] states its answer, {"challenge": "..."}.
package feishu

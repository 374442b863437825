// Package signer builds the requests a platform would send to Hookwall's
// receiver route /webhooks/{provider}/{tenant}, signed (and for WeCom and
// WeChat, encrypted) with one tenant's secrets from the tenants document.
// It knows every provider of the registry (package providers): each
// provider's settings sign ([provider.Settings.Sign]). For example (each
// provider's package documents its own):
//
//   - LINE: the JSON body with X-Line-Signature, the Base64 HMAC-SHA256 of the
//     body under the channel secret.
//   - Standard Webhooks: webhook-id, webhook-timestamp and webhook-signature
//     ("v1," + Base64 HMAC-SHA256 of "id.timestamp.body") under the tenant's
//     first secret (or first raw secret).
//   - WeCom: the message XML encrypted for receiveid = CorpID (package
//     wxcrypto), posted in the envelope
//     <xml><ToUserName/><AgentID/><Encrypt/></xml> with msg_signature,
//     timestamp and nonce in the query.
//   - WeChat Official Account, in each of its three modes ([Options].Mode): plain
//     (the XML as it is, query signature, timestamp, nonce and openid),
//     safe (the XML encrypted for receiveid = AppID in
//     <xml><ToUserName/><Encrypt/></xml>, plus encrypt_type=aes and
//     msg_signature) and compat (safe mode's envelope that also carries the
//     plaintext fields).
//
// [Verification] builds the URL-verification handshake of the providers
// that have one (WeCom's and WeChat's GET, Slack's and Feishu's POST:
// [provider.Handshaker]), with the answer the platform expects to it.
// [Expand] fills a body template's placeholders ({{now}},
// {{now_ms}}, {{now_rfc3339}}, {{id}}), so a saved sample stays inside the
// receiver's event-age and timestamp windows.
//
// The hookwall CLI (`hookwall sign`), `make events` and the tests use it. It
// holds no state and performs no I/O beyond reading randomness.
package signer

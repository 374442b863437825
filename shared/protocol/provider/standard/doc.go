// Package standard verifies and parses Standard Webhooks deliveries
// (https://www.standardwebhooks.com/, specification at
// https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md).
//
// A delivery is a POST with three headers: webhook-id (the event id, constant
// across retries, used as the dedup key), webhook-timestamp (integer Unix
// seconds of this attempt) and webhook-signature, a space-separated list of
// signatures over "{id}.{timestamp}.{body}": "v1,<base64 HMAC-SHA256>"
// (symmetric) or "v1a,<base64 Ed25519 signature>" (asymmetric). A v1 key
// is the Base64 part of a "whsec_" secret; [DecodeSecret] lists the other
// spellings accepted, those the reference libraries read as the same key,
// and Config.RawSecrets takes keys as bytes, as the libraries' raw
// constructors do. A v1a signature is verified with a "whpk_" public key
// ([DecodePublicKey]) and made with a "whsk_" signing key
// ([DecodeSigningKey]); a public key never verifies a v1 entry. Several
// configured keys and several header entries allow key rotation: any entry
// matching any key of its scheme is accepted (of v1a entries, the first
// [MaxV1aEntries] are verified); other versions are ignored. Timestamps more
// than the tolerance (default 5 minutes, as in the reference libraries; a
// tenant may set its own, [MinToleranceSeconds] to [MaxToleranceSeconds])
// away from the verifier's clock, in either direction, are rejected.
//
// Once the signature and the timestamp have been checked, a webhook-id longer
// than [MaxIDBytes] (256 bytes), not valid UTF-8 or holding a control
// character, and a body that is not valid UTF-8 (RFC 8259 §8.1) or not JSON,
// are rejected with [webhook.ErrMalformed] (HTTP 400).
//
// [Parser] implements [webhook.Parser]. Each accepted delivery yields one
// event.
package standard

// Package standard verifies and parses Standard Webhooks deliveries
// (https://www.standardwebhooks.com/, specification at
// https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md).
//
// A delivery is a POST with three headers: webhook-id (the event id, constant
// across retries, used as the dedup key), webhook-timestamp (integer Unix
// seconds of this attempt) and webhook-signature, a space-separated list of
// "v1,<base64 HMAC-SHA256>" entries over "{id}.{timestamp}.{body}". The key is
// the Base64 part of a "whsec_" secret; [DecodeSecret] lists the other
// spellings accepted, those the reference libraries read as the same key, and
// Config.RawSecrets takes keys as bytes, as the libraries' raw constructors
// do. Several configured secrets and several header entries allow key
// rotation: any v1 entry matching any secret is accepted; other versions
// ("v1a", asymmetric) are ignored. Timestamps more
// than the tolerance (default 5 minutes, as in the reference libraries) away
// from the verifier's clock, in either direction, are rejected.
//
// Once the signature and the timestamp have been checked, a webhook-id longer
// than [MaxIDBytes] (256 bytes), not valid UTF-8 or holding a control
// character, and a body that is not valid UTF-8 (RFC 8259 §8.1) or not JSON,
// are rejected with [webhook.ErrMalformed] (HTTP 400).
//
// [Parser] implements [webhook.Parser]. Each accepted delivery yields one
// event.
package standard

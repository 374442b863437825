// Package standard verifies and parses Standard Webhooks deliveries
// (https://www.standardwebhooks.com/, specification at
// https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md).
//
// A delivery is a POST with three headers: webhook-id (the event id, constant
// across retries, used as the dedup key), webhook-timestamp (integer Unix
// seconds of this attempt) and webhook-signature, a space-separated list of
// "v1,<base64 HMAC-SHA256>" entries over "{id}.{timestamp}.{body}". The key is
// the Base64 part of a "whsec_" secret. Several configured secrets and several
// header entries allow key rotation: any v1 entry matching any secret is
// accepted; other versions ("v1a", asymmetric) are ignored. Timestamps more
// than the tolerance (default 5 minutes, as in the reference libraries) away
// from the verifier's clock, in either direction, are rejected.
//
// [Parser] implements [webhook.Parser]. Each accepted delivery yields one
// event.
package standard

// Package forward is Hookwall's built-in forwarding handler: for every event
// of every type of a tenant whose configuration has `forward`, it POSTs the
// event's envelope (webhook.Envelope as JSON, payload included) to
// forward.url, signed as Standard Webhooks (https://www.standardwebhooks.com)
// so that the receiver can verify Hookwall itself.
//
// Headers:
//
//	Content-Type       application/json
//	Idempotency-Key    the step's idempotency key (webhook.IdempotencyKey of
//	                   the event key, "hookwall.forward" and "post"): the same
//	                   on every retry of the event, a UUID
//	webhook-id         the same value as Idempotency-Key (not the event key,
//	                   which contains the tenant and '#'): a receiver
//	                   deduplicates on either
//	webhook-timestamp  the attempt's time, Unix seconds
//	webhook-signature  "v1,<base64 HMAC-SHA256>" of "id.timestamp.body" with
//	                   forward.secret; absent when no secret is configured
//
// Outcomes: a 2xx answer is done; 408, 429, 5xx, transport errors and the
// per-request timeout are retried with the processor's backoff; any other
// status (other 4xx, and 3xx: redirects are not followed) is permanent, and
// the event goes to the dead-letter queue. The POST is one step, so a
// forwarded event is not forwarded again when another handler of the same
// event fails and the event is retried.
//
// Each tenant's URL is its own target, "forward/<tenant>" ([TargetPattern]):
// while it keeps failing, its circuit breaker opens and that tenant's events
// are held (not failed, no attempt spent) until a probe succeeds; they then
// drain at the target's rate (HOOKWALL_TARGET_RATE). Pause it with `hookwall
// pause target/forward/<tenant>`.
//
// Tenants without `forward` are not matched at all (process.ForTenants), so
// their events stay unhandled unless another handler serves them.
package forward

package storm

import (
	"time"

	"github.com/hookwall/hookwall/shared/webhook"
)

// Policy is how a platform retries a delivery that was not answered 2xx:
// the waits before each retry, and how long it waits for an answer. The
// waits are the platforms' schedules compressed so a storm converges in
// minutes (LINE's redelivery, WeCom's and WeChat's three retries within
// 5 s, Standard Webhooks' exponential backoff).
type Policy struct {
	// Name names the policy in the report.
	Name string
	// Retries are the waits before each retry, in order.
	Retries []time.Duration
	// Timeout is how long the platform waits for an answer.
	Timeout time.Duration
	// Redelivery says a retry is marked as such in the body (LINE's
	// deliveryContext.isRedelivery).
	Redelivery bool
}

// PolicyFor returns the provider's retry policy.
func PolicyFor(provider string) Policy {
	switch provider {
	case webhook.LINE:
		// LINE: redelivery (isRedelivery true) with growing gaps; it waits
		// 2 s for an answer.
		return Policy{Name: "line redelivery", Retries: durations(1, 2, 4, 8), Timeout: 2 * time.Second, Redelivery: true}
	case webhook.WeCom, webhook.WeChat:
		// WeCom and WeChat: 3 retries within 5 s; they wait 5 s.
		return Policy{Name: provider + " 3 retries in 5s", Retries: durations(1, 1.5, 2), Timeout: 5 * time.Second}
	default:
		// Standard Webhooks: exponential backoff (compressed).
		return Policy{Name: "standard exponential", Retries: durations(0.5, 1, 2, 4, 8, 16), Timeout: 15 * time.Second}
	}
}

func durations(secs ...float64) []time.Duration {
	out := make([]time.Duration, len(secs))
	for i, s := range secs {
		out[i] = time.Duration(s * float64(time.Second))
	}
	return out
}

// ManualEvery is the gap between manual redeliveries, once the platform's
// own policy has given up (an operator resending from the console).
const ManualEvery = 2 * time.Second

package storm

import (
	"time"

	"github.com/hookwall/hookwall/shared/protocol/providers"
)

// Policy is how a platform retries a delivery that was not answered 2xx:
// the waits before each retry, and how long it waits for an answer. The
// waits are the platforms' schedules compressed so a storm converges in
// minutes (the Retry of each provider's demo in the registry: LINE's redelivery,
// WeCom's and WeChat's three retries within 5 s, Standard Webhooks'
// exponential backoff, ...).
type Policy struct {
	// Name names the policy in the report.
	Name string
	// Retries are the waits before each retry, in order.
	Retries []time.Duration
	// Timeout is how long the platform waits for an answer.
	Timeout time.Duration
	// Redelivery says a retry is marked as such (in the body, as LINE's
	// deliveryContext.isRedelivery, or in headers, as Slack's
	// X-Slack-Retry-Num).
	Redelivery bool
}

// PolicyFor returns the provider's retry policy, from the provider
// registry: its demo's retry schedule and its answer deadline. An unknown
// provider gets a policy without retries.
func PolicyFor(name string) Policy {
	p, ok := providers.Lookup(name)
	if !ok {
		return Policy{Name: name + " (unknown provider)", Timeout: 15 * time.Second}
	}
	r := p.Demo.Retry
	return Policy{Name: r.Policy, Retries: r.Waits, Timeout: p.AnswerWithin, Redelivery: r.Marked}
}

// ManualEvery is the gap between manual redeliveries, once the platform's
// own policy has given up (an operator resending from the console).
const ManualEvery = 2 * time.Second

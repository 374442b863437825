package process

import (
	"context"

	"github.com/hookwall/hookwall/shared/webhook"
)

// Publisher publishes outcome events. A nil Publisher in [Config] turns
// publishing off.
type Publisher interface {
	// Publish sends events, retrying the entries that failed; the error
	// reports those that could not be sent at all.
	Publish(ctx context.Context, events []webhook.Outcome) error
}

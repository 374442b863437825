package kernel

import (
	"context"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
)

// Visibility changes when a queue message becomes visible again
// (queue.Queue satisfies it).
type Visibility interface {
	// ChangeVisibility makes the message with receiptHandle visible again after d.
	ChangeVisibility(ctx context.Context, receiptHandle string, d time.Duration) error
}

// Publisher publishes outcome events (bus.Publisher satisfies it). A nil
// Publisher in [Config] turns publishing off.
type Publisher interface {
	// Publish sends events, retrying the entries that failed; the error
	// reports those that could not be sent at all.
	Publish(ctx context.Context, events []webhook.Outcome) error
}

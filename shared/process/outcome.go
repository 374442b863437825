package process

import (
	"context"
	"time"

	"github.com/hookwall/hookwall/shared/webhook"
)

// OutcomeEvent is the outcome of one event, published to EventBridge: the
// envelope's metadata, never its payload nor any secret.
type OutcomeEvent struct {
	Key        string
	Provider   string
	Tenant     string
	Type       string
	ReceivedAt time.Time
	TraceID    string
	// Status is SUCCEEDED or FAILED.
	Status webhook.Status
	// Attempts is the number of attempts made, this one included.
	Attempts int
	// LastError is the reason of a FAILED outcome.
	LastError string
	// At is when the outcome was reached.
	At time.Time
}

// Publisher publishes outcome events. A nil Publisher in [Config] turns
// publishing off.
type Publisher interface {
	// Publish sends events, retrying the entries that failed; the error
	// reports those that could not be sent at all.
	Publish(ctx context.Context, events []OutcomeEvent) error
}

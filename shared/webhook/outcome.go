package webhook

import "time"

// Outcome is the outcome of one event, published to EventBridge: the
// envelope's metadata, never its payload nor any secret.
type Outcome struct {
	Key        string
	Provider   string
	Tenant     string
	Type       string
	ReceivedAt time.Time
	TraceID    string
	// Status is SUCCEEDED or FAILED.
	Status Status
	// Attempts is the number of attempts made, this one included.
	Attempts int
	// LastError is the reason of a FAILED outcome.
	LastError string
	// At is when the outcome was reached.
	At time.Time
}

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
	// Status is SUCCEEDED or FAILED (the processor), COMPENSATED or DEAD
	// (the compensator).
	Status Status
	// Attempts is the number of processing attempts made (for the
	// processor, this one included).
	Attempts int
	// Compensations is the number of compensation attempts made, this one
	// included (compensator outcomes only; 0 otherwise).
	Compensations int
	// LastError is the reason of a FAILED or DEAD outcome.
	LastError string
	// At is when the outcome was reached.
	At time.Time
}

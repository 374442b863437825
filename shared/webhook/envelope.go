package webhook

import (
	"encoding/json"
	"time"
)

// Envelope is the SQS message body the receiver sends for each new event and
// the processor consumes. Field names are a wire contract.
type Envelope struct {
	Key        string          `json:"key"`
	Provider   string          `json:"provider"`
	Tenant     string          `json:"tenant"`
	Type       string          `json:"type"`
	OccurredAt *time.Time      `json:"occurredAt,omitempty"`
	ReceivedAt time.Time       `json:"receivedAt"`
	TraceID    string          `json:"traceId,omitempty"`
	Payload    json.RawMessage `json:"payload"`
}

// Type names one event type of one provider and ties it to the Go type T its
// normalised JSON payload decodes into. Provider packages declare them
// (line.Follow, wecom.ApprovalChange); processor handlers register on them.
type Type[T any] struct {
	Provider string
	Name     string
}

// NewType returns the Type for provider and event type name.
func NewType[T any](provider, name string) Type[T] {
	return Type[T]{Provider: provider, Name: name}
}

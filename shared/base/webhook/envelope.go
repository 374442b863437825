package webhook

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
	"unicode/utf8"
)

// Envelope is the SQS message body the receiver sends for each new event and
// the processor consumes. Field names are a wire contract.
//
// A large payload does not travel in the message: then Payload is empty and
// PayloadInRecord is true, and the processor takes the payload from the
// event's record (which it reads anyway when it takes the lease).
type Envelope struct {
	Key        string          `json:"key"`
	Provider   string          `json:"provider"`
	Tenant     string          `json:"tenant"`
	Type       string          `json:"type"`
	OccurredAt *time.Time      `json:"occurredAt,omitempty"`
	ReceivedAt time.Time       `json:"receivedAt"`
	TraceID    string          `json:"traceId,omitempty"`
	Payload    json.RawMessage `json:"payload,omitempty"`
	// PayloadInRecord says the payload was left out of the message and is to
	// be read from the record.
	PayloadInRecord bool `json:"payloadInRecord,omitempty"`
	// Generation is the life of the event the message belongs to: the
	// record's generation when the message was made (the claim's is 0; each
	// replay or recovery of the event adds one). A message whose generation
	// is older than the record's is stale: the processor and the
	// compensator acknowledge it without acting (AcquireStale). Absent is 0,
	// as in the messages sent before generations existed.
	Generation int64 `json:"generation,omitempty"`
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

// MarshalMessage encodes e as an SQS message body: JSON without HTML
// escaping (so '<', '>' and '&' stay one byte each, as the payload came),
// and with the two characters SQS refuses although they are valid UTF-8
// (U+FFFE and U+FFFF, outside XML's character range) written as JSON
// escapes, which decode to the same string. Every other character SQS
// accepts as is; control characters never appear raw in JSON strings.
func (e *Envelope) MarshalMessage() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(e); err != nil {
		return nil, fmt.Errorf("webhook: encode envelope %s: %w", e.Key, err)
	}
	b := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	if !utf8.Valid(b) {
		return nil, fmt.Errorf("webhook: envelope %s is not valid UTF-8: %w", e.Key, ErrMalformed)
	}
	if bytes.Contains(b, nonCharFFFE) || bytes.Contains(b, nonCharFFFF) {
		b = bytes.ReplaceAll(b, nonCharFFFE, []byte(`\ufffe`))
		b = bytes.ReplaceAll(b, nonCharFFFF, []byte(`\uffff`))
	}
	return b, nil
}

// The UTF-8 encodings of U+FFFE and U+FFFF. In valid UTF-8 these byte
// sequences can only be those characters, and in JSON they can only stand
// inside strings.
var (
	nonCharFFFE = []byte("\uFFFE")
	nonCharFFFF = []byte("\uFFFF")
)

package bus

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
)

// Detail-types of the operational events: what happened to a target, a
// scope or an event's delivery, as opposed to an event's outcome.
const (
	// DetailTypeAttemptExhausted: an event ended FAILED because its attempts
	// ran out (not because a handler said Permanent).
	DetailTypeAttemptExhausted = "hookwall.attempt.exhausted"
	// DetailTypeCircuitOpened: a target's breaker opened; its events are held.
	DetailTypeCircuitOpened = "hookwall.circuit.opened"
	// DetailTypeCircuitClosed: a target's breaker closed after a successful probe.
	DetailTypeCircuitClosed = "hookwall.circuit.closed"
	// DetailTypeEventRecovered: a recovery job sent a FAILED event back to be processed.
	DetailTypeEventRecovered = "hookwall.event.recovered"
	// DetailTypeControlPaused: an operator paused a handler, a tenant or a target.
	DetailTypeControlPaused = "hookwall.control.paused"
	// DetailTypeControlResumed: an operator resumed a paused scope.
	DetailTypeControlResumed = "hookwall.control.resumed"
)

// opTypes lists the operational detail-types, the only values an [Op] Type takes.
var opTypes = []string{
	DetailTypeAttemptExhausted, DetailTypeCircuitOpened, DetailTypeCircuitClosed,
	DetailTypeEventRecovered, DetailTypeControlPaused, DetailTypeControlResumed,
}

// Op is one operational event. Type is its detail-type (one of the DetailType consts above);
// the other fields are those that apply to it, the rest left empty:
// Target for circuit events (and for an exhausted attempt when known), Scope
// ("kind#name", e.g. "tenant#acme") for control events, Key, Provider and
// Tenant for an event's own (exhausted, recovered), Reason for why, Count
// for how many (e.g. events held when a scope was resumed, or attempts
// made). At is when it happened (zero: EventBridge stamps the time of the
// call).
type Op struct {
	Type     string
	Target   string
	Scope    string
	Key      string
	Provider string
	Tenant   string
	Reason   string
	Count    int
	At       time.Time
}

// OpDetail is the JSON detail of an operational event. It never carries a
// payload nor a secret.
type OpDetail struct {
	Target   string    `json:"target,omitempty"`
	Scope    string    `json:"scope,omitempty"`
	Key      string    `json:"key,omitempty"`
	Provider string    `json:"provider,omitempty"`
	Tenant   string    `json:"tenant,omitempty"`
	Reason   string    `json:"reason,omitempty"`
	Count    int       `json:"count,omitempty"`
	At       time.Time `json:"at,omitzero"`
}

// PublishOps sends operational events, batched and resent like [Publisher.Publish].
// An op whose Type is not one of them is a programming error: nothing is
// sent and an error says which. A nil *Publisher publishes nothing.
func (p *Publisher) PublishOps(ctx context.Context, ops []Op) error {
	if p == nil || len(ops) == 0 {
		return nil
	}
	entries := make([]types.PutEventsRequestEntry, len(ops))
	for i, op := range ops {
		if !slices.Contains(opTypes, op.Type) {
			return fmt.Errorf("bus: op %d: unknown detail-type %q", i, op.Type)
		}
		detail, err := json.Marshal(OpDetail{Target: op.Target, Scope: op.Scope, Key: op.Key, Provider: op.Provider,
			Tenant: op.Tenant, Reason: op.Reason, Count: op.Count, At: op.At})
		if err != nil {
			return fmt.Errorf("bus: encode op %s: %w", op.Type, err)
		}
		entries[i] = types.PutEventsRequestEntry{
			EventBusName: aws.String(p.bus),
			Source:       aws.String(Source),
			DetailType:   aws.String(op.Type),
			Detail:       aws.String(string(detail)),
		}
		if !op.At.IsZero() {
			entries[i].Time = aws.Time(op.At)
		}
	}
	return p.send(ctx, entries)
}

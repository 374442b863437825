package storm

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/hookwall/hookwall/shared/aws/queue"
)

// GroupReport is what the storm saw of the message groups on the real
// queues: every message the processor's and the compensator's pollers
// received (ReceiveMessage asking for the system attributes, as the Lambda
// event source does), its MessageGroupId against the tenant the storm sent
// its event for. Mismatched must be 0.
type GroupReport struct {
	// Receives counts the messages received, receives again after a
	// visibility timeout included.
	Receives int `json:"receives"`
	// Messages counts the distinct messages (message ids), ByGroup them by
	// their MessageGroupId ("" : none).
	Messages int            `json:"messages"`
	ByGroup  map[string]int `json:"by_group"`
	// Mismatched counts the distinct messages whose group is not the
	// tenant of their event (no group, another tenant's, or no event key
	// to tell); Samples lists a few.
	Mismatched int      `json:"mismatched"`
	Samples    []string `json:"mismatch_samples,omitempty"`
	// UnknownKeys counts messages whose event the storm did not send
	// (checked against the tenant in their key instead).
	UnknownKeys int `json:"unknown_keys"`
}

// groupCheck checks the group of every message the pollers receive.
type groupCheck struct {
	mu      sync.Mutex
	tenants map[string]string    // event key → the tenant the storm sent it for
	seen    map[string]bool      // message ids checked
	recv    map[string]time.Time // event key → first received by the processor
	r       GroupReport
}

// expectGroups tells the check which tenant each of the items' events
// belongs to ("" : the demo tenant).
func (s *System) expectGroups(items []Item) {
	s.groups.mu.Lock()
	defer s.groups.mu.Unlock()
	s.groups.tenants = map[string]string{}
	for _, it := range items {
		for _, k := range it.Keys {
			s.groups.tenants[k] = tenantName(it)
		}
	}
}

// onBatch is the pollers' OnBatch: it checks each record's group.
func (s *System) onBatch(queueName string) func(context.Context, events.SQSEvent) {
	return func(_ context.Context, ev events.SQSEvent) {
		g := &s.groups
		g.mu.Lock()
		defer g.mu.Unlock()
		now := time.Now()
		if g.seen == nil {
			g.seen = map[string]bool{}
			g.recv = map[string]time.Time{}
			g.r.ByGroup = map[string]int{}
		}
		for _, m := range ev.Records {
			g.r.Receives++
			if g.seen[m.MessageId] {
				continue
			}
			g.seen[m.MessageId] = true
			g.r.Messages++
			group := m.Attributes[string(sqstypes.MessageSystemAttributeNameMessageGroupId)]
			g.r.ByGroup[group]++
			key := ""
			if a, ok := m.MessageAttributes[queue.AttrEventKey]; ok && a.StringValue != nil {
				key = *a.StringValue
			}
			if _, ok := g.recv[key]; !ok && key != "" && queueName == "queue" {
				g.recv[key] = now
			}
			want, ok := g.tenants[key]
			if !ok && key != "" {
				g.r.UnknownKeys++
				want = tenantOf(key)
			}
			if key == "" || group != want {
				g.r.Mismatched++
				if len(g.r.Samples) < maxSampleKeys {
					g.r.Samples = append(g.r.Samples, fmt.Sprintf("%s: message %s, key %q, group %q, want %q", queueName, m.MessageId, key, group, want))
				}
			}
		}
	}
}

// groupReport returns a copy of what the check saw.
func (s *System) groupReport() *GroupReport {
	g := &s.groups
	g.mu.Lock()
	defer g.mu.Unlock()
	r := g.r
	r.ByGroup = map[string]int{}
	for k, v := range g.r.ByGroup {
		r.ByGroup[k] = v
	}
	r.Samples = append([]string(nil), g.r.Samples...)
	return &r
}

// firstReceives returns when the processor's pollers first received each
// event's message, by event key.
func (s *System) firstReceives() map[string]time.Time {
	g := &s.groups
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make(map[string]time.Time, len(g.recv))
	for k, t := range g.recv {
		out[k] = t
	}
	return out
}

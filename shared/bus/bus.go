package bus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge/types"

	"github.com/hookwall/hookwall/shared/webhook"
)

// Event source and detail types.
const (
	Source              = "hookwall"
	DetailTypeSucceeded = "hookwall.event.succeeded"
	DetailTypeFailed    = "hookwall.event.failed"
)

// MaxBatch is the most entries one PutEvents call takes.
const MaxBatch = 10

// PutEventsAPI is the part of the EventBridge client the Publisher uses;
// *eventbridge.Client satisfies it.
type PutEventsAPI interface {
	PutEvents(ctx context.Context, in *eventbridge.PutEventsInput, optFns ...func(*eventbridge.Options)) (*eventbridge.PutEventsOutput, error)
}

// Config configures a Publisher.
type Config struct {
	// Client is the EventBridge client (required unless BusName is empty).
	Client PutEventsAPI
	// BusName is the event bus name or ARN (optional; empty: publishing off).
	BusName string
	// Attempts is how many times a rejected entry is sent in all (optional; default 3).
	Attempts int
	// Backoff is the pause before the first resend, doubled each time (optional; default 100ms).
	Backoff time.Duration
}

// Publisher publishes outcome events. A nil *Publisher publishes nothing.
// It is safe for concurrent use.
type Publisher struct {
	client   PutEventsAPI
	bus      string
	attempts int
	backoff  time.Duration
}

// New returns the Publisher described by cfg, or a nil *Publisher (which
// publishes nothing) when cfg.BusName is empty.
func New(cfg Config) (*Publisher, error) {
	if cfg.BusName == "" {
		return nil, nil
	}
	if cfg.Client == nil {
		return nil, errors.New("bus: nil EventBridge client")
	}
	if cfg.Attempts <= 0 {
		cfg.Attempts = 3
	}
	if cfg.Backoff <= 0 {
		cfg.Backoff = 100 * time.Millisecond
	}
	return &Publisher{client: cfg.Client, bus: cfg.BusName, attempts: cfg.Attempts, backoff: cfg.Backoff}, nil
}

// Detail is the JSON detail of an outcome event.
type Detail struct {
	Key        string    `json:"key"`
	Provider   string    `json:"provider"`
	Tenant     string    `json:"tenant"`
	Type       string    `json:"type"`
	ReceivedAt time.Time `json:"receivedAt"`
	TraceID    string    `json:"traceId,omitempty"`
	Status     string    `json:"status"`
	Attempts   int       `json:"attempts"`
	LastError  string    `json:"lastError,omitempty"`
}

// DetailType returns the detail-type of an outcome with status s.
func DetailType(s webhook.Status) string {
	if s == webhook.StatusSucceeded {
		return DetailTypeSucceeded
	}
	return DetailTypeFailed
}

// Publish sends evs in PutEvents calls of at most MaxBatch entries,
// resending only the rejected entries (or a whole batch whose call failed)
// up to the configured attempts. It returns an error naming how many events
// could not be sent.
func (p *Publisher) Publish(ctx context.Context, evs []webhook.Outcome) error {
	if p == nil || len(evs) == 0 {
		return nil
	}
	entries := make([]types.PutEventsRequestEntry, len(evs))
	for i, ev := range evs {
		detail, err := json.Marshal(Detail{
			Key: ev.Key, Provider: ev.Provider, Tenant: ev.Tenant, Type: ev.Type, ReceivedAt: ev.ReceivedAt,
			TraceID: ev.TraceID, Status: string(ev.Status), Attempts: ev.Attempts, LastError: ev.LastError,
		})
		if err != nil {
			return fmt.Errorf("bus: encode detail %s: %w", ev.Key, err)
		}
		entries[i] = types.PutEventsRequestEntry{
			EventBusName: aws.String(p.bus),
			Source:       aws.String(Source),
			DetailType:   aws.String(DetailType(ev.Status)),
			Detail:       aws.String(string(detail)),
		}
		if !ev.At.IsZero() {
			entries[i].Time = aws.Time(ev.At)
		}
	}
	var failed int
	var lastErr error
	for start := 0; start < len(entries); start += MaxBatch {
		pending := entries[start:min(start+MaxBatch, len(entries))]
		for attempt := 0; len(pending) > 0 && attempt < p.attempts; attempt++ {
			if attempt > 0 {
				if err := sleep(ctx, p.backoff<<(attempt-1)); err != nil {
					lastErr = err
					break
				}
			}
			pending, lastErr = p.put(ctx, pending)
		}
		failed += len(pending)
	}
	if failed > 0 {
		return fmt.Errorf("bus: %d of %d event(s) not published: %w", failed, len(entries), lastErr)
	}
	return nil
}

// put sends one batch and returns the entries to send again.
func (p *Publisher) put(ctx context.Context, batch []types.PutEventsRequestEntry) ([]types.PutEventsRequestEntry, error) {
	out, err := p.client.PutEvents(ctx, &eventbridge.PutEventsInput{Entries: batch})
	if err != nil {
		return batch, fmt.Errorf("put events: %w", err)
	}
	if out.FailedEntryCount == 0 {
		return nil, nil
	}
	var rest []types.PutEventsRequestEntry
	var firstErr error
	for i, e := range out.Entries {
		if i < len(batch) && e.ErrorCode != nil {
			rest = append(rest, batch[i])
			if firstErr == nil {
				firstErr = fmt.Errorf("entry rejected: %s: %s", aws.ToString(e.ErrorCode), aws.ToString(e.ErrorMessage))
			}
		}
	}
	if len(out.Entries) < len(batch) { // malformed reply: resend what it says nothing about
		rest = append(rest, batch[len(out.Entries):]...)
	}
	if firstErr == nil {
		firstErr = errors.New("entries rejected")
	}
	return rest, firstErr
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

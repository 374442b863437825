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

	"github.com/hookwall/hookwall/shared/base/batch"
	"github.com/hookwall/hookwall/shared/base/format"
	"github.com/hookwall/hookwall/shared/base/release"
	"github.com/hookwall/hookwall/shared/base/webhook"
)

// Event source and detail types.
const (
	Source              = "hookwall"
	DetailTypeSucceeded = "hookwall.event.succeeded"
	DetailTypeFailed    = "hookwall.event.failed"
	// The compensator's outcomes: every journaled step undone, or given up on.
	DetailTypeCompensated = "hookwall.event.compensated"
	DetailTypeDead        = "hookwall.event.dead"
)

// Limits of one PutEvents call
// (https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-putevent-size.html).
const (
	// MaxBatch is the most entries one PutEvents call takes.
	MaxBatch = 10
	// MaxBatchBytes bounds the total size of the entries of one PutEvents
	// call, as EventBridge counts it (see [EntrySize]). An entry over it on
	// its own is never sent.
	MaxBatchBytes = 256 * 1024
)

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
	client PutEventsAPI
	bus    string
	retry  batch.Retry
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
	retry := batch.Retry{Attempts: cfg.Attempts, Backoff: cfg.Backoff}.Or(batch.Retry{Attempts: 3, Backoff: 100 * time.Millisecond})
	return &Publisher{client: cfg.Client, bus: cfg.BusName, retry: retry}, nil
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
	// Compensations counts the compensation attempts (compensator outcomes only).
	Compensations int `json:"compensations,omitempty"`
	// FormatVersion is the detail's format version (format.Event; absent:
	// the previous format) and Release the release that published it.
	FormatVersion int    `json:"formatVersion,omitempty"`
	Release       string `json:"release,omitempty"`
}

// DetailType returns the detail-type of an outcome with status s:
// SUCCEEDED, COMPENSATED and DEAD have their own; any other status is failed.
func DetailType(s webhook.Status) string {
	switch s {
	case webhook.StatusSucceeded:
		return DetailTypeSucceeded
	case webhook.StatusCompensated:
		return DetailTypeCompensated
	case webhook.StatusDead:
		return DetailTypeDead
	}
	return DetailTypeFailed
}

// EntrySize is the size of e as EventBridge counts it against
// [MaxBatchBytes]: 14 bytes for Time if set, plus the UTF-8 bytes of Source,
// DetailType, Detail and each of Resources.
func EntrySize(e *types.PutEventsRequestEntry) int {
	n := len(aws.ToString(e.Source)) + len(aws.ToString(e.DetailType)) + len(aws.ToString(e.Detail))
	if e.Time != nil {
		n += 14
	}
	for _, r := range e.Resources {
		n += len(r)
	}
	return n
}

// Publish sends evs in PutEvents calls of at most MaxBatch entries and
// MaxBatchBytes, resending only the rejected entries (or a whole batch whose
// call failed) up to the configured attempts. An event whose entry alone is
// over MaxBatchBytes is not sent. It returns an error naming how many events
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
			Compensations: ev.Compensations, FormatVersion: format.Written(format.Event), Release: release.Version,
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
	return p.send(ctx, entries)
}

// send sends entries in PutEvents calls of at most MaxBatch entries and
// MaxBatchBytes, resending the rejected ones; an entry over MaxBatchBytes on
// its own is not sent.
func (p *Publisher) send(ctx context.Context, entries []types.PutEventsRequestEntry) error {
	var batches [][]int
	var tooLarge []int
	for _, b := range batch.Split(len(entries), func(i int) int { return EntrySize(&entries[i]) }, MaxBatch, MaxBatchBytes) {
		if len(b) == 1 && EntrySize(&entries[b[0]]) > MaxBatchBytes {
			tooLarge = append(tooLarge, b[0])
			continue
		}
		batches = append(batches, b)
	}
	failed, lastErr := batch.Send(ctx, batches, p.retry,
		func(ctx context.Context, pending []int) ([]int, error) {
			return p.put(ctx, entries, pending)
		})
	if len(tooLarge) > 0 {
		failed = append(failed, tooLarge...)
		lastErr = errors.Join(lastErr, fmt.Errorf("%d entry(ies) over %d bytes: %w", len(tooLarge), MaxBatchBytes, webhook.ErrTooLarge))
	}
	if len(failed) > 0 {
		return fmt.Errorf("bus: %d of %d event(s) not published: %w", len(failed), len(entries), lastErr)
	}
	return nil
}

// put sends the pending entries in one call and returns those to send again.
func (p *Publisher) put(ctx context.Context, entries []types.PutEventsRequestEntry, pending []int) ([]int, error) {
	in := &eventbridge.PutEventsInput{Entries: make([]types.PutEventsRequestEntry, len(pending))}
	for j, i := range pending {
		in.Entries[j] = entries[i]
	}
	out, err := p.client.PutEvents(ctx, in)
	if err != nil {
		return pending, fmt.Errorf("put events: %w", err)
	}
	if out.FailedEntryCount == 0 {
		return nil, nil
	}
	var rest []int
	var firstErr error
	for j, e := range out.Entries {
		if j < len(pending) && e.ErrorCode != nil {
			rest = append(rest, pending[j])
			if firstErr == nil {
				firstErr = fmt.Errorf("entry rejected: %s: %s", aws.ToString(e.ErrorCode), aws.ToString(e.ErrorMessage))
			}
		}
	}
	if len(out.Entries) < len(pending) { // malformed reply: resend what it says nothing about
		rest = append(rest, pending[len(out.Entries):]...)
	}
	if firstErr == nil && len(rest) > 0 {
		firstErr = errors.New("entries rejected")
	}
	return rest, firstErr
}

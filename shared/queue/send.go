package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/hookwall/hookwall/shared/webhook"
)

// MaxBatch is the most entries SQS takes in one SendMessageBatch call.
const MaxBatch = 10

// AttrEventKey is the message attribute carrying the event key, so that a
// message can be traced without parsing its body.
const AttrEventKey = "hookwall-event-key"

// Queue is one SQS queue. It is safe for concurrent use.
type Queue struct {
	client   *sqs.Client
	url      string
	attempts int
	backoff  time.Duration
}

// Config configures a Queue.
type Config struct {
	// Client is the SQS client (required).
	Client *sqs.Client
	// URL is the queue URL (required).
	URL string
	// Attempts is how many times failed entries are sent in all (optional; default 3).
	Attempts int
	// Backoff is the pause before the first resend, doubled each time (optional; default 50ms).
	Backoff time.Duration
}

// New returns the Queue described by cfg.
func New(cfg Config) (*Queue, error) {
	if cfg.Client == nil {
		return nil, errors.New("queue: nil SQS client")
	}
	if cfg.URL == "" {
		return nil, errors.New("queue: empty queue URL")
	}
	if cfg.Attempts <= 0 {
		cfg.Attempts = 3
	}
	if cfg.Backoff <= 0 {
		cfg.Backoff = 50 * time.Millisecond
	}
	return &Queue{client: cfg.Client, url: cfg.URL, attempts: cfg.Attempts, backoff: cfg.Backoff}, nil
}

// URL returns the queue URL.
func (q *Queue) URL() string { return q.url }

// Client returns the SQS client the queue uses.
func (q *Queue) Client() *sqs.Client { return q.client }

// SendError reports the envelopes that could not be sent, by index into the
// slice given to Send. Every other envelope was accepted by SQS.
type SendError struct {
	Failed []int
	Err    error
}

// Error says how many messages were not sent, and why.
func (e *SendError) Error() string {
	return fmt.Sprintf("queue: %d message(s) not sent: %v", len(e.Failed), e.Err)
}

// Unwrap returns the last failure SQS reported.
func (e *SendError) Unwrap() error { return e.Err }

// Send sends envs in batches of at most MaxBatch, resending only the entries
// SQS rejected (or all of a batch whose call failed), up to the configured
// attempts. It returns nil if every envelope was accepted, else a *SendError
// naming the ones that were not.
func (q *Queue) Send(ctx context.Context, envs []webhook.Envelope) error {
	bodies := make([]string, len(envs))
	for i := range envs {
		b, err := json.Marshal(&envs[i])
		if err != nil {
			return &SendError{Failed: allIndexes(len(envs)), Err: fmt.Errorf("encode envelope %s: %w", envs[i].Key, err)}
		}
		bodies[i] = string(b)
	}
	var failed []int
	var lastErr error
	for start := 0; start < len(envs); start += MaxBatch {
		pending := make([]int, 0, MaxBatch)
		for i := start; i < min(start+MaxBatch, len(envs)); i++ {
			pending = append(pending, i)
		}
		for attempt := 0; len(pending) > 0 && attempt < q.attempts; attempt++ {
			if attempt > 0 {
				if err := sleep(ctx, q.backoff<<(attempt-1)); err != nil {
					lastErr = err
					break
				}
			}
			pending, lastErr = q.sendBatch(ctx, envs, bodies, pending)
		}
		failed = append(failed, pending...)
	}
	if len(failed) > 0 {
		return &SendError{Failed: failed, Err: lastErr}
	}
	return nil
}

// sendBatch sends the pending entries in one call and returns those still to send.
func (q *Queue) sendBatch(ctx context.Context, envs []webhook.Envelope, bodies []string, pending []int) ([]int, error) {
	entries := make([]types.SendMessageBatchRequestEntry, len(pending))
	for j, i := range pending {
		entries[j] = types.SendMessageBatchRequestEntry{
			Id:          aws.String(strconv.Itoa(i)),
			MessageBody: aws.String(bodies[i]),
			MessageAttributes: map[string]types.MessageAttributeValue{
				AttrEventKey: {DataType: aws.String("String"), StringValue: aws.String(envs[i].Key)},
			},
		}
	}
	out, err := q.client.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: &q.url, Entries: entries})
	if err != nil {
		return pending, fmt.Errorf("send batch: %w", err)
	}
	ok := make(map[string]bool, len(out.Successful))
	for _, s := range out.Successful {
		ok[aws.ToString(s.Id)] = true
	}
	var rest []int
	var firstErr error
	for _, i := range pending {
		if !ok[strconv.Itoa(i)] {
			rest = append(rest, i)
		}
	}
	for _, f := range out.Failed {
		if firstErr == nil {
			firstErr = fmt.Errorf("entry rejected: %s: %s", aws.ToString(f.Code), aws.ToString(f.Message))
		}
	}
	if len(rest) > 0 && firstErr == nil {
		firstErr = errors.New("entries missing from the batch reply")
	}
	return rest, firstErr
}

func allIndexes(n int) []int {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	return idx
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

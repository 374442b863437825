package queue

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/hookwall/hookwall/shared/base/batch"
	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/internal/fanout"
)

// Size limits of the messages and batches Send makes.
const (
	// MaxBatch is the most entries SQS takes in one SendMessageBatch call.
	MaxBatch = 10
	// MaxBatchBytes bounds the bodies and attributes of one SendMessageBatch
	// call: SQS's default maximum message size, which also caps a whole
	// batch (the template and the local stack raise the queues' maximum to
	// 1 MiB; Send stays within the default so it works with any queue).
	MaxBatchBytes = 256 * 1024
	// InlinePayloadBytes is the largest message that carries its payload.
	// A larger event is sent as its key alone (webhook.Envelope.PayloadInRecord)
	// and the processor reads the payload from the record: every message then
	// stays well inside SQS's limits and one 64 KiB billing unit.
	InlinePayloadBytes = 64 * 1024
)

// SendConcurrency is how many SendMessageBatch calls one Send makes at a
// time: a delivery of many events is sent in a fraction of the time its
// batches would take one after another.
const SendConcurrency = 8

// AttrEventKey is the message attribute carrying the event key
// ([webhook.AttrEventKey]).
const AttrEventKey = webhook.AttrEventKey

// Group returns the message group of an event of tenant: the tenant, so
// that SQS fair queues serve a quiet tenant's messages before a noisy
// tenant's backlog (standard queues; on a FIFO queue it would also order
// them). nil for no tenant. Tenant names (webhook.ValidTenant) are valid
// group ids: 1-64 letters, digits and "_.-".
func Group(tenant string) *string {
	if tenant == "" {
		return nil
	}
	return aws.String(tenant)
}

// GroupOf returns the message group m is to keep when it is moved to
// another queue ([webhook.MessageGroup]): its own MessageGroupId (asked for
// with the system attributes), else the tenant of its event-key attribute,
// else none.
func GroupOf(m types.Message) *string {
	key := ""
	if v, ok := m.MessageAttributes[AttrEventKey]; ok {
		key = aws.ToString(v.StringValue)
	}
	return Group(webhook.MessageGroup(m.Attributes[string(types.MessageSystemAttributeNameMessageGroupId)], key))
}

// Queue is one SQS queue. It is safe for concurrent use.
type Queue struct {
	client *sqs.Client
	url    string
	retry  batch.Retry
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
	retry := batch.Retry{Attempts: cfg.Attempts, Backoff: cfg.Backoff}.Or(batch.Retry{Attempts: 3, Backoff: 50 * time.Millisecond})
	return &Queue{client: cfg.Client, url: cfg.URL, retry: retry}, nil
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

// NotSent says which of the n envelopes given to a Send that returned err
// were not sent: those a *SendError names, all of them for any other
// error, none for nil.
func NotSent(err error, n int) map[int]bool {
	failed := map[int]bool{}
	var se *SendError
	switch {
	case err == nil:
	case errors.As(err, &se):
		for _, i := range se.Failed {
			failed[i] = true
		}
	default:
		for i := range n {
			failed[i] = true
		}
	}
	return failed
}

// Send sends envs in batches of at most MaxBatch entries and MaxBatchBytes,
// SendConcurrency batches at a time,
// resending only the entries SQS rejected (or all of a batch whose call
// failed), up to the configured attempts. An envelope whose message would be
// over InlinePayloadBytes is sent without its payload. It returns nil if
// every envelope was accepted, else a *SendError naming the ones that were
// not.
func (q *Queue) Send(ctx context.Context, envs []webhook.Envelope) error {
	bodies := make([]string, len(envs))
	for i := range envs {
		b, err := EncodeMessage(&envs[i])
		if err != nil {
			return &SendError{Failed: allIndexes(len(envs)), Err: err}
		}
		bodies[i] = string(b)
	}
	type sent struct {
		failed []int
		err    error
	}
	results := fanout.Map(Batches(envs, bodies), SendConcurrency, func(b []int) sent {
		failed, err := batch.Send(ctx, [][]int{b}, q.retry,
			func(ctx context.Context, pending []int) ([]int, error) {
				return q.sendBatch(ctx, envs, bodies, pending)
			})
		return sent{failed, err}
	})
	var failed []int
	var lastErr error
	for _, r := range results {
		failed = append(failed, r.failed...)
		if r.err != nil {
			lastErr = r.err
		}
	}
	if len(failed) > 0 {
		slices.Sort(failed)
		return &SendError{Failed: failed, Err: lastErr}
	}
	return nil
}

// EncodeMessage returns the message body of env: its JSON
// (webhook.Envelope.MarshalMessage), or, when that is over
// InlinePayloadBytes, the JSON of env without its payload and with
// PayloadInRecord set.
func EncodeMessage(env *webhook.Envelope) ([]byte, error) {
	b, err := env.MarshalMessage()
	if err != nil {
		return nil, fmt.Errorf("queue: %w", err)
	}
	if len(b) <= InlinePayloadBytes {
		return b, nil
	}
	lean := *env
	lean.Payload, lean.PayloadInRecord = nil, true
	b, err = lean.MarshalMessage()
	if err != nil {
		return nil, fmt.Errorf("queue: %w", err)
	}
	if len(b) > InlinePayloadBytes {
		return nil, fmt.Errorf("queue: envelope %s is %d bytes without its payload: %w", env.Key, len(b), webhook.ErrTooLarge)
	}
	return b, nil
}

// Batches splits the indexes of envs into SendMessageBatch calls of at most
// MaxBatch entries and MaxBatchBytes (bodies plus message attributes), in
// order.
func Batches(envs []webhook.Envelope, bodies []string) [][]int {
	return batch.Split(len(envs), func(i int) int {
		return len(bodies[i]) + attributesBytes(envs[i].Key)
	}, MaxBatch, MaxBatchBytes)
}

// attributesBytes is what the message attributes of a message add to its
// size as SQS counts it: each attribute's name, data type and value.
func attributesBytes(key string) int {
	return len(AttrEventKey) + len("String") + len(key) + stampBytes()
}

// sendBatch sends the pending entries in one call and returns those still to send.
func (q *Queue) sendBatch(ctx context.Context, envs []webhook.Envelope, bodies []string, pending []int) ([]int, error) {
	entries := make([]types.SendMessageBatchRequestEntry, len(pending))
	for j, i := range pending {
		entries[j] = types.SendMessageBatchRequestEntry{
			Id:          aws.String(strconv.Itoa(i)),
			MessageBody: aws.String(bodies[i]),
			MessageAttributes: Stamped(map[string]types.MessageAttributeValue{
				AttrEventKey: {DataType: aws.String("String"), StringValue: aws.String(envs[i].Key)},
			}),
			MessageGroupId: Group(envs[i].Tenant),
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

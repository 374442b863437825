package localrun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// SQSAPI is the part of the SQS client a [Poller] uses; *sqs.Client satisfies it.
type SQSAPI interface {
	ReceiveMessage(ctx context.Context, in *sqs.ReceiveMessageInput, optFns ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error)
	DeleteMessageBatch(ctx context.Context, in *sqs.DeleteMessageBatchInput, optFns ...func(*sqs.Options)) (*sqs.DeleteMessageBatchOutput, error)
}

// BatchHandler is a Lambda SQS handler with partial batch responses
// (FunctionResponseTypes: ReportBatchItemFailures).
type BatchHandler func(context.Context, events.SQSEvent) (events.SQSEventResponse, error)

// Poller drives a [BatchHandler] from a queue the way the Lambda SQS event
// source does: it long-polls for batches of up to BatchSize messages
// (gathered for at most Wait, the batching window), invokes
// the handler with an events.SQSEvent under the function's timeout, deletes
// the messages the response does not name as batch item failures, and leaves
// the others (or the whole batch when the handler fails or panics) to come
// back when their visibility timeout ends. The handler may change a
// message's visibility itself (the processor does, for its backoff). After
// maxReceiveCount receives the queue's redrive policy moves a message to the
// dead-letter queue; the local SQS server implements it (see
// shared/design/local-stack.md), so the poller does not.
type Poller struct {
	// Name names the function in logs ("processor").
	Name string
	// Client is the SQS client (required).
	Client SQSAPI
	// QueueURL is the queue (required); QueueARN and Region fill the
	// records' EventSourceARN and AWSRegion.
	QueueURL, QueueARN, Region string
	// Handle is the function (required).
	Handle BatchHandler
	// BatchSize is the most messages per invocation (1 to 10; default 10).
	BatchSize int32
	// Wait is each ReceiveMessage's long-poll wait, which is also the
	// batching window (default 1 s, the template's
	// MaximumBatchingWindowInSeconds): the local SQS server answers a long
	// poll only when it has a full batch or the wait is over, so a longer
	// wait would hold single messages back for that long.
	Wait time.Duration
	// Timeout is the function's timeout: the invocation's context deadline
	// (default 60 s).
	Timeout time.Duration
	// Concurrency is how many batches may run at once, like the event
	// source's concurrent pollers (default 1).
	Concurrency int
	// Log receives the poller's own lines (required).
	Log *slog.Logger
	// OnBatch, if set, is called with each batch before it is handled.
	OnBatch func(context.Context, events.SQSEvent)
}

// Run polls until ctx is done, then waits for the batches being handled
// (each bounded by Timeout) and returns.
func (p *Poller) Run(ctx context.Context) {
	if p.BatchSize <= 0 || p.BatchSize > 10 {
		p.BatchSize = 10
	}
	if p.Wait < time.Second {
		p.Wait = time.Second
	}
	if p.Timeout <= 0 {
		p.Timeout = 60 * time.Second
	}
	n := max(p.Concurrency, 1)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() { p.loop(ctx) })
	}
	wg.Wait()
}

// receiveMargin is added to a receive's long-poll wait for its time limit.
const receiveMargin = 10 * time.Second

func (p *Poller) loop(ctx context.Context) {
	backoff := time.Second
	for ctx.Err() == nil {
		// A bound on each receive: a connection that hangs (the SQS server
		// paused, a fault proxy) must not hold the event source forever.
		rctx, cancel := context.WithTimeout(ctx, p.Wait+receiveMargin)
		out, err := p.Client.ReceiveMessage(rctx, &sqs.ReceiveMessageInput{
			QueueUrl:            aws.String(p.QueueURL),
			MaxNumberOfMessages: p.BatchSize,
			WaitTimeSeconds:     int32(p.Wait / time.Second),
			// Both names: the local server answers only the deprecated one
			// (shared/design/local-stack.md), real SQS both.
			AttributeNames:              []types.QueueAttributeName{types.QueueAttributeNameAll},
			MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll},
			MessageAttributeNames:       []string{"All"},
		})
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			p.Log.WarnContext(ctx, p.Name+": receive from the queue failed; retrying",
				slog.String("queue", p.QueueURL), slog.Any("error", err), slog.Duration("retry_in", backoff))
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, 30*time.Second)
			continue
		}
		backoff = time.Second
		if msgs := dedupe(out.Messages); len(msgs) > 0 {
			p.invoke(ctx, msgs)
		}
	}
}

// invoke runs one batch to the end, even when ctx is cancelled meanwhile
// (a stop waits for it, as Lambda lets an invocation finish).
func (p *Poller) invoke(ctx context.Context, msgs []types.Message) {
	ev := p.Event(msgs)
	if p.OnBatch != nil {
		p.OnBatch(ctx, ev)
	}
	ictx, cancel := context.WithTimeout(context.WithoutCancel(ctx), p.Timeout)
	defer cancel()
	resp, err := p.call(ictx, ev)
	if err != nil {
		p.Log.ErrorContext(ctx, p.Name+": invocation failed; the whole batch comes back after its visibility timeout",
			slog.Int("messages", len(msgs)), slog.Any("error", err))
		return
	}
	failed := make(map[string]bool, len(resp.BatchItemFailures))
	for _, f := range resp.BatchItemFailures {
		failed[f.ItemIdentifier] = true
	}
	var del []types.DeleteMessageBatchRequestEntry
	for i, m := range msgs {
		if !failed[aws.ToString(m.MessageId)] {
			del = append(del, types.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: m.ReceiptHandle})
		}
	}
	if len(del) == 0 {
		return
	}
	dctx, dcancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer dcancel()
	out, err := p.Client.DeleteMessageBatch(dctx, &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(p.QueueURL), Entries: del})
	if err == nil && len(out.Failed) > 0 {
		err = fmt.Errorf("%d of %d not deleted: %s: %s", len(out.Failed), len(del),
			aws.ToString(out.Failed[0].Code), aws.ToString(out.Failed[0].Message))
	}
	if err != nil {
		p.Log.WarnContext(ctx, p.Name+": delete acknowledged messages failed; they come back and are absorbed as duplicates",
			slog.Any("error", err))
	}
}

// call invokes the handler, turning a panic into an error as the Lambda
// runtime turns it into a failed invocation.
func (p *Poller) call(ctx context.Context, ev events.SQSEvent) (resp events.SQSEventResponse, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("handler panicked: %v", v)
		}
	}()
	resp, err = p.Handle(ctx, ev)
	if err == nil && ctx.Err() != nil {
		err = errors.New("task timed out after " + p.Timeout.String())
	}
	return resp, err
}

// Event converts received messages into the event the Lambda SQS event
// source sends.
func (p *Poller) Event(msgs []types.Message) events.SQSEvent {
	ev := events.SQSEvent{Records: make([]events.SQSMessage, len(msgs))}
	for i, m := range msgs {
		r := events.SQSMessage{
			MessageId:              aws.ToString(m.MessageId),
			ReceiptHandle:          aws.ToString(m.ReceiptHandle),
			Body:                   aws.ToString(m.Body),
			Md5OfBody:              aws.ToString(m.MD5OfBody),
			Md5OfMessageAttributes: aws.ToString(m.MD5OfMessageAttributes),
			Attributes:             map[string]string{},
			MessageAttributes:      map[string]events.SQSMessageAttribute{},
			EventSourceARN:         p.QueueARN,
			EventSource:            "aws:sqs",
			AWSRegion:              p.Region,
		}
		for k, v := range m.Attributes {
			r.Attributes[k] = v
		}
		for k, v := range m.MessageAttributes {
			r.MessageAttributes[k] = events.SQSMessageAttribute{
				StringValue: v.StringValue, BinaryValue: v.BinaryValue, DataType: aws.ToString(v.DataType),
				StringListValues: v.StringListValues, BinaryListValues: v.BinaryListValues,
			}
		}
		ev.Records[i] = r
	}
	return ev
}

// dedupe keeps one receive of each message, the last (its receipt handle is
// the current one). The local SQS server hands out again, within the same
// long poll, a message whose visibility timeout ended during the poll; SQS
// and the Lambda event source never put a message twice in one batch.
func dedupe(msgs []types.Message) []types.Message {
	last := make(map[string]int, len(msgs))
	for i, m := range msgs {
		last[aws.ToString(m.MessageId)] = i
	}
	if len(last) == len(msgs) {
		return msgs
	}
	out := make([]types.Message, 0, len(last))
	for i, m := range msgs {
		if last[aws.ToString(m.MessageId)] == i {
			out = append(out, m)
		}
	}
	return out
}

// Sources are the running event sources of a local stack: its queues'
// pollers and its schedules ([StartSources]).
type Sources struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// StartSources runs every poller and schedule in the background until
// [Sources.Stop] or [Sources.Cancel] (or ctx's end); a failed scheduled
// run is logged to log.
func StartSources(ctx context.Context, log *slog.Logger, pollers []*Poller, schedules []*Schedule) *Sources {
	pollCtx, cancel := context.WithCancel(ctx)
	s := &Sources{cancel: cancel}
	for _, p := range pollers {
		s.wg.Go(func() { p.Run(pollCtx) })
	}
	for _, sc := range schedules {
		s.wg.Go(func() { sc.Loop(pollCtx, log) })
	}
	return s
}

// Cancel stops the sources without waiting for them.
func (s *Sources) Cancel() { s.cancel() }

// Stop stops the sources and waits for the batches being handled, unless
// hurry is closed first (a second Ctrl-C): then it says so on stderr,
// prefixed with name, and returns at once.
func (s *Sources) Stop(hurry <-chan struct{}, stderr io.Writer, name string) {
	s.cancel()
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-hurry:
		fmt.Fprintln(stderr, name+": not waiting for the batches being handled; their messages come back after their visibility timeout")
	}
}

package awstest

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// BatchHandler is a Lambda SQS handler with partial batch responses, as
// sqsbatch.Handler's Handle.
type BatchHandler func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error)

// Pump polls the queue at url with workers goroutines, as the Lambda event
// source mapping does: it runs each batch received through handle and
// deletes the messages it did not report as failed (counted in acked, when
// not nil), until ctx ends. A failed receive or delete, or an error from
// handle, fails t. Wait on the returned group after ending ctx. (The local
// server's queue-depth attributes are not reliable, so tests wait on
// acked or on their records.)
func Pump(ctx context.Context, t testing.TB, c *sqs.Client, url string, handle BatchHandler, workers int,
	acked *atomic.Int64) *sync.WaitGroup {
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for ctx.Err() == nil {
				if !pumpOnce(ctx, t, c, url, handle, acked) {
					return
				}
			}
		})
	}
	return &wg
}

// pumpOnce receives, handles and deletes one batch; it reports false when
// the receive failed.
func pumpOnce(ctx context.Context, t testing.TB, c *sqs.Client, url string, handle BatchHandler, acked *atomic.Int64) bool {
	msgs, err := Receive(ctx, c, url, 10, time.Second)
	if err != nil {
		if ctx.Err() == nil {
			t.Errorf("receive: %v", err)
		}
		return false
	}
	if len(msgs) == 0 {
		return true
	}
	var ev events.SQSEvent
	for _, m := range msgs {
		ev.Records = append(ev.Records, events.SQSMessage{MessageId: aws.ToString(m.MessageId),
			ReceiptHandle: aws.ToString(m.ReceiptHandle), Body: aws.ToString(m.Body), Attributes: m.Attributes})
	}
	resp, err := handle(context.WithoutCancel(ctx), ev)
	if err != nil {
		t.Errorf("batch handler returned an error: %v", err)
	}
	failed := map[string]bool{}
	for _, f := range resp.BatchItemFailures {
		failed[f.ItemIdentifier] = true
	}
	var del []sqstypes.DeleteMessageBatchRequestEntry
	for i, m := range msgs {
		if !failed[aws.ToString(m.MessageId)] {
			del = append(del, sqstypes.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: m.ReceiptHandle})
		}
	}
	if len(del) == 0 {
		return true
	}
	if _, err := c.DeleteMessageBatch(context.WithoutCancel(ctx), &sqs.DeleteMessageBatchInput{QueueUrl: &url, Entries: del}); err != nil {
		t.Errorf("delete: %v", err)
	}
	if acked != nil {
		acked.Add(int64(len(del)))
	}
	return true
}

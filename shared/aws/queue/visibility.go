package queue

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/hookwall/hookwall/shared/base/webhook"
)

// ChangeVisibility makes the message with receiptHandle visible again after
// d, rounded up to whole seconds and capped at webhook.MaxQueueDelay (d <= 0: at once).
func (q *Queue) ChangeVisibility(ctx context.Context, receiptHandle string, d time.Duration) error {
	_, err := q.client.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{
		QueueUrl:          &q.url,
		ReceiptHandle:     &receiptHandle,
		VisibilityTimeout: VisibilitySeconds(d),
	})
	if err != nil {
		return fmt.Errorf("queue: change visibility: %w", err)
	}
	return nil
}

// VisibilitySeconds converts d to the whole seconds SQS takes: rounded up,
// between 0 and webhook.MaxQueueDelay.
func VisibilitySeconds(d time.Duration) int32 {
	if d <= 0 {
		return 0
	}
	d = min(d, webhook.MaxQueueDelay)
	return int32((d + time.Second - 1) / time.Second)
}

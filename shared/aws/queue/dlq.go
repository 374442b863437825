package queue

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/hookwall/hookwall/shared/base/webhook"
)

// AttrReason is the message attribute carrying why a message was sent to
// the dead-letter queue.
const AttrReason = "hookwall-reason"

// maxReason bounds the reason attribute (SQS caps a whole message at 256 KiB).
const maxReason = 1024

// SendDeadLetter sends body, the original message body, to this queue (the
// dead-letter queue) with the event key (if known) and the reason as message
// attributes, in the message group of the key's tenant ([Group]; none for a
// message without a key). The processor calls it for permanent failures, exhausted
// attempts and malformed messages, then acknowledges the original.
func (q *Queue) SendDeadLetter(ctx context.Context, key string, body []byte, reason string) error {
	reason = webhook.CleanText(reason, maxReason)
	if reason == "" {
		reason = "unspecified"
	}
	attrs := Stamped(map[string]types.MessageAttributeValue{
		AttrReason: {DataType: aws.String("String"), StringValue: aws.String(reason)},
	})
	if key != "" {
		attrs[AttrEventKey] = types.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(key)}
	}
	if len(body) == 0 {
		body = []byte("{}") // SQS rejects an empty body
	}
	_, err := q.client.SendMessage(ctx, &sqs.SendMessageInput{
		QueueUrl:          &q.url,
		MessageBody:       aws.String(string(body)),
		MessageAttributes: attrs,
		MessageGroupId:    keyGroup(key),
	})
	if err != nil {
		return fmt.Errorf("queue: send dead letter %s: %w", key, err)
	}
	return nil
}

// keyGroup is the message group of an event key's tenant ([Group],
// [webhook.MessageGroup]); nil for a message without a valid key.
func keyGroup(key string) *string {
	return Group(webhook.MessageGroup("", key))
}

package queue

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/hookwall/hookwall/shared/base/format"
	"github.com/hookwall/hookwall/shared/base/release"
)

// Stamped adds the message format version (format.MessageAttrVersion, a
// Number) and the release (format.MessageAttrRelease) to attrs, which every
// message Hookwall sends carries, and returns attrs.
func Stamped(attrs map[string]types.MessageAttributeValue) map[string]types.MessageAttributeValue {
	attrs[format.MessageAttrVersion] = types.MessageAttributeValue{DataType: aws.String("Number"),
		StringValue: aws.String(strconv.Itoa(format.Written(format.Message)))}
	attrs[format.MessageAttrRelease] = types.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(release.Version)}
	return attrs
}

// stampBytes is what the stamps add to a message's size as SQS counts it
// (names, data types and values).
func stampBytes() int {
	return len(format.MessageAttrVersion) + len("Number") + len(strconv.Itoa(format.Written(format.Message))) +
		len(format.MessageAttrRelease) + len("String") + len(release.Version)
}

// Resend sends m, received from this queue, to it again: its body, its
// message attributes as they are (a message put off keeps its own stamps)
// and its group, delayed by delay (at most 15 minutes). It puts off a
// message of a newer format (sqsbatch.DeferNewer).
func (q *Queue) Resend(ctx context.Context, m events.SQSMessage, delay time.Duration) error {
	attrs := make(map[string]types.MessageAttributeValue, len(m.MessageAttributes))
	for name, a := range m.MessageAttributes {
		attrs[name] = types.MessageAttributeValue{DataType: aws.String(a.DataType), StringValue: a.StringValue, BinaryValue: a.BinaryValue}
	}
	var group *string
	if g := m.Attributes["MessageGroupId"]; g != "" {
		group = aws.String(g)
	}
	_, err := q.client.SendMessage(ctx, &sqs.SendMessageInput{
		QueueUrl:          &q.url,
		MessageBody:       aws.String(m.Body),
		MessageAttributes: attrs,
		MessageGroupId:    group,
		DelaySeconds:      int32(min(delay, 15*time.Minute) / time.Second),
	})
	if err != nil {
		return fmt.Errorf("queue: resend message %s: %w", m.MessageId, err)
	}
	return nil
}

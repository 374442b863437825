package awstest

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// Drain receives every message now visible in the queue, until a receive
// comes back empty, and deletes none: they stay hidden for the queue's
// visibility timeout.
func Drain(t testing.TB, c *sqs.Client, url string) []sqstypes.Message {
	t.Helper()
	var all []sqstypes.Message
	for {
		msgs, err := Receive(context.Background(), c, url, 10, 0)
		if err != nil {
			t.Fatalf("receive from %s: %v", url, err)
		}
		if len(msgs) == 0 {
			return all
		}
		all = append(all, msgs...)
	}
}

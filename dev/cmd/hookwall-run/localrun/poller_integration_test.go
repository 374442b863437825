//go:build integration

package localrun

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/hookwall/hookwall/shared/aws/awstest"
)

// The poller drives a handler as the Lambda SQS event source does, on the
// local SQS server: acknowledged messages are deleted and never come back;
// a batch item failure comes back after its visibility timeout, and after
// maxReceiveCount receives the server's redrive policy moves it to the
// dead-letter queue (the local server implements redrive; the runner does
// not emulate it).
func TestPollerLikeTheEventSource(t *testing.T) {
	c := awstest.SQS(t)
	qs := awstest.NewQueues(t, c, 2, 2*time.Second) // longer than a poll (1 s)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, body := range []string{`{"key":"a"}`, `{"key":"b"}`, `{"key":"c"}`} {
		if _, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(qs.URL), MessageBody: aws.String(body)}); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	seen := map[string][]string{} // key → ApproximateReceiveCount of each receive
	p := &Poller{
		Name: "test", Client: c, QueueURL: qs.URL, QueueARN: "arn:aws:sqs:us-east-1:000000000000:q", Region: "us-east-1",
		Timeout: 10 * time.Second, Log: discard(),
		Handle: func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
			if _, ok := ctx.Deadline(); !ok {
				t.Error("no deadline on the invocation")
			}
			resp := events.SQSEventResponse{}
			mu.Lock()
			defer mu.Unlock()
			for _, r := range ev.Records {
				if r.EventSource != "aws:sqs" || r.ReceiptHandle == "" {
					t.Errorf("record %+v", r)
				}
				k := envelopeKey(r.Body)
				seen[k] = append(seen[k], r.Attributes["ApproximateReceiveCount"])
				if k == "b" {
					resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: r.MessageId})
				}
			}
			return resp, nil
		},
	}
	done := make(chan struct{})
	go func() { p.Run(ctx); close(done) }()

	deadline := time.Now().Add(30 * time.Second)
	var dead []string
	for len(dead) == 0 && time.Now().Before(deadline) {
		msgs, err := awstest.Receive(ctx, c, qs.DLQURL, 10, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs {
			dead = append(dead, envelopeKey(aws.ToString(m.Body)))
		}
	}
	cancel()
	<-done
	mu.Lock()
	defer mu.Unlock()
	if len(dead) != 1 || dead[0] != "b" {
		t.Fatalf("dead-letter queue holds %v, want [b] (received: %v)", dead, seen)
	}
	if len(seen["a"]) != 1 || len(seen["c"]) != 1 {
		t.Errorf("acknowledged messages came back: %v", seen)
	}
	if got := seen["b"]; len(got) != 2 || got[0] != "1" || got[1] != "2" {
		t.Errorf("b received with counts %v, want [1 2] (maxReceiveCount 2)", got)
	}
}

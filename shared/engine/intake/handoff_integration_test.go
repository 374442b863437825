//go:build integration

package intake

import (
	"context"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/hookwall/hookwall/shared/aws/awstest"
	"github.com/hookwall/hookwall/shared/aws/queue"
	"github.com/hookwall/hookwall/shared/engine/handoff"
	"github.com/hookwall/hookwall/shared/state/store"
)

// The hand-off cache never turns a first delivery into a duplicate, on
// DynamoDB Local and the SQS server: the first hand-off's SendMessageBatch
// is held past the budget (not applied, or applied with its answer lost),
// the delivery gets 503 and nothing is remembered; the platform's retry
// claims and sends the event, and only then are its duplicates answered
// with no DynamoDB call.
func TestIntegrationHandOffCacheAfterAFailedHandOff(t *testing.T) {
	for name, fault := range map[string]awstest.Fault{"send lost": awstest.DropThenHang, "send applied, answer lost": awstest.ApplyThenHang} {
		t.Run(name, func(t *testing.T) {
			var ops awstest.OpCounter
			db := awstest.DynamoDB(t, ops.DynamoDBOption)
			table, err := store.New(store.Config{Client: db, TableName: awstest.NewTable(t, db)})
			if err != nil {
				t.Fatal(err)
			}
			admin := awstest.SQS(t)
			queues := awstest.NewQueues(t, admin, 5, 60*time.Second)
			target := os.Getenv("AWS_ENDPOINT_URL_SQS")
			if target == "" {
				target = awstest.DefaultSQSEndpoint
			}
			proxy := awstest.NewHoldProxy(t, target)
			viaProxy := sqs.NewFromConfig(awstest.Config(), func(o *sqs.Options) {
				o.BaseEndpoint = aws.String(proxy.URL)
				o.RetryMaxAttempts = 1
			})
			q, err := queue.New(queue.Config{Client: viaProxy, URL: queues.URL})
			if err != nil {
				t.Fatal(err)
			}
			h := newTestHandler(t, table, q, func(c *Config) {
				c.Budget, c.HandedOff = 500*time.Millisecond, handoff.New(1<<20)
			})
			body := lineBody("01JHANDOFF" + time.Now().Format("150405.000000"))
			deliver := func() int {
				return h.Receive(context.Background(), lineRequest(body, lineSign(body)), Meta{}).Status
			}

			proxy.SetRule(func(op string, n int) awstest.Fault {
				if op == "SendMessageBatch" && n == 0 {
					return fault
				}
				return awstest.Pass
			})
			if got := deliver(); got != http.StatusServiceUnavailable {
				t.Fatalf("delivery whose hand-off fails: status %d, want 503", got)
			}
			if n := h.cfg.HandedOff.Len(); n != 0 {
				t.Fatalf("a failed hand-off was remembered (%d entries)", n)
			}
			ops.Take()
			// The platform retries. A claim undone by the failed delivery is
			// claimed anew; one whose undo did not land is inside the grace
			// and gets 503 until the grace has passed.
			deadline := time.Now().Add(h.cfg.ReenqueueGrace + 5*time.Second)
			for code := deliver(); code != http.StatusOK; code = deliver() {
				if code < 500 || time.Now().After(deadline) {
					t.Fatalf("retry: status %d", code)
				}
				time.Sleep(200 * time.Millisecond)
			}
			if ops.Take()["PutItem"] == 0 { // the claim
				t.Fatal("the retry made no claim: the cache answered a first delivery")
			}
			msgs := awstest.Drain(t, admin, queues.URL)
			want := 1
			if fault == awstest.ApplyThenHang {
				want = 2 // the lost answer's message is on the queue too; the processor absorbs it
			}
			if len(msgs) != want {
				t.Fatalf("messages = %d, want %d", len(msgs), want)
			}
			if got := deliver(); got != http.StatusOK {
				t.Fatalf("duplicate: status %d", got)
			}
			if got := ops.Take(); len(got) != 0 {
				t.Errorf("duplicate of a handed-off event made DynamoDB calls %v, want none", got)
			}
		})
	}
}

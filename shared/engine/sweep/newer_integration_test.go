//go:build integration

package sweep_test

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/hookwall/hookwall/shared/aws/awstest"
	"github.com/hookwall/hookwall/shared/aws/sqsbatch"
	"github.com/hookwall/hookwall/shared/base/format"
	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/base/webhook/webhooktest"
	"github.com/hookwall/hookwall/shared/engine/compensate"
	"github.com/hookwall/hookwall/shared/engine/dispatch"
	"github.com/hookwall/hookwall/shared/engine/process"
	"github.com/hookwall/hookwall/shared/engine/sweep"
	"github.com/hookwall/hookwall/shared/state/store"
)

// Data of a format newer than today's code knows (written through the
// format test hook as the next release would write it: records, a queue
// message, a dead letter) is left alone and counted by today's processor,
// compensator and sweeper: nothing handled, failed, dead-lettered or
// compensated, the messages put off (re-sent delayed) rather than failed
// towards SQS's redrive. Code that knows the newer version then processes
// the event once.
func TestNewerFormatsAreLeftForTheNewerCode(t *testing.T) {
	ctx := context.Background()
	clock := webhooktest.NewClock(time.Now())
	st := newLocalStack(t, clock, 2)
	table, sc, qs, mainQ, dlq := st.table, st.sqs, st.queues, st.main, st.dlq
	ran := &calls{n: map[string]int{}, data: map[string]follow{}}
	reg := process.NewRegistry()
	process.Handle(reg, "crm.lead", followType, func(_ context.Context, ev *process.Event[follow]) error {
		ran.add(ev.Key, ev.Data)
		return nil
	})
	log := slog.New(slog.DiscardHandler)
	d, err := dispatch.New(dispatch.Config{Registry: reg, Store: table, DLQ: dlq, Kernel: dispatch.Kernel{Queue: mainQ, Now: clock.Now}})
	if err != nil {
		t.Fatal(err)
	}
	processor := sqsbatch.New(d, 4).DeferNewer(mainQ, log, nil)
	comp, err := compensate.New(compensate.Config{Registry: reg, Store: table, Requeue: mainQ, Kernel: compensate.Kernel{Queue: dlq, Now: clock.Now}})
	if err != nil {
		t.Fatal(err)
	}
	compensator := sqsbatch.New(comp, 4).DeferNewer(dlq, log, nil)
	sw, err := sweep.New(sweep.Config{Store: table, Queue: mainQ, DLQ: dlq, Now: clock.Now, Logger: log})
	if err != nil {
		t.Fatal(err)
	}

	// The next release writes: a record and its message, a record left
	// without a message (its receiver crashed), and a dead letter.
	next := format.ItemVersion + 1
	restoreItem := format.Override(format.Item, next, next)
	restoreMsg := format.Override(format.Message, format.MessageVersion+1, format.MessageVersion+1)
	const sent, crashed, dead = "line#t1#next-sent", "line#t1#next-crashed", "line#t1#next-dead"
	var env webhook.Envelope
	for _, key := range []string{sent, crashed, dead} {
		res, err := table.Claim(ctx, store.NewEvent{Key: key, Provider: "line", Tenant: "t1", EventType: followType.Name,
			PayloadHash: "h", Payload: []byte(`{"userId":"U1"}`)}, 7*24*time.Hour)
		if err != nil || res.Outcome != store.Claimed {
			t.Fatalf("claim %s: %v %v", key, res.Outcome, err)
		}
		if key == sent {
			env = res.Record.Envelope()
		}
	}
	if err := mainQ.Send(ctx, []webhook.Envelope{env}); err != nil {
		t.Fatal(err)
	}
	if err := dlq.SendDeadLetter(ctx, dead, []byte(`{"key":"`+dead+`","provider":"line","tenant":"t1","type":"follow"}`), "a test"); err != nil {
		t.Fatal(err)
	}
	restoreMsg()
	restoreItem()

	newerMsgs, newerItems := format.NewerCount(format.Message), format.NewerCount(format.Item)
	// Today's processor and compensator: the messages are put off, acknowledged.
	batch := receiveAll(t, sc, qs.URL, 1)
	if resp, _ := processor.Handle(ctx, batch); len(resp.BatchItemFailures) != 0 {
		t.Errorf("processor: failures %v, want none (put off)", resp.BatchItemFailures)
	}
	deadBatch := receiveAll(t, sc, qs.DLQURL, 1)
	if resp, _ := compensator.Handle(ctx, deadBatch); len(resp.BatchItemFailures) != 0 {
		t.Errorf("compensator: failures %v, want none (put off)", resp.BatchItemFailures)
	}
	deleteAll(t, sc, qs.URL, batch)
	deleteAll(t, sc, qs.DLQURL, deadBatch)
	if got := format.NewerCount(format.Message) - newerMsgs; got != 2 {
		t.Errorf("newer messages counted: %d, want 2", got)
	}
	for _, url := range []string{qs.URL, qs.DLQURL} {
		if n := delayed(t, sc, url); n != 1 {
			t.Errorf("%s: %d delayed messages, want the one put off", url, n)
		}
	}

	// Today's sweeper, an hour later: every newer record is due and stuck,
	// and left alone.
	clock.Advance(time.Hour)
	rep, err := sw.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Newer != 3 || rep.Requeued != 0 || rep.DeadLettered != 0 || rep.PayloadMissing != 0 {
		t.Errorf("sweep: %+v; want 3 newer, nothing requeued or dead-lettered", rep)
	}
	if got := format.NewerCount(format.Item) - newerItems; got != 3 {
		t.Errorf("newer records counted: %d, want 3", got)
	}
	for _, key := range []string{sent, crashed, dead} {
		rec, err := table.Get(ctx, key)
		if err != nil || rec == nil || rec.Status != webhook.StatusReceived || rec.Format != int64(next) {
			t.Errorf("%s after today's code: %+v, %v; want RECEIVED, format %d, untouched", key, rec, err, next)
		}
	}
	if got := ran.get(sent); got != 0 {
		t.Errorf("today's code ran the newer event %d times", got)
	}

	// The newer release's processor gets the put-off message: it runs once.
	defer format.Override(format.Item, 0, next)()
	defer format.Override(format.Message, 0, format.MessageVersion+1)()
	for range 2 { // a redelivery changes nothing
		if resp, _ := processor.Handle(ctx, batch); len(resp.BatchItemFailures) != 0 {
			t.Errorf("newer processor: failures %v", resp.BatchItemFailures)
		}
	}
	if got := ran.get(sent); got != 1 {
		t.Errorf("the newer code ran the event %d times, want 1", got)
	}
	if rec, _ := table.Get(ctx, sent); rec == nil || rec.Status != webhook.StatusSucceeded {
		t.Errorf("after the newer processor: %+v, want SUCCEEDED", rec)
	}
	// The newer sweeper takes the crashed claim on (it re-enqueues it).
	rep, err = sw.Run(ctx)
	if err != nil || rep.Newer != 0 || rep.Requeued < 1 {
		t.Errorf("newer sweep: %+v, %v; want nothing left as newer and the crashed claim requeued", rep, err)
	}
}

// receiveAll receives want messages from url, with their attributes, as a
// Lambda SQS event.
func receiveAll(t *testing.T, c *sqs.Client, url string, want int) events.SQSEvent {
	t.Helper()
	var ev events.SQSEvent
	deadline := time.Now().Add(10 * time.Second)
	for len(ev.Records) < want && time.Now().Before(deadline) {
		msgs, err := awstest.Receive(context.Background(), c, url, 10, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs {
			r := events.SQSMessage{MessageId: aws.ToString(m.MessageId), ReceiptHandle: aws.ToString(m.ReceiptHandle),
				Body: aws.ToString(m.Body), Attributes: m.Attributes, MessageAttributes: map[string]events.SQSMessageAttribute{}}
			for name, a := range m.MessageAttributes {
				r.MessageAttributes[name] = events.SQSMessageAttribute{DataType: aws.ToString(a.DataType), StringValue: a.StringValue}
			}
			ev.Records = append(ev.Records, r)
		}
	}
	if len(ev.Records) != want {
		t.Fatalf("%s: received %d messages, want %d", url, len(ev.Records), want)
	}
	return ev
}

// deleteAll deletes the batch's messages, as Lambda does after an answer
// without failures.
func deleteAll(t *testing.T, c *sqs.Client, url string, ev events.SQSEvent) {
	t.Helper()
	for _, r := range ev.Records {
		if _, err := c.DeleteMessage(context.Background(), &sqs.DeleteMessageInput{QueueUrl: &url, ReceiptHandle: aws.String(r.ReceiptHandle)}); err != nil {
			t.Fatalf("delete: %v", err)
		}
	}
}

// delayed is the queue's ApproximateNumberOfMessagesDelayed.
func delayed(t *testing.T, c *sqs.Client, url string) int {
	t.Helper()
	out, err := c.GetQueueAttributes(context.Background(), &sqs.GetQueueAttributesInput{QueueUrl: &url,
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameApproximateNumberOfMessagesDelayed}})
	if err != nil {
		t.Fatal(err)
	}
	var n int
	fmt.Sscan(out.Attributes[string(sqstypes.QueueAttributeNameApproximateNumberOfMessagesDelayed)], &n)
	return n
}

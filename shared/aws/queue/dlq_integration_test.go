//go:build integration

package queue_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/hookwall/hookwall/shared/aws/awstest"
	"github.com/hookwall/hookwall/shared/aws/queue"
	"github.com/hookwall/hookwall/shared/base/webhook"
)

func TestDeadLetterCarriesKeyAndReason(t *testing.T) {
	c := awstest.SQS(t)
	qs := awstest.NewQueues(t, c, 5, 30*time.Second)
	dlq, err := queue.New(queue.Config{Client: c, URL: qs.DLQURL})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := dlq.SendDeadLetter(ctx, "line#t1#e1", []byte(`{"key":"line#t1#e1"}`), "permanent: blocked"); err != nil {
		t.Fatal(err)
	}
	if err := dlq.SendDeadLetter(ctx, "", []byte(`{`), "malformed envelope"); err != nil {
		t.Fatal(err)
	}
	msgs, err := awstest.Receive(ctx, c, qs.DLQURL, 10, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, m := range msgs {
		got[aws.ToString(m.Body)] = aws.ToString(m.MessageAttributes[queue.AttrReason].StringValue) + "|" +
			aws.ToString(m.MessageAttributes[queue.AttrEventKey].StringValue)
	}
	want := map[string]string{`{"key":"line#t1#e1"}`: "permanent: blocked|line#t1#e1", `{`: "malformed envelope|"}
	if len(got) != 2 || got[`{"key":"line#t1#e1"}`] != want[`{"key":"line#t1#e1"}`] || got[`{`] != want[`{`] {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestChangeVisibility(t *testing.T) {
	c := awstest.SQS(t)
	qs := awstest.NewQueues(t, c, 5, 30*time.Second)
	q, _ := queue.New(queue.Config{Client: c, URL: qs.URL})
	ctx := context.Background()
	if err := q.Send(ctx, []webhook.Envelope{{Key: "k"}}); err != nil {
		t.Fatal(err)
	}
	msgs, err := awstest.Receive(ctx, c, qs.URL, 1, time.Second)
	if err != nil || len(msgs) != 1 {
		t.Fatalf("receive: %v (%d)", err, len(msgs))
	}
	if again, _ := awstest.Receive(ctx, c, qs.URL, 1, 0); len(again) != 0 {
		t.Fatal("visible again inside the 30s visibility timeout")
	}
	if err := q.ChangeVisibility(ctx, aws.ToString(msgs[0].ReceiptHandle), 1500*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	again, err := awstest.Receive(ctx, c, qs.URL, 1, 5*time.Second)
	if err != nil || len(again) != 1 {
		t.Fatalf("not visible again after the 2s visibility: %v (%d)", err, len(again))
	}
	if el := time.Since(start); el < time.Second {
		t.Errorf("visible again after %v, want about 2s (1.5s rounded up)", el)
	}
	if err := q.ChangeVisibility(ctx, "bogus", time.Second); err == nil {
		t.Error("bogus receipt handle: no error")
	}
}

// Every message to the events queue and the dead-letter queue carries its
// tenant as its message group (SQS fair queues): Send's, SendDeadLetter's,
// and a move between queues keeps it (GroupOf).
func TestMessagesCarryTheirTenantsGroup(t *testing.T) {
	c := awstest.SQS(t)
	qs := awstest.NewQueues(t, c, 5, 30*time.Second)
	q, _ := queue.New(queue.Config{Client: c, URL: qs.URL})
	dlq, _ := queue.New(queue.Config{Client: c, URL: qs.DLQURL})
	ctx := context.Background()
	if err := q.Send(ctx, []webhook.Envelope{{Key: "line#acme#e1", Tenant: "acme"}, {Key: "line#beta#e2", Tenant: "beta"}}); err != nil {
		t.Fatal(err)
	}
	if err := dlq.SendDeadLetter(ctx, "wecom#gamma.cn#e3", []byte(`{"key":"wecom#gamma.cn#e3"}`), "permanent"); err != nil {
		t.Fatal(err)
	}
	groups := map[string]string{}
	for _, url := range []string{qs.URL, qs.DLQURL} {
		msgs, err := awstest.Receive(ctx, c, url, 10, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs {
			k := aws.ToString(m.MessageAttributes[queue.AttrEventKey].StringValue)
			groups[k] = m.Attributes["MessageGroupId"]
			if g := aws.ToString(queue.GroupOf(m)); g != groups[k] {
				t.Errorf("%s: GroupOf %q, want its group %q", k, g, groups[k])
			}
		}
	}
	want := map[string]string{"line#acme#e1": "acme", "line#beta#e2": "beta", "wecom#gamma.cn#e3": "gamma.cn"}
	for k, g := range want {
		if groups[k] != g {
			t.Errorf("%s: message group %q, want %q (all: %v)", k, groups[k], g, groups)
		}
	}
}

package sqsbatch

import (
	"context"
	"slices"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/hookwall/hookwall/shared/aws/queue"
	"github.com/hookwall/hookwall/shared/internal/kernel"
)

func TestResponseReportsOnlyUnacknowledged(t *testing.T) {
	resp := Response([]kernel.Result{
		{MessageID: "a", Ack: true}, {MessageID: "b"}, {MessageID: "c", Ack: true}, {MessageID: "d"},
	})
	var got []string
	for _, f := range resp.BatchItemFailures {
		got = append(got, f.ItemIdentifier)
	}
	if len(got) != 2 || got[0] != "b" || got[1] != "d" {
		t.Errorf("got failures %v, want [b d]", got)
	}
	if all := Response([]kernel.Result{{MessageID: "a", Ack: true}}); all.BatchItemFailures == nil || len(all.BatchItemFailures) != 0 {
		t.Errorf("all acked: got %#v, want an empty, non-nil list", all.BatchItemFailures)
	}
	if none := Response(nil); none.BatchItemFailures == nil {
		t.Error("no results: got a nil list, want an empty one")
	}
}

func TestMessages(t *testing.T) {
	ms := Messages(events.SQSEvent{Records: []events.SQSMessage{{MessageId: "m", ReceiptHandle: "rh", Body: `{"key":"k"}`}}})
	if len(ms) != 1 || ms[0].MessageID != "m" || ms[0].ReceiptHandle != "rh" || string(ms[0].Body) != `{"key":"k"}` {
		t.Errorf("got %+v", ms)
	}
}

func TestHandlerPassesTheBatchAndItsConcurrency(t *testing.T) {
	var gotN int
	var gotIDs []string
	h := New(batchFunc(func(_ context.Context, ms []kernel.Message, n int) []kernel.Result {
		gotN = n
		out := make([]kernel.Result, len(ms))
		for i, m := range ms {
			gotIDs = append(gotIDs, m.MessageID)
			out[i] = kernel.Result{MessageID: m.MessageID, Ack: m.MessageID == "x"}
		}
		return out
	}), 0)
	resp, err := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{{MessageId: "x"}, {MessageId: "y"}}})
	if err != nil || len(resp.BatchItemFailures) != 1 || resp.BatchItemFailures[0].ItemIdentifier != "y" {
		t.Errorf("got %+v, %v; want y to come back", resp, err)
	}
	if gotN != DefaultConcurrency || !slices.Equal(gotIDs, []string{"x", "y"}) {
		t.Errorf("got concurrency %d and messages %v, want %d and [x y]", gotN, gotIDs, DefaultConcurrency)
	}
}

type batchFunc func(ctx context.Context, ms []kernel.Message, n int) []kernel.Result

func (f batchFunc) Batch(ctx context.Context, ms []kernel.Message, n int) []kernel.Result {
	return f(ctx, ms, n)
}

func TestMessagesCarryTheirGroup(t *testing.T) {
	key := "line#beta#ev1"
	ms := Messages(events.SQSEvent{Records: []events.SQSMessage{
		{MessageId: "a", Attributes: map[string]string{"MessageGroupId": "acme"}},
		{MessageId: "b", MessageAttributes: map[string]events.SQSMessageAttribute{queue.AttrEventKey: {StringValue: &key, DataType: "String"}}},
		{MessageId: "c"},
	}})
	if got := []string{ms[0].Group, ms[1].Group, ms[2].Group}; !slices.Equal(got, []string{"acme", "beta", ""}) {
		t.Errorf("groups %q, want [acme beta \"\"]", got)
	}
}

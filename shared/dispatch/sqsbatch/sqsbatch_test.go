package sqsbatch

import (
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/hookwall/hookwall/shared/dispatch"
)

func TestResponseReportsOnlyUnacknowledged(t *testing.T) {
	resp := Response([]dispatch.Result{
		{MessageID: "a", Ack: true}, {MessageID: "b"}, {MessageID: "c", Ack: true}, {MessageID: "d"},
	})
	var got []string
	for _, f := range resp.BatchItemFailures {
		got = append(got, f.ItemIdentifier)
	}
	if len(got) != 2 || got[0] != "b" || got[1] != "d" {
		t.Errorf("got failures %v, want [b d]", got)
	}
	if all := Response([]dispatch.Result{{MessageID: "a", Ack: true}}); all.BatchItemFailures == nil || len(all.BatchItemFailures) != 0 {
		t.Errorf("all acked: got %#v, want an empty, non-nil list", all.BatchItemFailures)
	}
}

func TestDeliveries(t *testing.T) {
	ds := Deliveries(events.SQSEvent{Records: []events.SQSMessage{{MessageId: "m", ReceiptHandle: "rh", Body: `{"key":"k"}`}}})
	if len(ds) != 1 || ds[0].MessageID != "m" || ds[0].ReceiptHandle != "rh" || string(ds[0].Body) != `{"key":"k"}` {
		t.Errorf("got %+v", ds)
	}
}

func TestResponseOfAnyResultType(t *testing.T) {
	type res struct {
		id   string
		done bool
	}
	resp := ResponseOf([]res{{"x", false}, {"y", true}}, func(r res) (string, bool) { return r.id, r.done })
	if len(resp.BatchItemFailures) != 1 || resp.BatchItemFailures[0].ItemIdentifier != "x" {
		t.Errorf("got %+v, want [x]", resp.BatchItemFailures)
	}
	if none := ResponseOf([]res(nil), func(r res) (string, bool) { return r.id, r.done }); none.BatchItemFailures == nil {
		t.Error("no results: got a nil list, want an empty one")
	}
}

package sqsbatch

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/hookwall/hookwall/shared/base/format"
	"github.com/hookwall/hookwall/shared/internal/kernel"
)

type resendFunc func(m events.SQSMessage, delay time.Duration) error

func (f resendFunc) Resend(_ context.Context, m events.SQSMessage, delay time.Duration) error {
	return f(m, delay)
}

type counter struct{ n map[string]int }

func (c *counter) Count(name string, n int) {
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[name] += n
}

func versioned(id string, v int) events.SQSMessage {
	s := strconv.Itoa(v)
	return events.SQSMessage{MessageId: id, Body: `{"key":"` + id + `"}`, Attributes: map[string]string{"MessageGroupId": "acme"},
		MessageAttributes: map[string]events.SQSMessageAttribute{format.MessageAttrVersion: {DataType: "Number", StringValue: &s}}}
}

func TestNewerMessagesArePutOffNotHandled(t *testing.T) {
	var handled, resent []string
	engine := batchFunc(func(_ context.Context, ms []kernel.Message, _ int) []kernel.Result {
		out := make([]kernel.Result, len(ms))
		for i, m := range ms {
			handled = append(handled, m.MessageID)
			out[i] = kernel.Result{MessageID: m.MessageID, Ack: true}
		}
		return out
	})
	fail := false
	counted := &counter{}
	h := New(engine, 1).DeferNewer(resendFunc(func(m events.SQSMessage, delay time.Duration) error {
		if fail {
			return errors.New("down")
		}
		if delay != DeferDelay || Version(m) != format.MessageVersion+1 {
			t.Errorf("resent %+v with delay %v", m, delay)
		}
		resent = append(resent, m.Body)
		return nil
	}), nil, counted)
	before := format.NewerCount(format.Message)
	next := format.MessageVersion + 1
	ev := events.SQSEvent{Records: []events.SQSMessage{
		versioned("new1", next), {MessageId: "old"}, versioned("cur", format.MessageVersion), versioned("new2", next),
	}}
	resp, _ := h.Handle(context.Background(), ev)
	if len(resp.BatchItemFailures) != 0 || !slices.Equal(handled, []string{"old", "cur"}) || len(resent) != 2 {
		t.Errorf("failures %v, handled %v, resent %v; want none, [old cur], 2", resp.BatchItemFailures, handled, resent)
	}
	if got := format.NewerCount(format.Message) - before; got != 2 || counted.n[format.MetricNewer] != 2 {
		t.Errorf("counted %d newer messages (metric %d), want 2", got, counted.n[format.MetricNewer])
	}

	fail, handled = true, nil
	resp, _ = h.Handle(context.Background(), ev)
	if len(resp.BatchItemFailures) != 2 || len(handled) != 2 {
		t.Errorf("resend failing: failures %v, handled %v; want the two newer ones back, two handled", resp.BatchItemFailures, handled)
	}

	defer format.Override(format.Message, 0, next)() // the newer code handles them
	handled = nil
	if resp, _ = h.Handle(context.Background(), ev); len(resp.BatchItemFailures) != 0 || len(handled) != 4 {
		t.Errorf("knowing version %d: failures %v, handled %v", next, resp.BatchItemFailures, handled)
	}
}

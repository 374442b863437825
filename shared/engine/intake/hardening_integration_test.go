//go:build integration

package intake

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/smithy-go/middleware"

	"github.com/hookwall/hookwall/shared/aws/awstest"
	"github.com/hookwall/hookwall/shared/aws/queue"
	"github.com/hookwall/hookwall/shared/base/webhook/webhooktest"
	"github.com/hookwall/hookwall/shared/state/store"
)

// faultStack is a receiver whose DynamoDB client goes through a HoldProxy
// to DynamoDB Local, on a settable clock shared by handler and store, with
// a short budget so that held requests time out quickly.
type faultStack struct {
	*stack
	proxy *awstest.HoldProxy
	clock *webhooktest.Clock
	h     *Handler       // the short budget, for the faulted delivery
	retry *Handler       // the same on a generous budget, for the platform's retries
	sent  map[string]int // messages consumed, per key
}

const faultBudget = 300 * time.Millisecond

func newFaultStack(t *testing.T) *faultStack {
	t.Helper()
	s := newStack(t)
	target := os.Getenv("AWS_ENDPOINT_URL_DYNAMODB")
	if target == "" {
		target = awstest.DefaultDynamoDBEndpoint
	}
	proxy := awstest.NewHoldProxy(t, target)
	db := awstest.DynamoDB(t, func(o *dynamodb.Options) {
		o.BaseEndpoint = aws.String(proxy.URL)
		o.RetryMaxAttempts = 1
	})
	clock := webhooktest.NewClock(time.Now())
	table, err := store.New(store.Config{Client: db, TableName: s.table.Name(), Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	q, err := queue.New(queue.Config{Client: s.sqs, URL: s.queues.URL})
	if err != nil {
		t.Fatal(err)
	}
	h := newTestHandler(t, table, q, func(c *Config) {
		c.Budget, c.UndoTimeout, c.Now = faultBudget, faultBudget, clock.Now
	})
	// The retries come after the fault is lifted. On a loaded machine a
	// 300 ms budget can let an SQS send time out after it was applied, and
	// a retry past the grace then sends once more: allowed by the design
	// (the processor absorbs it), but not what these tests count. The
	// retries get the longest budget the same grace allows (the grace must
	// exceed the budget), so the take-over still happens as before.
	retry := newTestHandler(t, table, q, func(c *Config) {
		c.ReenqueueGrace = h.cfg.ReenqueueGrace
		c.Budget, c.UndoTimeout, c.Now = c.ReenqueueGrace-100*time.Millisecond, faultBudget, clock.Now
	})
	return &faultStack{stack: s, proxy: proxy, clock: clock, h: h, retry: retry, sent: map[string]int{}}
}

// consume drains the queue as the processor does: each message's record
// is taken to PROCESSING (the processor's lease), and counted.
func (f *faultStack) consume(t *testing.T) {
	t.Helper()
	for _, env := range f.messages(t) {
		f.sent[env.Key]++
		if _, err := f.table.Acquire(context.Background(), env.Key, "test-processor", time.Now().Add(time.Hour)); err != nil {
			t.Fatalf("acquire %s: %v", env.Key, err)
		}
	}
}

func (f *faultStack) deliver(body []byte) int {
	return f.h.Receive(context.Background(), lineRequest(body, lineSign(body)), Meta{}).Status
}

// retryUntilOK retries body as a platform does, a step of the clock apart,
// until it is answered 200.
func (f *faultStack) retryUntilOK(t *testing.T, body []byte, step time.Duration, tries int) {
	t.Helper()
	for i := range tries {
		code := f.retry.Receive(context.Background(), lineRequest(body, lineSign(body)), Meta{}).Status
		f.consume(t)
		switch {
		case code == 200:
			return
		case code < 500:
			t.Fatalf("retry %d: status %d, want 200 or 5xx", i, code)
		}
		f.clock.Advance(step)
	}
	t.Fatalf("no 200 after %d retries", tries)
}

// keysOnce drains the queue and checks that exactly one message per id
// was sent in all.
func (f *faultStack) keysOnce(t *testing.T, ids ...string) {
	t.Helper()
	f.consume(t)
	got := f.sent
	for _, id := range ids {
		if n := got["line#acme#"+id]; n != 1 {
			t.Errorf("%s: %d messages, want 1", id, n)
		}
	}
	if len(got) != len(ids) {
		t.Errorf("messages for %d keys, want %d: %v", len(got), len(ids), got)
	}
}

// The claim's PutItem reaches DynamoDB Local and is applied, but its answer
// is held past the budget: the delivery gets 503. Whether the undo is
// applied or not, and whenever the platform retries, the event ends with
// exactly one message.
func TestIntegrationClaimAppliedButAnswerLost(t *testing.T) {
	undo := map[string]awstest.Fault{"undo applied": awstest.ApplyThenHang, "undo lost": awstest.DropThenHang}
	for undoName, undoFault := range undo {
		for _, delay := range []time.Duration{0, grace / 2, grace, time.Hour} {
			t.Run(fmt.Sprintf("%s, retry after %s", undoName, delay), func(t *testing.T) {
				f := newFaultStack(t)
				id := fmt.Sprintf("01JFAULT%018d", delay.Milliseconds())
				body := lineBody(id)
				f.proxy.SetRule(func(op string, _ int) awstest.Fault {
					switch op {
					case "PutItem": // the claim
						return awstest.ApplyThenHang
					case "DeleteItem":
						return undoFault
					}
					return awstest.Pass
				})
				if code := f.deliver(body); code != 503 {
					t.Fatalf("status = %d, want 503", code)
				}
				f.proxy.SetRule(nil)
				f.clock.Advance(delay)
				f.retryUntilOK(t, body, time.Second, 10)
				f.keysOnce(t, id)
			})
		}
	}
}

// A 20-event body under the same fault, half the claims applied and half
// lost: after the platform's retries every event is enqueued once.
func TestIntegrationMultiEventClaimsUnderFault(t *testing.T) {
	f := newFaultStack(t)
	ids := make([]string, 20)
	for i := range ids {
		ids[i] = fmt.Sprintf("01JMULTIFAULT%013d", i)
	}
	body := lineBody(ids...)
	f.proxy.SetRule(func(op string, n int) awstest.Fault {
		switch op {
		case "PutItem": // the claim
			if n%2 == 0 {
				return awstest.ApplyThenHang
			}
			return awstest.DropThenHang
		case "DeleteItem":
			return awstest.DropThenHang
		}
		return awstest.Pass
	})
	if code := f.deliver(body); code != 503 {
		t.Fatalf("status = %d, want 503", code)
	}
	f.proxy.SetRule(nil)
	f.retryUntilOK(t, body, time.Second, 20)
	f.keysOnce(t, ids...)
}

// lineTextBody returns a LINE body with one text event per text.
func lineTextBody(id string, texts ...string) []byte {
	evs := make([]string, len(texts))
	for i, text := range texts {
		evs[i] = fmt.Sprintf(`{"type":"message","message":{"type":"text","id":"%d","text":%s},`+
			`"webhookEventId":"%s-%02d","deliveryContext":{"isRedelivery":false},"timestamp":%d,`+
			`"source":{"type":"user","userId":"U1"},"replyToken":"r","mode":"active"}`, i, text, id, i, testEventMillis)
	}
	return []byte(`{"destination":"U1","events":[` + strings.Join(evs, ",") + `]}`)
}

// jsonString returns a JSON string literal of n characters c, as written
// raw (raw true) or as a \u escape.
func jsonString(c rune, n int, raw bool) string {
	if raw {
		return `"` + strings.Repeat(string(c), n) + `"`
	}
	return `"` + strings.Repeat(fmt.Sprintf(`\u%04x`, c), n) + `"`
}

// Bodies up to the 1 MiB limit full of characters JSON escapes are enqueued
// (or, when they cannot be stored, answered 413), never 503, and the
// processor can read each one back.
func TestIntegrationLargeBodiesAreEnqueuedOr413(t *testing.T) {
	s := newStack(t)
	limit := DefaultMaxBody - 400
	random := make([]byte, limit)
	_, _ = rand.Read(random)
	cases := []struct {
		name string
		text string
		want int
	}{
		{"raw <", jsonString('<', limit, true), 200},
		{"escaped <", jsonString('<', limit/6, false), 200},
		{"raw &", jsonString('&', limit, true), 200},
		{"escaped quotes", `"` + strings.Repeat(`\"`, limit/2) + `"`, 200},
		{"control characters", jsonString(1, limit/6, false), 200},
		{"CJK", jsonString('消', limit/3, true), 200},
		{"noncharacters", jsonString(0xffff, limit/3, true), 200},
		{"incompressible", `"` + base64.StdEncoding.EncodeToString(random)[:limit] + `"`, 413},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			id := awstest.Name("big")
			body := lineTextBody(id, c.text)
			if len(body) > DefaultMaxBody {
				t.Fatalf("body %d bytes, over the limit", len(body))
			}
			if code := s.post(t, body, lineSign(body)); code != c.want {
				t.Fatalf("status = %d, want %d", code, c.want)
			}
			msgs := s.messages(t)
			if c.want != 200 {
				if len(msgs) != 0 {
					t.Fatalf("%d messages for a rejected body", len(msgs))
				}
				return
			}
			if len(msgs) != 1 || !msgs[0].PayloadInRecord || len(msgs[0].Payload) != 0 {
				t.Fatalf("messages = %d (payload in record %v), want one without its payload", len(msgs), len(msgs) == 1 && msgs[0].PayloadInRecord)
			}
			rec, err := s.table.Get(context.Background(), msgs[0].Key)
			if err != nil || rec == nil {
				t.Fatalf("record: %v, %v", rec, err)
			}
			if !json.Valid(rec.Payload) || !bytes.Contains(body, rec.Payload) {
				t.Fatalf("stored payload (%d bytes) is not the event as received", len(rec.Payload))
			}
		})
	}
}

// Ten events of 60 KiB in one body: each message carries its payload, and
// the batch is split by bytes (SendMessageBatch takes 256 KiB).
func TestIntegrationTenLargeEventsSplitByBytes(t *testing.T) {
	var calls atomic.Int32 // batches are sent concurrently
	s := newStack(t)
	counting := sqs.NewFromConfig(awstest.Config(), func(o *sqs.Options) {
		o.BaseEndpoint = s.sqs.Options().BaseEndpoint
		o.APIOptions = append(o.APIOptions, func(st *middleware.Stack) error {
			return st.Initialize.Add(middleware.InitializeMiddlewareFunc("count", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				if middleware.GetOperationName(ctx) == "SendMessageBatch" {
					calls.Add(1)
				}
				return next.HandleInitialize(ctx, in)
			}), middleware.After)
		})
	})
	q, err := queue.New(queue.Config{Client: counting, URL: s.queues.URL})
	if err != nil {
		t.Fatal(err)
	}
	h := newTestHandler(t, s.table, q, func(c *Config) { c.Budget = 15 * time.Second })
	texts := make([]string, 10)
	for i := range texts {
		texts[i] = jsonString('<', 60<<10, true)
	}
	body := lineTextBody("01JTENLARGE", texts...)
	if r := h.Receive(context.Background(), lineRequest(body, lineSign(body)), Meta{}); r.Status != 200 {
		t.Fatalf("status %d", r.Status)
	}
	msgs := s.messages(t)
	if len(msgs) != 10 {
		t.Fatalf("messages = %d, want 10", len(msgs))
	}
	for _, m := range msgs {
		if m.PayloadInRecord || len(m.Payload) < 60<<10 {
			t.Fatalf("message %s: payload %d bytes, in record %v; want it inline", m.Key, len(m.Payload), m.PayloadInRecord)
		}
	}
	if calls.Load() < 3 {
		t.Fatalf("SendMessageBatch calls = %d, want ≥ 3 (10 × 60 KiB in batches of 256 KiB)", calls.Load())
	}
}

// Input that could never be stored or sent gets its 4xx against the real
// services, and nothing reaches the table or the queue.
func TestIntegrationUnstorableInputIs4xx(t *testing.T) {
	s := newStack(t)
	now := time.Now()
	cases := []struct {
		name string
		body []byte
		want int
	}{
		{"id of 2,100 bytes", lineEventBody(strings.Repeat("A", 2100), now.UnixMilli(), "hi"), 400},
		{"id with invalid UTF-8", lineEventBody("01J\xff", now.UnixMilli(), "hi"), 400},
		{"text with invalid UTF-8", lineEventBody("01JBADTEXT", now.UnixMilli(), "bad \xfe"), 400},
		{"event older than the dedup window", lineEventBody("01JOLD", now.Add(-DefaultDedupWindow-time.Hour).UnixMilli(), "hi"), 401},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if code := s.post(t, c.body, lineSign(c.body)); code != c.want {
				t.Fatalf("status = %d, want %d", code, c.want)
			}
		})
	}
	if recs := s.records(t); len(recs) != 0 {
		t.Fatalf("records = %d, want 0", len(recs))
	}
	if msgs := s.messages(t); len(msgs) != 0 {
		t.Fatalf("messages = %d, want 0", len(msgs))
	}
}

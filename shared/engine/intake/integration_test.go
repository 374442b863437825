//go:build integration

package intake

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/hookwall/hookwall/shared/aws/awstest"
	"github.com/hookwall/hookwall/shared/aws/queue"
	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/state/store"
)

// stack is a receiver served over HTTP on a fresh table and queue of the
// local services, through the real AWS SDK.
type stack struct {
	db     *dynamodb.Client
	sqs    *sqs.Client
	table  *store.Table
	queues awstest.Queues
	srv    *httptest.Server
	h      *Handler
}

func newStack(t *testing.T, mut ...func(*Config)) *stack {
	t.Helper()
	s := &stack{db: awstest.DynamoDB(t), sqs: awstest.SQS(t)}
	var err error
	s.table, err = store.New(store.Config{Client: s.db, TableName: awstest.NewTable(t, s.db)})
	if err != nil {
		t.Fatal(err)
	}
	s.queues = awstest.NewQueues(t, s.sqs, 5, 60*time.Second)
	q, err := queue.New(queue.Config{Client: s.sqs, URL: s.queues.URL})
	if err != nil {
		t.Fatal(err)
	}
	// A generous budget: these tests are about outcomes, and a loaded CI
	// machine must not turn them into 503s (the budget has its own test).
	generous := func(c *Config) { c.Budget = 15 * time.Second }
	s.h = newTestHandler(t, s.table, q, append([]func(*Config){generous}, mut...)...)
	s.srv = httptest.NewServer(s.h)
	t.Cleanup(s.srv.Close)
	return s
}

// post delivers a signed LINE body over HTTP and returns the status code.
func (s *stack) post(t *testing.T, body []byte, sig string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.srv.URL+"/webhooks/line/acme", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Line-Signature", sig)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Errorf("post: %v", err)
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

func (s *stack) records(t *testing.T) []store.Record {
	t.Helper()
	out, err := s.db.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String(s.table.Name()), ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	var recs []store.Record
	if err := attributevalue.UnmarshalListOfMaps(out.Items, &recs); err != nil {
		t.Fatal(err)
	}
	return recs
}

func (s *stack) messages(t *testing.T) []webhook.Envelope {
	t.Helper()
	msgs := awstest.Drain(t, s.sqs, s.queues.URL)
	envs := make([]webhook.Envelope, len(msgs))
	for i, m := range msgs {
		if err := json.Unmarshal([]byte(aws.ToString(m.Body)), &envs[i]); err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
	}
	return envs
}

func concurrently(n int, fn func(i int)) {
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { fn(i) })
	}
	wg.Wait()
}

func TestIntegrationOneEventDelivered200TimesConcurrently(t *testing.T) {
	s := newStack(t)
	body := lineBody("01JCONCURRENT0000000000001")
	sig := lineSign(body)
	var mu sync.Mutex
	statuses := map[int]int{}
	concurrently(200, func(int) {
		code := s.post(t, body, sig)
		mu.Lock()
		statuses[code]++
		mu.Unlock()
	})
	// The claimer answers 200; the others find the record RECEIVED inside
	// the grace and answer 503 (they cannot know the send succeeded).
	if statuses[200] < 1 || statuses[200]+statuses[503] != 200 {
		t.Fatalf("statuses = %v, want 200 or 503, at least one 200", statuses)
	}
	if recs := s.records(t); len(recs) != 1 || recs[0].Status != webhook.StatusReceived || recs[0].Version != 1 {
		t.Fatalf("records = %+v, want one RECEIVED v1", recs)
	}
	msgs := s.process(t)
	if len(msgs) != 1 || msgs[0].Key != "line#acme#01JCONCURRENT0000000000001" {
		t.Fatalf("messages = %+v, want exactly one for the event", msgs)
	}
	// Once it is being processed, every retry is answered 200 and adds nothing.
	concurrently(50, func(int) {
		if code := s.post(t, body, sig); code != 200 {
			t.Errorf("retry: status %d, want 200", code)
		}
	})
	if msgs := s.messages(t); len(msgs) != 0 {
		t.Fatalf("retries enqueued %d messages", len(msgs))
	}
}

// process drains the queue as the processor does: each message's record is
// taken to PROCESSING (the lease). It returns the messages.
func (s *stack) process(t *testing.T) []webhook.Envelope {
	t.Helper()
	msgs := s.messages(t)
	for _, env := range msgs {
		if _, err := s.table.Acquire(context.Background(), env.Key, "test-processor", time.Now().Add(time.Hour)); err != nil {
			t.Fatalf("acquire %s: %v", env.Key, err)
		}
	}
	return msgs
}

func TestIntegrationFiftyEventsEachDeliveredThreeTimes(t *testing.T) {
	s := newStack(t)
	concurrently(150, func(i int) {
		body := lineBody(fmt.Sprintf("01JFIFTY%018d", i%50))
		if code := s.post(t, body, lineSign(body)); code != 200 && code != 503 {
			t.Errorf("delivery %d: status %d", i, code)
		}
	})
	msgs := s.process(t)
	keys := map[string]int{}
	for _, m := range msgs {
		keys[m.Key]++
	}
	if len(msgs) != 50 || len(keys) != 50 {
		t.Fatalf("messages = %d for %d keys, want exactly 50 distinct", len(msgs), len(keys))
	}
	if recs := s.records(t); len(recs) != 50 {
		t.Fatalf("records = %d, want 50", len(recs))
	}
	// The platforms' retries of the 503s: all 200, nothing more enqueued.
	concurrently(50, func(i int) {
		body := lineBody(fmt.Sprintf("01JFIFTY%018d", i))
		if code := s.post(t, body, lineSign(body)); code != 200 {
			t.Errorf("retry %d: status %d", i, code)
		}
	})
	if msgs := s.messages(t); len(msgs) != 0 {
		t.Fatalf("retries enqueued %d messages", len(msgs))
	}
}

func TestIntegrationFiveEventsTwoSeen(t *testing.T) {
	s := newStack(t)
	first := lineBody("01JSEEN0000000000000000001", "01JSEEN0000000000000000002")
	if code := s.post(t, first, lineSign(first)); code != 200 {
		t.Fatalf("first delivery: %d", code)
	}
	if got := len(s.process(t)); got != 2 {
		t.Fatalf("first delivery enqueued %d, want 2", got)
	}
	five := lineBody("01JSEEN0000000000000000001", "01JSEEN0000000000000000003", "01JSEEN0000000000000000002",
		"01JSEEN0000000000000000004", "01JSEEN0000000000000000005")
	if code := s.post(t, five, lineSign(five)); code != 200 {
		t.Fatalf("second delivery: %d", code)
	}
	got := map[string]bool{}
	for _, m := range s.messages(t) {
		got[m.Key] = true
	}
	want := []string{"3", "4", "5"}
	if len(got) != 3 {
		t.Fatalf("second delivery enqueued %v, want 3", got)
	}
	for _, w := range want {
		if !got["line#acme#01JSEEN000000000000000000"+w] {
			t.Errorf("event %s not enqueued; got %v", w, got)
		}
	}
	if recs := s.records(t); len(recs) != 5 {
		t.Fatalf("records = %d, want 5", len(recs))
	}
}

func TestIntegrationBadSignatureChangesNothing(t *testing.T) {
	s := newStack(t)
	body := lineBody("01JBADSIG00000000000000001")
	if code := s.post(t, body, lineSign([]byte("not the body"))); code != 401 {
		t.Fatalf("status = %d, want 401", code)
	}
	if code := s.post(t, body, ""); code != 401 {
		t.Fatalf("unsigned: status = %d, want 401", code)
	}
	if recs := s.records(t); len(recs) != 0 {
		t.Fatalf("records = %d, want 0", len(recs))
	}
	if msgs := s.messages(t); len(msgs) != 0 {
		t.Fatalf("messages = %d, want 0", len(msgs))
	}
}

func TestIntegrationSQSUnreachableThenRecovers(t *testing.T) {
	s := newStack(t)
	// A queue client pointed at a port nothing listens on: SQS is down.
	down := sqs.NewFromConfig(awstest.Config(), func(o *sqs.Options) { o.BaseEndpoint = aws.String("http://127.0.0.1:1") })
	deadQ, err := queue.New(queue.Config{Client: down, URL: s.queues.URL, Attempts: 2, Backoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	broken := newTestHandler(t, s.table, deadQ)
	body := lineBody("01JSQSDOWN0000000000000001", "01JSQSDOWN0000000000000002")
	r := broken.Receive(context.Background(), lineRequest(body, lineSign(body)), Meta{})
	if r.Status < 500 {
		t.Fatalf("status = %d, want 5xx", r.Status)
	}
	if recs := s.records(t); len(recs) != 0 {
		t.Fatalf("records left behind: %+v", recs)
	}
	// The platform retries once SQS is back: enqueued once, and a further
	// retry, once the events are being processed, is a duplicate.
	if code := s.post(t, body, lineSign(body)); code != 200 {
		t.Fatalf("retry: status %d", code)
	}
	if msgs := s.process(t); len(msgs) != 2 {
		t.Fatalf("messages = %d, want 2", len(msgs))
	}
	if code := s.post(t, body, lineSign(body)); code != 200 {
		t.Fatalf("second retry: status %d", code)
	}
	if msgs := s.messages(t); len(msgs) != 0 {
		t.Fatalf("second retry enqueued %d", len(msgs))
	}
}

func TestIntegrationDynamoDBUnreachableIs5xx(t *testing.T) {
	s := newStack(t)
	down := dynamodb.NewFromConfig(awstest.Config(), func(o *dynamodb.Options) {
		o.BaseEndpoint = aws.String("http://127.0.0.1:1")
		o.RetryMaxAttempts = 1
	})
	tbl, err := store.New(store.Config{Client: down, TableName: s.table.Name()})
	if err != nil {
		t.Fatal(err)
	}
	q, _ := queue.New(queue.Config{Client: s.sqs, URL: s.queues.URL})
	broken := newTestHandler(t, tbl, q)
	body := lineBody("01JDDBDOWN0000000000000001")
	if r := broken.Receive(context.Background(), lineRequest(body, lineSign(body)), Meta{}); r.Status < 500 {
		t.Fatalf("status = %d, want 5xx", r.Status)
	}
	if msgs := s.messages(t); len(msgs) != 0 {
		t.Fatalf("messages = %d, want 0", len(msgs))
	}
}

func TestIntegrationExpiredRecordIsClaimableAgain(t *testing.T) {
	s := newStack(t)
	key := "line#acme#01JEXPIRED0000000000000001"
	old := store.Record{
		Key: key, SK: store.SKEvent, Status: webhook.StatusSucceeded, Version: 3, Provider: "line", Tenant: "acme",
		EventType: "message", ReceivedAt: time.Now().Add(-8 * 24 * time.Hour).UnixMilli(),
		ExpiresAt: time.Now().Add(-time.Hour).Unix(), PayloadHash: "old", Payload: store.Payload(`{}`), ClaimID: "old-claim",
	}
	item, err := attributevalue.MarshalMap(old)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(s.table.Name()), Item: item}); err != nil {
		t.Fatal(err)
	}
	body := lineBody("01JEXPIRED0000000000000001")
	if code := s.post(t, body, lineSign(body)); code != 200 {
		t.Fatalf("status %d", code)
	}
	msgs := s.messages(t)
	if len(msgs) != 1 || msgs[0].Key != key {
		t.Fatalf("messages = %+v, want one for %s", msgs, key)
	}
	recs := s.records(t)
	if len(recs) != 1 || recs[0].ClaimID == "old-claim" || recs[0].Status != webhook.StatusReceived || recs[0].Version != 1 {
		t.Fatalf("record = %+v, want a fresh RECEIVED v1 claim", recs)
	}
}

func TestIntegrationStaleReceivedIsReenqueuedByItsDuplicate(t *testing.T) {
	f := newFaultStack(t) // no faults: its settable clock
	body := lineBody("01JSTALE000000000000000001")
	if code := f.deliver(body); code != 200 {
		t.Fatalf("status %d", code)
	}
	// Lose the message, as if the first receiver died between claim and send.
	msgs := awstest.Drain(t, f.sqs, f.queues.URL)
	if len(msgs) != 1 {
		t.Fatalf("first delivery: %d messages", len(msgs))
	}
	if _, err := f.sqs.DeleteMessage(context.Background(), &sqs.DeleteMessageInput{QueueUrl: aws.String(f.queues.URL), ReceiptHandle: msgs[0].ReceiptHandle}); err != nil {
		t.Fatal(err)
	}
	// Inside the grace period a duplicate does not re-enqueue; it answers
	// 503, since it cannot know whether the message was sent.
	if code := f.deliver(body); code != 503 {
		t.Fatalf("status %d, want 503", code)
	}
	if got := len(f.messages(t)); got != 0 {
		t.Fatalf("re-enqueued inside the grace period: %d", got)
	}
	f.clock.Advance(grace)
	// Past it, ten concurrent duplicates re-enqueue it exactly once.
	codes := make([]int, 10)
	concurrently(10, func(i int) { codes[i] = f.deliver(body) })
	ok := 0
	for _, c := range codes {
		switch c {
		case 200:
			ok++
		case 503:
		default:
			t.Errorf("duplicate: status %d", c)
		}
	}
	if ok == 0 {
		t.Error("no duplicate answered 200")
	}
	got := f.messages(t)
	if len(got) != 1 || got[0].Key != "line#acme#01JSTALE000000000000000001" {
		t.Fatalf("messages = %+v, want exactly one re-enqueue", got)
	}
}

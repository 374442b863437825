//go:build integration

package main

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/hookwall/hookwall/functions/processor/wiring"
	"github.com/hookwall/hookwall/shared/aws/awstest"
	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/config/settings"
	"github.com/hookwall/hookwall/shared/engine/intake"
	"github.com/hookwall/hookwall/shared/protocol/provider/standard"
	"github.com/hookwall/hookwall/shared/state/store"
)

// The whole wall, end to end, through the production wiring of both
// functions (settings.LoadReceiver and intake.Build, settings.LoadProcessor
// and wiring.Build; AWS endpoints only from the SDK's environment): a LINE
// delivery and its duplicates go through the receiver over HTTP, the queue,
// the processor's SQS batch handler and the built-in forwarding handler,
// and each event reaches the tenant's endpoint once, signed so that a
// Standard Webhooks receiver accepts it.

const (
	e2eLineSecret = "5e1f0c1d6a2b4e9f8a7b6c5d4e3f2a10"
	e2eForward    = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
)

// endpoint is the tenant's forward target: it verifies every POST as a
// Standard Webhooks receiver would and counts them per webhook-id.
type endpoint struct {
	mu     sync.Mutex
	byID   map[string]int
	events []webhook.Envelope
	bad    []string
	parser *standard.Parser
}

func (e *endpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	_, err := e.parser.Parse(r.Context(), &webhook.Request{Method: r.Method, Header: r.Header, Body: body, Now: time.Now()})
	var env webhook.Envelope
	e.mu.Lock()
	defer e.mu.Unlock()
	if err != nil || json.Unmarshal(body, &env) != nil {
		e.bad = append(e.bad, fmt.Sprintf("%v", err))
		http.Error(w, "unverifiable", http.StatusUnauthorized)
		return
	}
	e.byID[r.Header.Get("webhook-id")]++
	e.events = append(e.events, env)
}

func envDefault(t *testing.T, name, value string) {
	if os.Getenv(name) == "" {
		t.Setenv(name, value)
	}
}

func TestEndToEndReceiverQueueProcessorForward(t *testing.T) {
	envDefault(t, "AWS_ENDPOINT_URL_DYNAMODB", awstest.DefaultDynamoDBEndpoint)
	envDefault(t, "AWS_ENDPOINT_URL_SQS", awstest.DefaultSQSEndpoint)
	envDefault(t, "AWS_REGION", "us-east-1")
	envDefault(t, "AWS_ACCESS_KEY_ID", "test")
	envDefault(t, "AWS_SECRET_ACCESS_KEY", "test")
	ctx := context.Background()
	db, sq := awstest.DynamoDB(t), awstest.SQS(t)
	tableName := awstest.NewTable(t, db)
	queues := awstest.NewQueues(t, sq, 10, 30*time.Second)

	parser, err := standard.New(standard.Config{Secrets: []string{e2eForward}})
	if err != nil {
		t.Fatal(err)
	}
	target := &endpoint{byID: map[string]int{}, parser: parser}
	targetSrv := httptest.NewServer(target)
	defer targetSrv.Close()
	tenants := filepath.Join(t.TempDir(), "tenants.json")
	doc := fmt.Sprintf(`{"tenants":{"acme":{"line":{"channelSecret":%q},"forward":{"url":%q,"secret":%q}}}}`,
		e2eLineSecret, targetSrv.URL+"/hooks", e2eForward)
	if err := os.WriteFile(tenants, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)

	// The receiver, as functions/receiver wires it, served over HTTP.
	rs, _, err := settings.LoadReceiver(func(k string) string {
		return map[string]string{"TABLE_NAME": tableName, "QUEUE_URL": queues.URL, "HOOKWALL_TENANTS_FILE": tenants}[k]
	}, intake.Defaults())
	if err != nil {
		t.Fatal(err)
	}
	receiver, err := intake.Build(ctx, rs, log, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	receiverSrv := httptest.NewServer(receiver)
	defer receiverSrv.Close()

	// The processor, as functions/processor wires it.
	ps, _, err := settings.LoadProcessor(func(k string) string {
		return map[string]string{"TABLE_NAME": tableName, "QUEUE_URL": queues.URL, "DLQ_URL": queues.DLQURL,
			"HOOKWALL_TENANTS_FILE": tenants, "HOOKWALL_LEASE": "5s"}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	processor, err := wiring.Build(ctx, ps, log, io.Discard)
	if err != nil {
		t.Fatal(err)
	}

	// A LINE delivery of four events, sent three times at once. The fourth
	// is too large to travel in its message: the processor reads its
	// payload from the record.
	ts := time.Now().Add(-time.Minute).UnixMilli()
	big := strings.Repeat("<&>", 30<<10)
	body := fmt.Appendf(nil, `{"destination":"U00000000000000000000000000000001","events":[`+
		`{"type":"follow","timestamp":%d,"mode":"active","webhookEventId":"01JE2E0000000000000000FOLW","deliveryContext":{"isRedelivery":false},"replyToken":"r1","source":{"type":"user","userId":"U1"},"follow":{"isUnblocked":false}},`+
		`{"type":"message","timestamp":%d,"mode":"active","webhookEventId":"01JE2E0000000000000000MESG","deliveryContext":{"isRedelivery":false},"replyToken":"r2","source":{"type":"user","userId":"U1"},"message":{"type":"text","id":"534897012345678901","text":"hi"}},`+
		`{"type":"unsend","timestamp":%d,"mode":"active","webhookEventId":"01JE2E0000000000000000UNSD","deliveryContext":{"isRedelivery":false},"source":{"type":"user","userId":"U1"},"unsend":{"messageId":"534897012345678901"}},`+
		`{"type":"message","timestamp":%d,"mode":"active","webhookEventId":"01JE2E0000000000000000BIGM","deliveryContext":{"isRedelivery":false},"replyToken":"r3","source":{"type":"user","userId":"U1"},"message":{"type":"text","id":"534897012345678902","text":%q}}]}`,
		ts, ts+100, ts+200, ts+300, big)
	mac := hmac.New(sha256.New, []byte(e2eLineSecret))
	mac.Write(body)
	sig := base64.StdEncoding.EncodeToString(mac.Sum(nil))
	deliver := func() int {
		req, _ := http.NewRequest(http.MethodPost, receiverSrv.URL+"/webhooks/line/acme", bytes.NewReader(body))
		req.Header.Set("X-Line-Signature", sig)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Errorf("deliver: %v", err)
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	// A delivery that finds an event RECEIVED, claimed by a concurrent
	// delivery, cannot know yet that its message was sent, so it answers
	// 503 and the platform retries; the three deliveries share the four
	// claims, so each may answer 200 or 503. Once the events are being
	// processed, the retry is answered 200 (below).
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			if code := deliver(); code != 200 && code != 503 {
				t.Errorf("delivery: status %d", code)
			}
		})
	}
	wg.Wait()

	// Everything the queue holds goes through the processor; a message is
	// deleted only if the batch response did not report it.
	msgs := awstest.Drain(t, sq, queues.URL)
	if len(msgs) != 4 {
		t.Fatalf("queued %d messages, want 4 (one per event)", len(msgs))
	}
	batch := events.SQSEvent{}
	for _, m := range msgs {
		batch.Records = append(batch.Records, events.SQSMessage{MessageId: aws.ToString(m.MessageId),
			ReceiptHandle: aws.ToString(m.ReceiptHandle), Body: aws.ToString(m.Body)})
	}
	resp, err := processor.Handle(ctx, batch)
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("processor: %+v, %v", resp, err)
	}
	var del []sqstypes.DeleteMessageBatchRequestEntry
	for i, m := range msgs {
		del = append(del, sqstypes.DeleteMessageBatchRequestEntry{Id: aws.String(fmt.Sprint(i)), ReceiptHandle: m.ReceiptHandle})
	}
	if _, err := sq.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: &queues.URL, Entries: del}); err != nil {
		t.Fatal(err)
	}

	// SQS delivers at least once too: the same batch again changes nothing.
	if resp, err := processor.Handle(ctx, batch); err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("redelivered batch: %+v, %v", resp, err)
	}
	// And the platform retries once more: a duplicate, nothing queued.
	if code := deliver(); code != 200 {
		t.Fatalf("late retry: status %d", code)
	}
	if again := awstest.Drain(t, sq, queues.URL); len(again) != 0 {
		t.Fatalf("a duplicate delivery queued %d messages", len(again))
	}

	target.mu.Lock()
	defer target.mu.Unlock()
	if len(target.bad) != 0 {
		t.Fatalf("forwarded requests that do not verify: %v", target.bad)
	}
	if len(target.byID) != 4 {
		t.Fatalf("forwarded %d distinct events (%v), want 4", len(target.byID), target.byID)
	}
	for id, n := range target.byID {
		if n != 1 {
			t.Errorf("event %s forwarded %d times", id, n)
		}
	}
	types := map[string]bool{}
	for _, env := range target.events {
		types[env.Type] = true
		if env.Tenant != "acme" || env.Provider != "line" || len(env.Payload) == 0 || env.PayloadInRecord {
			t.Errorf("forwarded envelope %s: payload %d bytes, in record %v", env.Key, len(env.Payload), env.PayloadInRecord)
		}
		var msg struct {
			Message struct{ Text string } `json:"message"`
		}
		if env.Key == "line#acme#01JE2E0000000000000000BIGM" && (json.Unmarshal(env.Payload, &msg) != nil || msg.Message.Text != big) {
			t.Errorf("large event forwarded without its payload (%d bytes)", len(env.Payload))
		}
	}
	if !types["follow"] || !types["message"] || !types["unsend"] {
		t.Errorf("forwarded types %v, want follow, message and unsend", types)
	}
	table, err := store.New(store.Config{Client: db, TableName: tableName})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"FOLW", "MESG", "UNSD", "BIGM"} {
		key := "line#acme#01JE2E0000000000000000" + id
		rec, err := table.Get(ctx, key)
		if err != nil || rec == nil {
			t.Fatalf("record %s: %v", key, err)
		}
		if rec.Status != webhook.StatusSucceeded || rec.Attempts != 1 {
			t.Errorf("record %s: status %s after %d attempts, want SUCCEEDED after 1", key, rec.Status, rec.Attempts)
		}
	}
}

//go:build integration

package wiring

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/smithy-go/middleware"

	"github.com/hookwall/hookwall/shared/aws/awsconf"
	"github.com/hookwall/hookwall/shared/aws/awstest"
	"github.com/hookwall/hookwall/shared/aws/bus"
	"github.com/hookwall/hookwall/shared/aws/queue"
	"github.com/hookwall/hookwall/shared/aws/sqsbatch"
	"github.com/hookwall/hookwall/shared/base/obs"
	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/engine/dispatch"
	"github.com/hookwall/hookwall/shared/engine/process"
	"github.com/hookwall/hookwall/shared/state/store"
)

// BenchmarkProcessor is issue 11's processor figure: CPU and AWS calls per
// event with 0, 1 and 3 journaled steps, and the throughput at batch size 10
// against 1, through the processor's Lambda handler (dispatch.New +
// sqsbatch, as Build wires them, with handlers of 0, 1 or 3 steps that call
// nothing outside) on DynamoDB Local and the SQS server. b.N is the number of
// events: they are claimed and enqueued first (not timed), then received in
// batches as the SQS event source does (the harness's receive and delete
// calls are not counted: they are the event source's), handled, and the
// acknowledged ones deleted. Outcome events go through the real EventBridge
// client to a local PutEvents endpoint.
//
//	make services-up; eval "$(cat .local/run/env.sh)"
//	go test -tags integration -run '^$' -bench Processor -benchtime 400x ./functions/processor/wiring/
func BenchmarkProcessor(b *testing.B) {
	for _, c := range []struct{ steps, batch int }{{0, 10}, {1, 10}, {3, 10}, {1, 1}} {
		b.Run(fmt.Sprintf("steps=%d/batch=%d", c.steps, c.batch), func(b *testing.B) { benchProcessor(b, c.steps, c.batch) })
	}
}

type followEvent struct {
	UserID string `json:"userId"`
}

var benchType = webhook.NewType[followEvent]("line", "follow")

func benchProcessor(b *testing.B, steps, batch int) {
	ctx := context.Background()
	// The harness: table, queues, claims and the event source's calls.
	admin := awstest.DynamoDB(b)
	tableName := awstest.NewTable(b, admin)
	sq := awstest.SQS(b)
	qs := awstest.NewQueues(b, sq, 5, 30*time.Second)
	claimer, err := store.New(store.Config{Client: admin, TableName: tableName, Function: "receiver"})
	if err != nil {
		b.Fatal(err)
	}
	seed, err := queue.New(queue.Config{Client: sq, URL: qs.URL})
	if err != nil {
		b.Fatal(err)
	}
	n := b.N
	envs := make([]webhook.Envelope, 0, n)
	for i := range n {
		payload := fmt.Appendf(nil, `{"type":"follow","userId":"U%06d","padding":"%0400d"}`, i, 0)
		sum := sha256.Sum256(payload)
		res, err := claimer.Claim(ctx, store.NewEvent{Key: fmt.Sprintf("line#bench#%s-%06d", awstest.Name("p"), i), Provider: "line",
			Tenant: "bench", EventType: "follow", PayloadHash: hex.EncodeToString(sum[:]), Payload: payload}, time.Hour)
		if err != nil || res.Outcome != store.Claimed {
			b.Fatalf("claim: %v %v", res.Outcome, err)
		}
		envs = append(envs, res.Record.Envelope())
	}
	for i := 0; i < len(envs); i += 10 {
		if err := seed.Send(ctx, envs[i:min(i+10, len(envs))]); err != nil {
			b.Fatal(err)
		}
	}

	// The processor, as Build wires it, its clients counted.
	bridge := newPutEventsServer(b)
	var calls awstest.OpCounter
	awsCfg, err := awsconf.Load(ctx, slog.New(slog.DiscardHandler), awsconf.Recorder{}, config.WithAPIOptions([]func(*middleware.Stack) error{calls.Install}))
	if err != nil {
		b.Fatal(err)
	}
	db := dynamodb.NewFromConfig(awsCfg)
	table, err := store.New(store.Config{Client: db, TableName: tableName, Function: "processor"})
	if err != nil {
		b.Fatal(err)
	}
	sqsClient := sqs.NewFromConfig(awsCfg)
	mainQ, err := queue.New(queue.Config{Client: sqsClient, URL: qs.URL})
	if err != nil {
		b.Fatal(err)
	}
	dlq, err := queue.New(queue.Config{Client: sqsClient, URL: qs.DLQURL})
	if err != nil {
		b.Fatal(err)
	}
	pub, err := bus.New(bus.Config{BusName: "hookwall-bench", Client: eventbridge.NewFromConfig(awsCfg, func(o *eventbridge.Options) {
		o.BaseEndpoint = aws.String(bridge.URL)
	})})
	if err != nil {
		b.Fatal(err)
	}
	reg := process.NewRegistry()
	process.Handle(reg, "bench.steps", benchType, func(ctx context.Context, ev *process.Event[followEvent]) error {
		for s := range steps {
			if err := ev.Step(ctx, fmt.Sprintf("s%d", s), func(context.Context, string) error { return nil }); err != nil {
				return err
			}
		}
		return nil
	})
	d, err := dispatch.New(dispatch.Config{Registry: reg, Store: table, DLQ: dlq,
		Kernel: dispatch.Kernel{Queue: mainQ, Publisher: pub, Outcomes: "each", Logger: slog.New(slog.DiscardHandler),
			Metrics: obs.NewMetrics(io.Discard, "Hookwall", map[string]string{"Function": "processor"})}})
	if err != nil {
		b.Fatal(err)
	}
	h := &Handler{batch: sqsbatch.New(d, batch), metrics: obs.NewMetrics(io.Discard, "Hookwall", nil), log: slog.New(slog.DiscardHandler)}

	// The event source: receive a batch, hand it over, delete what was acknowledged.
	done, processing := 0, time.Duration(0)
	var cpu time.Duration
	b.ResetTimer()
	for done < n {
		out, err := sq.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &qs.URL, MaxNumberOfMessages: int32(batch), WaitTimeSeconds: 1})
		if err != nil {
			b.Fatal(err)
		}
		if len(out.Messages) == 0 {
			continue
		}
		ev := events.SQSEvent{}
		for _, m := range out.Messages {
			ev.Records = append(ev.Records, events.SQSMessage{MessageId: aws.ToString(m.MessageId), ReceiptHandle: aws.ToString(m.ReceiptHandle), Body: aws.ToString(m.Body)})
		}
		t0, c0 := time.Now(), cpuTime()
		resp, _ := h.Handle(ctx, ev)
		processing += time.Since(t0)
		cpu += cpuTime() - c0
		failed := map[string]bool{}
		for _, f := range resp.BatchItemFailures {
			failed[f.ItemIdentifier] = true
		}
		for _, r := range ev.Records {
			if failed[r.MessageId] {
				b.Fatalf("message %s not acknowledged", r.MessageId)
			}
			if _, err := sq.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: &qs.URL, ReceiptHandle: aws.String(r.ReceiptHandle)}); err != nil {
				b.Fatal(err)
			}
			done++
		}
	}
	b.StopTimer()
	total := calls.Take()
	all, ddb := 0, 0
	for op, k := range total {
		all += k
		if !slices.Contains(sqsOps, op) {
			ddb += k
		}
	}
	ev := float64(n)
	b.ReportMetric(float64(cpu.Microseconds())/1000/ev, "cpu-ms/event")
	b.ReportMetric(ev/processing.Seconds(), "events/s")
	b.ReportMetric(float64(all)/ev, "calls/event")
	b.ReportMetric(float64(ddb)/ev, "ddb-calls/event")
	b.ReportMetric(float64(total["PutEvents"])/ev, "putevents/event")
	if got := bridge.entries(); got != n {
		b.Errorf("outcome events %d, want %d", got, n)
	}
}

// cpuTime is this process's user + system CPU time (getrusage).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// sqsOps are the SQS and EventBridge operations the processor calls; every
// other operation it calls is DynamoDB's.
var sqsOps = []string{"SendMessage", "SendMessageBatch", "ChangeMessageVisibility", "ChangeMessageVisibilityBatch",
	"DeleteMessage", "DeleteMessageBatch", "ReceiveMessage", "PutEvents"}

// putEventsServer answers EventBridge PutEvents, counting the entries.
type putEventsServer struct {
	*httptest.Server
	mu sync.Mutex
	n  int
}

func newPutEventsServer(b *testing.B) *putEventsServer {
	p := &putEventsServer{}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct{ Entries []json.RawMessage }
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		p.mu.Lock()
		p.n += len(req.Entries)
		p.mu.Unlock()
		type entry struct{ EventId string }
		out := struct {
			FailedEntryCount int
			Entries          []entry
		}{}
		for i := range req.Entries {
			out.Entries = append(out.Entries, entry{EventId: fmt.Sprint(i)})
		}
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		_ = json.NewEncoder(w).Encode(out)
	}))
	b.Cleanup(p.Close)
	return p
}

func (p *putEventsServer) entries() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.n
}

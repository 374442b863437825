package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	dbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"

	"github.com/hookwall/hookwall/shared/aws/bus"
	"github.com/hookwall/hookwall/shared/aws/queue"
	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/base/webhook/webhooktest"
	"github.com/hookwall/hookwall/shared/config/settings"
	"github.com/hookwall/hookwall/shared/engine/drain"
	"github.com/hookwall/hookwall/shared/state/store"
	"github.com/hookwall/hookwall/shared/state/targets"
)

// testNow is the fake clock of the unit tests.
var testNow = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// fixture is one CLI run's world: environment and fake backends.
type fixture struct {
	env   map[string]string
	store *fakeStore
	queue *fakeQueue
	sqs   *fakeSQS
	// gate, held, jobs, drained and ops back the control commands and recover.
	gate    controller
	held    map[string]int
	jobs    *fakeJobs
	drained []string
	ops     *webhooktest.Ops[bus.Op]
	opens   int
	// settings is the configuration AWS was last opened with.
	settings settings.CLI
}

func newFixture() *fixture {
	return &fixture{
		env: map[string]string{"TABLE_NAME": "events", "QUEUE_URL": "http://sqs.test/1/main", "DLQ_URL": "http://sqs.test/1/dlq",
			"HOOKWALL_TENANTS_FILE": "../../infra/local/tenants.json"},
		store: &fakeStore{recs: map[string]*store.Record{}},
		queue: &fakeQueue{},
		sqs:   newFakeSQS(),
	}
}

// run runs the CLI with args and returns the exit code and output.
func (fx *fixture) run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	a := newApp(&out, &errOut, func(k string) string { return fx.env[k] })
	a.now = func() time.Time { return testNow }
	a.pollEvery = time.Millisecond
	// No runner.json but the one HOOKWALL_RUN_DIR names: a `make run`
	// in this checkout must not change what the tests see.
	a.wd, a.exe = "", ""
	a.open = func(_ context.Context, s settings.CLI) (*backend, error) {
		fx.opens++
		fx.settings = s
		b := &backend{events: fx.store, scan: fx.store, queue: fx.queue, sqs: fx.sqs, held: fakeHeld(fx.held)}
		if fx.ops != nil {
			b.ops = fx.ops
		}
		if fx.gate != nil {
			b.gate = fx.gate
		}
		if fx.jobs != nil {
			b.jobs = fx.jobs
		}
		b.drain = fakeDrain{fx}
		return b, nil
	}
	code := a.main(context.Background(), args)
	return code, out.String(), errOut.String()
}

// fakeDrain releases what fx.held counts on a scope, reporting each.
type fakeDrain struct{ fx *fixture }

func (d fakeDrain) Release(_ context.Context, sc targets.Scope, opts drain.Options) (drain.Progress, error) {
	n := d.fx.held[sc.String()]
	for i := range n {
		if opts.Progress != nil {
			opts.Progress(drain.Progress{Released: i + 1})
		}
	}
	d.fx.drained = append(d.fx.drained, sc.String())
	delete(d.fx.held, sc.String())
	return drain.Progress{Released: n}, nil
}

// fakeStore is the events table: records, their steps, Replay as the
// store contract describes it, the sweep index and a bounded scan.
type fakeStore struct {
	mu       sync.Mutex
	recs     map[string]*store.Record
	steps    []webhook.JournalEntry
	replayed []store.ReplayOptions
	stuckErr error
	// scanRead is what a scan reports as read; scanMore that it stopped early.
	scanRead int
	scanMore bool
	scans    []scanQuery
}

func (s *fakeStore) put(recs ...*store.Record) {
	for _, r := range recs {
		s.recs[r.Key] = r
	}
}

func (s *fakeStore) Get(_ context.Context, key string) (*store.Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.recs[key]; ok {
		c := *r
		return &c, nil
	}
	return nil, nil
}

func (s *fakeStore) Steps(context.Context, string, string) ([]webhook.JournalEntry, error) {
	return s.steps, nil
}

func (s *fakeStore) Replay(_ context.Context, key string, opts store.ReplayOptions) (store.ReplayResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replayed = append(s.replayed, opts)
	r, ok := s.recs[key]
	if !ok {
		return store.ReplayResult{Outcome: store.ReplayMissing}, nil
	}
	live := r.LeaseUntil > testNow.UnixMilli() && (r.Status == webhook.StatusProcessing || r.Status == webhook.StatusCompensating)
	if (r.Status == webhook.StatusSucceeded && !opts.Force) || live {
		c := *r
		return store.ReplayResult{Outcome: store.ReplayRefused, Record: &c}, nil
	}
	from := r.Status
	r.Status, r.Version, r.Attempts = webhook.StatusReceived, r.Version+1, 0
	r.History = append(r.History, webhook.HistoryEntry{Version: r.Version, From: from, To: webhook.StatusReceived, Function: "cli"})
	c := *r
	return store.ReplayResult{Outcome: store.Replayed, Record: &c}, nil
}

// Stuck returns the keys of every record not terminal, shard by shard, two
// per page.
func (s *fakeStore) Stuck(_ context.Context, shard int, _, _ time.Time, limit int32,
	cursor map[string]dbtypes.AttributeValue) ([]store.StuckRecord, map[string]dbtypes.AttributeValue, error) {
	if s.stuckErr != nil {
		return nil, nil, s.stuckErr
	}
	s.mu.Lock()
	var keys []string
	for k, r := range s.recs {
		if !r.Status.Terminal() && store.ShardOf(k) == shard {
			keys = append(keys, k)
		}
	}
	s.mu.Unlock()
	slices.Sort(keys)
	start := 0
	if cursor != nil {
		start, _ = strconv.Atoi(cursor["i"].(*dbtypes.AttributeValueMemberN).Value)
	}
	end := min(start+int(min(limit, 2)), len(keys))
	var out []store.StuckRecord
	for _, k := range keys[start:end] {
		out = append(out, store.StuckRecord{Key: k})
	}
	if end == len(keys) {
		return out, nil, nil
	}
	return out, map[string]dbtypes.AttributeValue{"i": &dbtypes.AttributeValueMemberN{Value: strconv.Itoa(end)}}, nil
}

func (s *fakeStore) scanStatus(_ context.Context, q scanQuery) (scanResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.scans = append(s.scans, q)
	res := scanResult{read: s.scanRead, more: s.scanMore}
	for _, r := range s.recs {
		if slices.Contains(q.statuses, r.Status) && r.UpdatedAt >= q.since.UnixMilli() && (q.tenant == "" || r.Tenant == q.tenant) {
			c := *r
			res.records = append(res.records, &c)
		}
	}
	return res, nil
}

// fakeQueue is the main queue.
type fakeQueue struct {
	mu    sync.Mutex
	sent  []webhook.Envelope
	calls int
	// fail makes the n-th Send (1-based) fail for these indexes of its batch.
	failCall int
	failIdx  []int
}

func (q *fakeQueue) Send(_ context.Context, envs []webhook.Envelope) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.calls++
	if q.calls == q.failCall {
		for i, e := range envs {
			if !slices.Contains(q.failIdx, i) {
				q.sent = append(q.sent, e)
			}
		}
		return &queue.SendError{Failed: q.failIdx, Err: errors.New("throttled")}
	}
	q.sent = append(q.sent, envs...)
	return nil
}

func (q *fakeQueue) keys() []string {
	var ks []string
	for _, e := range q.sent {
		ks = append(ks, e.Key)
	}
	return ks
}

// fakeSQS holds queues by URL; a received message stays hidden until it is
// deleted or its visibility is set to 0 (hiding never times out here).
type fakeSQS struct {
	mu     sync.Mutex
	queues map[string][]*fakeMsg
	next   int
	// moveTask: "" unsupported (an API error), "complete" moves all.
	moveTask string
	// reject makes SendMessageBatch refuse entries with this body.
	reject string
	// failDeletes fails DeleteMessageBatch this many times.
	failDeletes int
	deletes     int
}

type fakeMsg struct {
	id, body, handle string
	attrs            map[string]sqstypes.MessageAttributeValue
	hidden           bool
	receives         int
}

func newFakeSQS() *fakeSQS { return &fakeSQS{queues: map[string][]*fakeMsg{}} }

func (f *fakeSQS) add(url, body, key string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.next++
	m := &fakeMsg{id: fmt.Sprintf("m%03d", f.next), body: body, attrs: map[string]sqstypes.MessageAttributeValue{}}
	if key != "" {
		m.attrs[queue.AttrEventKey] = sqstypes.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(key)}
		m.attrs[queue.AttrReason] = sqstypes.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String("permanent: boom")}
	}
	f.queues[url] = append(f.queues[url], m)
}

// bodies returns the bodies in url, hidden ones too.
func (f *fakeSQS) bodies(url string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, m := range f.queues[url] {
		out = append(out, m.body)
	}
	return out
}

func (f *fakeSQS) visible(url string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, m := range f.queues[url] {
		if !m.hidden {
			n++
		}
	}
	return n
}

func (f *fakeSQS) ReceiveMessage(_ context.Context, in *sqs.ReceiveMessageInput, _ ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := &sqs.ReceiveMessageOutput{}
	for _, m := range f.queues[*in.QueueUrl] {
		if len(out.Messages) == int(in.MaxNumberOfMessages) {
			break
		}
		if m.hidden {
			continue
		}
		m.receives++
		f.next++
		m.handle = fmt.Sprintf("h%d", f.next)
		m.hidden = in.VisibilityTimeout > 0
		out.Messages = append(out.Messages, sqstypes.Message{MessageId: aws.String(m.id), ReceiptHandle: aws.String(m.handle),
			Body: aws.String(m.body), MessageAttributes: m.attrs,
			Attributes: map[string]string{"SentTimestamp": strconv.FormatInt(testNow.UnixMilli(), 10), "ApproximateReceiveCount": strconv.Itoa(m.receives)}})
	}
	return out, nil
}

func (f *fakeSQS) SendMessageBatch(_ context.Context, in *sqs.SendMessageBatchInput, _ ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error) {
	out := &sqs.SendMessageBatchOutput{}
	for _, e := range in.Entries {
		if f.reject != "" && aws.ToString(e.MessageBody) == f.reject {
			out.Failed = append(out.Failed, sqstypes.BatchResultErrorEntry{Id: e.Id, Code: aws.String("InvalidMessageContents"), Message: aws.String("no")})
			continue
		}
		key := ""
		if v, ok := e.MessageAttributes[queue.AttrEventKey]; ok {
			key = aws.ToString(v.StringValue)
		}
		f.add(*in.QueueUrl, aws.ToString(e.MessageBody), key)
		out.Successful = append(out.Successful, sqstypes.SendMessageBatchResultEntry{Id: e.Id})
	}
	return out, nil
}

func (f *fakeSQS) DeleteMessageBatch(_ context.Context, in *sqs.DeleteMessageBatchInput, _ ...func(*sqs.Options)) (*sqs.DeleteMessageBatchOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.deletes++
	if f.failDeletes > 0 {
		f.failDeletes--
		return nil, errors.New("connection reset")
	}
	out := &sqs.DeleteMessageBatchOutput{}
	for _, e := range in.Entries {
		msgs := f.queues[*in.QueueUrl]
		for i, m := range msgs {
			if m.handle == aws.ToString(e.ReceiptHandle) {
				f.queues[*in.QueueUrl] = slices.Delete(msgs, i, i+1)
				out.Successful = append(out.Successful, sqstypes.DeleteMessageBatchResultEntry{Id: e.Id})
				break
			}
		}
	}
	return out, nil
}

func (f *fakeSQS) ChangeMessageVisibilityBatch(_ context.Context, in *sqs.ChangeMessageVisibilityBatchInput, _ ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityBatchOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, e := range in.Entries {
		for _, m := range f.queues[*in.QueueUrl] {
			if m.handle == aws.ToString(e.ReceiptHandle) {
				m.hidden = e.VisibilityTimeout > 0
			}
		}
	}
	return &sqs.ChangeMessageVisibilityBatchOutput{}, nil
}

func (f *fakeSQS) GetQueueAttributes(_ context.Context, in *sqs.GetQueueAttributesInput, _ ...func(*sqs.Options)) (*sqs.GetQueueAttributesOutput, error) {
	name := (*in.QueueUrl)[strings.LastIndex(*in.QueueUrl, "/")+1:]
	return &sqs.GetQueueAttributesOutput{Attributes: map[string]string{"QueueArn": "arn:aws:sqs:us-east-1:1:" + name}}, nil
}

func (f *fakeSQS) urlOf(arn string) string {
	return "http://sqs.test/1/" + arn[strings.LastIndex(arn, ":")+1:]
}

func (f *fakeSQS) StartMessageMoveTask(_ context.Context, in *sqs.StartMessageMoveTaskInput, _ ...func(*sqs.Options)) (*sqs.StartMessageMoveTaskOutput, error) {
	if f.moveTask == "" {
		return nil, &smithy.GenericAPIError{Code: "UnsupportedOperation", Message: "not here"}
	}
	f.mu.Lock()
	src, dst := f.urlOf(*in.SourceArn), f.urlOf(aws.ToString(in.DestinationArn))
	f.queues[dst] = append(f.queues[dst], f.queues[src]...)
	f.next = len(f.queues[src])
	f.queues[src] = nil
	f.mu.Unlock()
	return &sqs.StartMessageMoveTaskOutput{TaskHandle: aws.String("task-1")}, nil
}

func (f *fakeSQS) ListMessageMoveTasks(context.Context, *sqs.ListMessageMoveTasksInput, ...func(*sqs.Options)) (*sqs.ListMessageMoveTasksOutput, error) {
	n := int64(f.next)
	return &sqs.ListMessageMoveTasksOutput{Results: []sqstypes.ListMessageMoveTasksResultEntry{
		{Status: aws.String("COMPLETED"), ApproximateNumberOfMessagesMoved: n, ApproximateNumberOfMessagesToMove: &n}}}, nil
}

//go:build integration

package wiring_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/hookwall/hookwall/functions/compensator/wiring"
	"github.com/hookwall/hookwall/shared/aws/awstest"
	"github.com/hookwall/hookwall/shared/aws/queue"
	"github.com/hookwall/hookwall/shared/base/obs"
	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/base/webhook/webhooktest"
	"github.com/hookwall/hookwall/shared/engine/compensate"
	"github.com/hookwall/hookwall/shared/engine/dispatch"
	"github.com/hookwall/hookwall/shared/engine/process"
	"github.com/hookwall/hookwall/shared/engine/processtest"
	"github.com/hookwall/hookwall/shared/engine/sweep"
	"github.com/hookwall/hookwall/shared/state/store"
)

// The compensator through its Lambda handler (wiring.New, HandleSQS), on a
// table in DynamoDB Local and queues on the local SQS server, with the real
// store.Table, queue.Queue and dispatch.Dispatcher: issue 8's must-show 1
// and 2.

type follow struct {
	UserID string `json:"userId"`
}

var followType = webhook.NewType[follow]("line", "follow")

const lease = time.Minute

// stack is one test's table, queues, clock and outcome recorder.
type stack struct {
	t       *testing.T
	clock   *webhooktest.Clock
	table   *store.Table
	proc    *store.Table // the same table as the processor writes it
	sqs     *sqs.Client
	main    *queue.Queue
	dlq     *queue.Queue
	pub     *webhooktest.Outcomes
	metrics *obs.Metrics
}

func newStack(t *testing.T) *stack {
	t.Helper()
	db := awstest.DynamoDB(t)
	clk := webhooktest.NewClock(time.Now())
	name := awstest.NewTable(t, db)
	table, err := store.New(store.Config{Client: db, TableName: name, Now: clk.Now, Function: "compensator"})
	if err != nil {
		t.Fatal(err)
	}
	proc, err := store.New(store.Config{Client: db, TableName: name, Now: clk.Now, Function: "processor"})
	if err != nil {
		t.Fatal(err)
	}
	c := awstest.SQS(t)
	qs := awstest.NewQueues(t, c, 10, 30*time.Second)
	main, err := queue.New(queue.Config{Client: c, URL: qs.URL})
	if err != nil {
		t.Fatal(err)
	}
	dlq, err := queue.New(queue.Config{Client: c, URL: qs.DLQURL})
	if err != nil {
		t.Fatal(err)
	}
	return &stack{t: t, clock: clk, table: table, proc: proc, sqs: c, main: main, dlq: dlq, pub: &webhooktest.Outcomes{},
		metrics: obs.NewMetrics(io.Discard, "Test", map[string]string{"Function": "compensator"})}
}

var discard = slog.New(slog.NewTextHandler(io.Discard, nil))

// handler is the compensator's Lambda handler on the stack, its store
// wrapped by wrap (nil: none).
func (s *stack) handler(reg *process.Registry, wrap func(compensate.Store) compensate.Store, transport http.RoundTripper) *wiring.Handler {
	s.t.Helper()
	var st compensate.Store = s.table
	if wrap != nil {
		st = wrap(st)
	}
	c, err := compensate.New(compensate.Config{Registry: reg, Store: st, Requeue: s.main, Kernel: compensate.Kernel{Queue: s.dlq,
		Publisher: s.pub, Metrics: s.metrics, Logger: discard, Now: s.clock.Now, LeaseDuration: lease, Transport: transport}})
	if err != nil {
		s.t.Fatal(err)
	}
	return wiring.New(c, noSweep{}, 0, s.metrics, discard)
}

type noSweep struct{}

func (noSweep) Run(context.Context) (sweep.Report, error) { return sweep.Report{}, nil }

// claim claims a new event as the receiver does and returns its envelope.
func (s *stack) claim(ctx context.Context, id string) webhook.Envelope {
	s.t.Helper()
	payload := []byte(`{"userId":"U1"}`)
	sum := sha256.Sum256(payload)
	res, err := s.table.Claim(ctx, store.NewEvent{Key: "line#acme#" + id + "-" + awstest.Name("k"), Provider: "line", Tenant: "acme",
		EventType: "follow", PayloadHash: hex.EncodeToString(sum[:]), Payload: payload}, 24*time.Hour)
	if err != nil || res.Outcome != store.Claimed {
		s.t.Fatalf("claim: %v (%v)", res.Outcome, err)
	}
	return res.Record.Envelope()
}

// receive receives one message from url, making it visible first if
// asked (as if its visibility timeout had run out), as the Lambda event
// source would hand it over.
func (s *stack) receive(ctx context.Context, url, makeVisible string) events.SQSEvent {
	s.t.Helper()
	if makeVisible != "" {
		if _, err := s.sqs.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: &url,
			ReceiptHandle: &makeVisible, VisibilityTimeout: 0}); err != nil {
			s.t.Fatal(err)
		}
	}
	msgs, err := awstest.Receive(ctx, s.sqs, url, 1, 5*time.Second)
	if err != nil {
		s.t.Fatal(err)
	}
	if len(msgs) != 1 {
		s.t.Fatalf("received %d messages from %s, want 1", len(msgs), url)
	}
	m := msgs[0]
	return events.SQSEvent{Records: []events.SQSMessage{{MessageId: aws.ToString(m.MessageId),
		ReceiptHandle: aws.ToString(m.ReceiptHandle), Body: aws.ToString(m.Body), EventSource: "aws:sqs"}}}
}

// ack deletes the messages of ev that resp does not report failed, as the
// event source does.
func (s *stack) ack(ctx context.Context, url string, ev events.SQSEvent, resp events.SQSEventResponse) {
	s.t.Helper()
	failed := map[string]bool{}
	for _, f := range resp.BatchItemFailures {
		failed[f.ItemIdentifier] = true
	}
	for _, r := range ev.Records {
		if !failed[r.MessageId] {
			if _, err := s.sqs.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: &url, ReceiptHandle: &r.ReceiptHandle}); err != nil {
				s.t.Fatal(err)
			}
		}
	}
}

func (s *stack) depth(ctx context.Context, url string) int {
	s.t.Helper()
	out, err := s.sqs.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: &url, AttributeNames: []sqstypes.QueueAttributeName{
		sqstypes.QueueAttributeNameApproximateNumberOfMessages, sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible}})
	if err != nil {
		s.t.Fatal(err)
	}
	n := 0
	for _, k := range []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameApproximateNumberOfMessages,
		sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible} {
		var v int
		for _, c := range out.Attributes[string(k)] {
			v = v*10 + int(c-'0')
		}
		n += v
	}
	return n
}

func (s *stack) get(ctx context.Context, key string) *store.Record {
	s.t.Helper()
	rec, err := s.table.Get(ctx, key)
	if err != nil || rec == nil {
		s.t.Fatalf("get %s: %v (missing %v)", key, err, rec == nil)
	}
	return rec
}

// crashStore crashes the attempt at its first undo journal write, before
// or after the write lands; from then on every write of that attempt is a
// no-op (a dead worker's writes never land) and its heartbeat extends
// nothing.
type crashStore struct {
	compensate.Store
	afterWrite bool

	mu   sync.Mutex
	dead string
}

var errCrashed = errors.New("simulated crash")

func (c *crashStore) isDead(owner string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.dead != "" && c.dead == owner
}

func (c *crashStore) SaveStep(ctx context.Context, l webhook.Lease, e webhook.JournalEntry) (bool, error) {
	if c.isDead(l.Owner) {
		return false, nil
	}
	if strings.HasPrefix(e.Step, "$undo:") { // a compensation step (shared/internal/registry.UndoStep)
		c.mu.Lock()
		first := c.dead == ""
		if first {
			c.dead = l.Owner
		}
		c.mu.Unlock()
		if first {
			if c.afterWrite {
				if _, err := c.Store.SaveStep(ctx, l, e); err != nil {
					return false, err
				}
			}
			return false, errCrashed
		}
	}
	return c.Store.SaveStep(ctx, l, e)
}

func (c *crashStore) HeartbeatCompensation(ctx context.Context, l webhook.Lease, until time.Time) (bool, error) {
	if c.isDead(l.Owner) {
		return true, nil
	}
	return c.Store.HeartbeatCompensation(ctx, l, until)
}

func (c *crashStore) Compensated(ctx context.Context, l webhook.Lease, r time.Time) (bool, error) {
	if c.isDead(l.Owner) {
		return false, nil
	}
	return c.Store.Compensated(ctx, l, r)
}

func (c *crashStore) Dead(ctx context.Context, l webhook.Lease, reason string, r time.Time) (bool, error) {
	if c.isDead(l.Owner) {
		return false, nil
	}
	return c.Store.Dead(ctx, l, reason, r)
}

func (c *crashStore) RetryCompensation(ctx context.Context, l webhook.Lease, e string) (bool, error) {
	if c.isDead(l.Owner) {
		return false, nil
	}
	return c.Store.RetryCompensation(ctx, l, e)
}

// Must-show 1: a handler fails permanently after two journaled steps; the
// compensator undoes both, newest first, each once, even when it is crashed
// after the first undo and the dead letter is then redelivered three times.
func TestCompensatesTwoStepsOnceAcrossACrashAndRedeliveries(t *testing.T) {
	for _, tc := range []struct {
		name       string
		afterWrite bool
		wantCalls  []string // undo calls, in order
	}{
		// The undo ran and was journaled: never run again.
		{"crash after the undo's journal write", true, []string{"two", "one"}},
		// The undo ran but was not journaled: run again, with the same key.
		{"crash before the undo's journal write", false, []string{"two", "two", "one"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			s := newStack(t)
			api := processtest.NewEffectServer(t, nil)

			var mu sync.Mutex
			var calls []string
			reg := process.NewRegistry()
			process.Handle(reg, "test.two-steps", followType, func(ctx context.Context, ev *process.Event[follow]) error {
				for _, step := range []string{"one", "two"} {
					if err := ev.Step(ctx, step, func(context.Context, string) error { return nil }); err != nil {
						return err
					}
					s.clock.Advance(time.Millisecond) // the steps' CompletedAt differ
				}
				return process.Permanent(errors.New("the partner refused the follower"))
			}, process.Compensate(func(ctx context.Context, u *process.Undo) error {
				mu.Lock()
				calls = append(calls, u.Step)
				mu.Unlock()
				req, _ := http.NewRequestWithContext(ctx, http.MethodDelete, api.URL+"/things/"+u.Step, nil)
				resp, err := u.HTTPClient().Do(req)
				if err != nil {
					return err
				}
				resp.Body.Close()
				return process.HTTPStatus(resp.StatusCode)
			}))

			// The processor: the event goes FAILED and its message to the DLQ.
			env := s.claim(ctx, "ms1")
			if err := s.main.Send(ctx, []webhook.Envelope{env}); err != nil {
				t.Fatal(err)
			}
			d, err := dispatch.New(dispatch.Config{Registry: reg, Store: s.proc, DLQ: s.dlq,
				Kernel: dispatch.Kernel{Queue: s.main, Now: s.clock.Now, LeaseDuration: lease, Logger: discard}})
			if err != nil {
				t.Fatal(err)
			}
			in := s.receive(ctx, s.main.URL(), "")
			res := d.Handle(ctx, dispatch.Message{MessageID: in.Records[0].MessageId, ReceiptHandle: in.Records[0].ReceiptHandle,
				Body: []byte(in.Records[0].Body)})
			if res.Verdict != dispatch.Failed || !res.Ack {
				t.Fatalf("processor: got %s (%v), want failed", res.Verdict, res.Err)
			}
			s.ack(ctx, s.main.URL(), in, events.SQSEventResponse{})

			// Delivery 1: crashed after the first undo.
			crash := &crashStore{afterWrite: tc.afterWrite}
			h := s.handler(reg, func(st compensate.Store) compensate.Store { crash.Store = st; return crash }, api.Client().Transport)
			ev := s.receive(ctx, s.dlq.URL(), "")
			resp := h.HandleSQS(ctx, ev)
			if len(resp.BatchItemFailures) != 1 {
				t.Fatalf("crashed delivery: got failures %+v, want the message reported failed", resp.BatchItemFailures)
			}
			if rec := s.get(ctx, env.Key); rec.Status != webhook.StatusCompensating {
				t.Fatalf("after the crash: record %s, want COMPENSATING", rec.Status)
			}
			s.clock.Advance(lease + time.Second) // the dead attempt's lease runs out

			// Redelivered three times; the deletes of the first two are lost, so
			// the same message comes back.
			rh := ev.Records[0].ReceiptHandle
			var got []string
			for i := range 3 {
				ev = s.receive(ctx, s.dlq.URL(), rh)
				rh = ev.Records[0].ReceiptHandle
				resp = s.handler(reg, nil, api.Client().Transport).HandleSQS(ctx, ev)
				if len(resp.BatchItemFailures) != 0 {
					t.Fatalf("redelivery %d: got failures %+v, want it acknowledged", i+1, resp.BatchItemFailures)
				}
				rec := s.get(ctx, env.Key)
				got = append(got, string(rec.Status))
				if i == 2 {
					s.ack(ctx, s.dlq.URL(), ev, resp)
				}
			}
			if want := []string{"COMPENSATED", "COMPENSATED", "COMPENSATED"}; !slices.Equal(got, want) {
				t.Errorf("after each redelivery: got %v, want %v", got, want)
			}
			mu.Lock()
			gotCalls := slices.Clone(calls)
			mu.Unlock()
			if !slices.Equal(gotCalls, tc.wantCalls) {
				t.Errorf("undo calls: got %v, want %v (newest first, the crashed one again only if not journaled)", gotCalls, tc.wantCalls)
			}
			// Each undo is one effect, under its own key, distinct from the forward step's.
			api.AssertOnce(t)
			wantKeys := []string{webhook.IdempotencyKey(env.Key, "test.two-steps", "$undo:one"),
				webhook.IdempotencyKey(env.Key, "test.two-steps", "$undo:two")}
			slices.Sort(wantKeys)
			if keys := api.Keys(); !slices.Equal(keys, wantKeys) {
				t.Errorf("effect keys: got %v, want %v", keys, wantKeys)
			}
			rec := s.get(ctx, env.Key)
			steps, err := s.table.Steps(ctx, env.Key, rec.ClaimID)
			if err != nil {
				t.Fatal(err)
			}
			var journal []string
			for _, e := range steps {
				journal = append(journal, e.Step)
			}
			slices.Sort(journal)
			if want := []string{"$undo:one", "$undo:two", "one", "two"}; !slices.Equal(journal, want) {
				t.Errorf("journal: got %v, want %v", journal, want)
			}
			if rec.Compensations != 2 || rec.LeaseOwner != "" {
				t.Errorf("record: %d compensations, lease %q; want 2 (the crashed one and the one that finished), none", rec.Compensations, rec.LeaseOwner)
			}
			if outs := s.pub.All(); len(outs) != 1 || outs[0].Status != webhook.StatusCompensated || outs[0].Key != env.Key {
				t.Errorf("outcomes: got %+v, want one COMPENSATED", outs)
			}
			if n := s.depth(ctx, s.dlq.URL()); n != 0 {
				t.Errorf("dead-letter queue: %d messages left, want 0", n)
			}
			var trail []string
			for _, h := range rec.History {
				trail = append(trail, string(h.From)+">"+string(h.To)+"/"+h.Function)
			}
			t.Logf("undo calls %v; history %v", gotCalls, trail)
		})
	}
}

// Must-show 2: a dead letter whose record is SUCCEEDED is acknowledged and
// changes nothing; one whose record holds a live lease is reported failed
// and handled when it comes back.
func TestSucceededIsAcknowledgedAndLiveLeaseComesBack(t *testing.T) {
	ctx := context.Background()
	s := newStack(t)
	reg := process.NewRegistry()
	var undos []string
	process.Handle(reg, "test.one-step", followType, func(ctx context.Context, ev *process.Event[follow]) error {
		return ev.Step(ctx, "one", func(context.Context, string) error { return nil })
	}, process.Compensate(func(_ context.Context, u *process.Undo) error {
		undos = append(undos, u.Envelope.Key+"/"+u.Step)
		return nil
	}))
	h := s.handler(reg, nil, nil)

	t.Run("SUCCEEDED is acknowledged and unchanged", func(t *testing.T) {
		env := s.claim(ctx, "ok")
		d, err := dispatch.New(dispatch.Config{Registry: reg, Store: s.proc, DLQ: s.dlq,
			Kernel: dispatch.Kernel{Queue: s.main, Now: s.clock.Now, Logger: discard}})
		if err != nil {
			t.Fatal(err)
		}
		body, err := queue.EncodeMessage(&env)
		if err != nil {
			t.Fatal(err)
		}
		if res := d.Handle(ctx, dispatch.Message{MessageID: "p", Body: body}); res.Verdict != dispatch.Succeeded {
			t.Fatalf("processor: got %s", res.Verdict)
		}
		before := s.get(ctx, env.Key)
		// A late copy reaches the DLQ (SQS's redrive of a duplicate).
		if err := s.dlq.SendDeadLetter(ctx, env.Key, body, "redriven"); err != nil {
			t.Fatal(err)
		}
		ev := s.receive(ctx, s.dlq.URL(), "")
		resp := h.HandleSQS(ctx, ev)
		if len(resp.BatchItemFailures) != 0 {
			t.Errorf("got failures %+v, want the message acknowledged", resp.BatchItemFailures)
		}
		s.ack(ctx, s.dlq.URL(), ev, resp)
		if after := s.get(ctx, env.Key); !reflect.DeepEqual(after, before) {
			t.Errorf("record changed:\n got %+v\nwant %+v", after, before)
		}
		if len(undos) != 0 || len(s.pub.All()) != 0 {
			t.Errorf("undos %v, outcomes %+v; want none", undos, s.pub.All())
		}
	})

	t.Run("a live lease comes back and is then compensated", func(t *testing.T) {
		env := s.claim(ctx, "busy")
		// A processor holds the lease, has journaled a step and is still at work.
		acq, err := s.proc.Acquire(ctx, env.Key, "worker-a", s.clock.Now().Add(lease))
		if err != nil || acq.Outcome != webhook.Acquired {
			t.Fatalf("acquire: %v (%v)", acq.Outcome, err)
		}
		if held, err := s.proc.SaveStep(ctx, acq.Lease, webhook.JournalEntry{Handler: "test.one-step", Step: "one",
			CompletedAt: s.clock.Now()}); err != nil || !held {
			t.Fatalf("save step: %v (%v)", held, err)
		}
		body, err := queue.EncodeMessage(&env)
		if err != nil {
			t.Fatal(err)
		}
		// SQS redrove the message after maxReceiveCount while the lease lives.
		if err := s.dlq.SendDeadLetter(ctx, env.Key, body, "redriven"); err != nil {
			t.Fatal(err)
		}
		before := s.get(ctx, env.Key)
		ev := s.receive(ctx, s.dlq.URL(), "")
		resp := h.HandleSQS(ctx, ev)
		if len(resp.BatchItemFailures) != 1 || resp.BatchItemFailures[0].ItemIdentifier != ev.Records[0].MessageId {
			t.Fatalf("got failures %+v, want the message reported failed", resp.BatchItemFailures)
		}
		s.ack(ctx, s.dlq.URL(), ev, resp)
		if after := s.get(ctx, env.Key); !reflect.DeepEqual(after, before) {
			t.Errorf("record changed:\n got %+v\nwant %+v", after, before)
		}
		// The message is hidden until the lease runs out (61s, rounded up to seconds).
		if msgs, err := awstest.Receive(ctx, s.sqs, s.dlq.URL(), 10, 0); err != nil || len(msgs) != 0 {
			t.Errorf("the message is visible again at once: %d messages (%v)", len(msgs), err)
		}

		// The worker died; its lease runs out and the message comes back.
		s.clock.Advance(lease + time.Second)
		ev = s.receive(ctx, s.dlq.URL(), ev.Records[0].ReceiptHandle)
		resp = h.HandleSQS(ctx, ev)
		if len(resp.BatchItemFailures) != 0 {
			t.Fatalf("on its return: got failures %+v, want it acknowledged", resp.BatchItemFailures)
		}
		s.ack(ctx, s.dlq.URL(), ev, resp)
		rec := s.get(ctx, env.Key)
		if rec.Status != webhook.StatusCompensated || !slices.Equal(undos, []string{env.Key + "/one"}) {
			t.Errorf("got %s with undos %v, want COMPENSATED after undoing the step", rec.Status, undos)
		}
		if n := s.depth(ctx, s.dlq.URL()); n != 0 {
			t.Errorf("dead-letter queue: %d messages left, want 0", n)
		}
	})
}

// An event SQS redrove to the DLQ before the processor ever ran it (the
// model's finding: it used to end DEAD, "nothing to compensate") goes back
// to the main queue, its record RETRY, and the processor then does it.
func TestRedrivenBeforeItRanIsRequeuedAndProcessed(t *testing.T) {
	ctx := context.Background()
	s := newStack(t)
	reg := process.NewRegistry()
	ran := 0
	process.Handle(reg, "test.one-step", followType, func(ctx context.Context, ev *process.Event[follow]) error {
		return ev.Step(ctx, "one", func(context.Context, string) error { ran++; return nil })
	}, process.Compensate(func(context.Context, *process.Undo) error { t.Error("undo called"); return nil }))
	h := s.handler(reg, nil, nil)
	env := s.claim(ctx, "redriven")
	body, err := queue.EncodeMessage(&env)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.dlq.SendDeadLetter(ctx, env.Key, body, "redriven"); err != nil {
		t.Fatal(err)
	}
	ev := s.receive(ctx, s.dlq.URL(), "")
	resp := h.HandleSQS(ctx, ev)
	if len(resp.BatchItemFailures) != 0 {
		t.Fatalf("got failures %+v, want the dead letter acknowledged", resp.BatchItemFailures)
	}
	s.ack(ctx, s.dlq.URL(), ev, resp)
	if rec := s.get(ctx, env.Key); rec.Status != webhook.StatusRetry || rec.Compensations != 1 {
		t.Fatalf("record: %s after %d compensations, want RETRY after 1", rec.Status, rec.Compensations)
	}
	main := s.receive(ctx, s.main.URL(), "")
	d, err := dispatch.New(dispatch.Config{Registry: reg, Store: s.proc, DLQ: s.dlq,
		Kernel: dispatch.Kernel{Queue: s.main, Now: s.clock.Now, Logger: discard}})
	if err != nil {
		t.Fatal(err)
	}
	if res := d.Handle(ctx, dispatch.Message{MessageID: main.Records[0].MessageId, Body: []byte(main.Records[0].Body)}); res.Verdict != dispatch.Succeeded {
		t.Fatalf("processor on the requeued message: got %s (%v)", res.Verdict, res.Err)
	}
	if rec := s.get(ctx, env.Key); rec.Status != webhook.StatusSucceeded || ran != 1 {
		t.Errorf("record %s, step ran %d times; want SUCCEEDED, once", rec.Status, ran)
	}
	if len(s.pub.All()) != 0 {
		t.Errorf("the compensator published %+v, want nothing (the event was not terminal)", s.pub.All())
	}
}

//go:build integration

package recovery_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/hookwall/hookwall/shared/aws/awstest"
	"github.com/hookwall/hookwall/shared/aws/queue"
	"github.com/hookwall/hookwall/shared/base/obs"
	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/engine/compensate"
	"github.com/hookwall/hookwall/shared/engine/dispatch"
	"github.com/hookwall/hookwall/shared/engine/process"
	"github.com/hookwall/hookwall/shared/internal/kernel"
	"github.com/hookwall/hookwall/shared/ops/recovery"
	"github.com/hookwall/hookwall/shared/state/store"
)

// crm is the outside system of the redo tests: an API that creates a lead
// per idempotency key (a key seen again answers the same lead, doing
// nothing) and deletes one per undo key.
type crm struct {
	mu      sync.Mutex
	byKey   map[string]string // idempotency key → lead id
	live    map[string]bool   // lead id → not deleted
	creates int               // leads created (calls not deduplicated)
	deletes int
	keys    []string // the create keys, in order
}

func newCRM() *crm { return &crm{byKey: map[string]string{}, live: map[string]bool{}} }

func (c *crm) create(key string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.keys = append(c.keys, key)
	if id, ok := c.byKey[key]; ok {
		return id
	}
	c.creates++
	id := fmt.Sprintf("lead-%d", c.creates)
	c.byKey[key], c.live[id] = id, true
	return id
}

func (c *crm) delete(key, id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.byKey[key]; ok {
		return
	}
	c.byKey[key] = id
	if c.live[id] {
		c.deletes++
		c.live[id] = false
	}
}

func (c *crm) liveLeads() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, l := range c.live {
		if l {
			n++
		}
	}
	return n
}

// redoWorld is a world with a handler that creates a lead (compensated by
// deleting it) and then calls a target that refuses while broken, and the
// compensator on the dead-letter queue.
type redoWorld struct {
	*world
	crm    *crm
	broken atomic.Bool
	dlq    *queue.Queue
	d      *dispatch.Dispatcher
	c      *compensate.Compensator
	// metrics are the compensator's.
	metrics *obs.Metrics
}

const leadHandler = "crm.lead"

var discard = slog.New(slog.NewTextHandler(io.Discard, nil))

func newRedoWorld(t *testing.T) *redoWorld {
	t.Helper()
	w := &redoWorld{world: newWorld(t), crm: newCRM(), metrics: obs.NewMetrics(io.Discard, "Hookwall", nil)}
	var err error
	if w.dlq, err = queue.New(queue.Config{Client: w.sq, URL: w.queues.DLQURL}); err != nil {
		t.Fatal(err)
	}
	reg := process.NewRegistry()
	process.HandleAll(reg, leadHandler, func(ctx context.Context, ev *process.Event[webhook.Envelope]) error {
		if _, err := process.StepResult(ctx, ev, "create-lead", func(_ context.Context, key string) (string, error) {
			return w.crm.create(key), nil
		}); err != nil {
			return err
		}
		if w.broken.Load() {
			return process.Permanent(errors.New("welcome mail: 400 template missing"))
		}
		return nil
	}, process.Compensate(func(_ context.Context, u *process.Undo) error {
		id, err := process.UndoResult[string](u)
		if err != nil {
			return err
		}
		w.crm.delete(u.IdempotencyKey, id)
		return nil
	}))
	processor, err := store.New(store.Config{Client: w.db, TableName: w.name, Function: "processor"})
	if err != nil {
		t.Fatal(err)
	}
	if w.d, err = dispatch.New(dispatch.Config{Registry: reg, Store: processor, DLQ: w.dlq,
		Kernel: dispatch.Kernel{Queue: w.mainQ, Logger: discard}}); err != nil {
		t.Fatal(err)
	}
	compensator, err := store.New(store.Config{Client: w.db, TableName: w.name, Function: "compensator"})
	if err != nil {
		t.Fatal(err)
	}
	if w.c, err = compensate.New(compensate.Config{Registry: reg, Store: compensator, Requeue: w.mainQ,
		Kernel: compensate.Kernel{Queue: w.dlq, Logger: discard, Metrics: w.metrics}}); err != nil {
		t.Fatal(err)
	}
	return w
}

// claim claims a new event and sends it to the main queue, as the receiver does.
func (w *redoWorld) claim(t *testing.T, id string) string {
	t.Helper()
	key := "line#acme#" + id + "-" + awstest.Name("k")
	res, err := w.table.Claim(w.ctx, store.NewEvent{Key: key, Provider: "line", Tenant: "acme", EventType: "follow",
		PayloadHash: "h" + key, Payload: []byte(`{"type":"follow"}`)}, window)
	if err != nil || res.Outcome != store.Claimed {
		t.Fatalf("claim %s: %v %v", key, res.Outcome, err)
	}
	if err := w.mainQ.Send(w.ctx, []webhook.Envelope{res.Record.Envelope()}); err != nil {
		t.Fatal(err)
	}
	return key
}

// drain handles every message on url once with h, deleting those h
// acknowledges, and returns the verdicts.
func (w *redoWorld) drain(t *testing.T, url string, h func(context.Context, kernel.Message) kernel.Result) []string {
	t.Helper()
	var verdicts []string
	for _, m := range awstest.Drain(t, w.sq, url) {
		res := h(w.ctx, kernel.Message{MessageID: aws.ToString(m.MessageId), ReceiptHandle: aws.ToString(m.ReceiptHandle),
			Body: []byte(aws.ToString(m.Body))})
		verdicts = append(verdicts, res.Verdict.String())
		if res.Ack {
			if _, err := w.sq.DeleteMessage(w.ctx, &sqs.DeleteMessageInput{QueueUrl: &url, ReceiptHandle: m.ReceiptHandle}); err != nil {
				t.Fatal(err)
			}
		}
	}
	return verdicts
}

// TestCompensatedEventRecoveredRunsItsUndoneStepAgain is item 3's must-show:
// an event whose second call fails permanently is FAILED, its lead undone
// by the compensator (COMPENSATED); once the target is fixed, a recovery
// job of COMPENSATED events replays it and the processor runs create-lead
// again, under a new idempotency key (the old one would be answered from
// the CRM's idempotency store with the deleted lead), and it ends
// SUCCEEDED with a live lead.
func TestCompensatedEventRecoveredRunsItsUndoneStepAgain(t *testing.T) {
	w := newRedoWorld(t)
	since := time.Now().Add(-time.Minute)
	w.broken.Store(true)
	key := w.claim(t, "redo")
	if got := w.drain(t, w.queues.URL, w.d.Handle); strings.Join(got, ",") != "failed" {
		t.Fatalf("processor: %v, want failed", got)
	}
	if got := w.drain(t, w.queues.DLQURL, w.c.Handle); strings.Join(got, ",") != "compensated" {
		t.Fatalf("compensator: %v, want compensated", got)
	}
	if st := w.status(t, key); st != webhook.StatusCompensated || w.crm.liveLeads() != 0 {
		t.Fatalf("after the compensation: %s with %d live leads, want COMPENSATED with none", st, w.crm.liveLeads())
	}

	w.broken.Store(false) // the target is fixed
	js := w.jobs(t, "cli-1")
	job, err := js.Create(w.ctx, recovery.Filter{Since: since, Until: time.Now().Add(time.Minute), Tenant: "acme",
		Statuses: []webhook.Status{webhook.StatusCompensated}}, 0, "tester")
	if err != nil {
		t.Fatal(err)
	}
	got, err := js.Run(w.ctx, job.ID, nil)
	if err != nil || got.State != recovery.StateDone || got.Counts.Replayed != 1 || got.Counts.NotEnqueued != 0 {
		t.Fatalf("job: %+v %v, want done with 1 replayed and enqueued", got, err)
	}
	if got := w.drain(t, w.queues.URL, w.d.Handle); strings.Join(got, ",") != "succeeded" {
		t.Fatalf("processor after the recovery: %v, want succeeded", got)
	}
	if st := w.status(t, key); st != webhook.StatusSucceeded {
		t.Errorf("after the recovery: %s, want SUCCEEDED", st)
	}
	first, rerun := webhook.IdempotencyKey(key, leadHandler, "create-lead"), webhook.RunKey(key, leadHandler, "create-lead", 1)
	w.crm.mu.Lock()
	keys, creates, deletes := append([]string(nil), w.crm.keys...), w.crm.creates, w.crm.deletes
	w.crm.mu.Unlock()
	if len(keys) != 2 || keys[0] != first || keys[1] != rerun {
		t.Errorf("create-lead calls: %v, want the first key %s then the run-1 key %s", keys, first, rerun)
	}
	if creates != 2 || deletes != 1 || w.crm.liveLeads() != 1 {
		t.Errorf("CRM: %d created, %d deleted, %d live; want 2, 1, 1 (the undone lead made again)", creates, deletes, w.crm.liveLeads())
	}
	rec, err := w.table.Get(w.ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	steps, err := w.table.Steps(w.ctx, key, rec.ClaimID)
	if err != nil {
		t.Fatal(err)
	}
	var journal []string
	for _, e := range steps {
		journal = append(journal, fmt.Sprintf("%s@%d", e.Step, e.Run))
	}
	if strings.Join(journal, " ") != "$undo:create-lead@0 create-lead@1" {
		t.Errorf("journal: %v, want the undo of run 0 and create-lead's run 1", journal)
	}
	t.Logf("create-lead keys %v; CRM %d created, %d deleted; journal %v; job %+v", keys, creates, deletes, journal, got.Counts)

	// Broken again and compensated again: run 1 is undone under its own undo key.
	w.broken.Store(true)
	res, err := w.table.Replay(w.ctx, key, store.ReplayOptions{Force: true, Window: window})
	if err != nil || res.Outcome != store.Replayed {
		t.Fatalf("replay: %v %v", res.Outcome, err)
	}
	if err := w.mainQ.Send(w.ctx, []webhook.Envelope{res.Record.Envelope()}); err != nil {
		t.Fatal(err)
	}
	if got := w.drain(t, w.queues.URL, w.d.Handle); strings.Join(got, ",") != "failed" {
		t.Fatalf("processor, broken again: %v, want failed", got)
	}
	if got := w.drain(t, w.queues.DLQURL, w.c.Handle); strings.Join(got, ",") != "compensated" {
		t.Fatalf("compensator, again: %v, want compensated", got)
	}
	if n := w.crm.liveLeads(); n != 0 {
		t.Errorf("after the second compensation: %d live leads, want 0 (run 1's lead deleted under its own undo key)", n)
	}
}

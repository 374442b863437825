//go:build integration

package recovery_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	dbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/hookwall/hookwall/shared/aws/awstest"
	"github.com/hookwall/hookwall/shared/aws/bus"
	"github.com/hookwall/hookwall/shared/aws/queue"
	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/base/webhook/webhooktest"
	"github.com/hookwall/hookwall/shared/engine/dispatch"
	"github.com/hookwall/hookwall/shared/engine/process"
	"github.com/hookwall/hookwall/shared/ops/recovery"
	"github.com/hookwall/hookwall/shared/state/store"
	"github.com/hookwall/hookwall/shared/state/targets"
	"github.com/hookwall/hookwall/shared/state/targets/targetsdb"
)

// Recovery jobs against DynamoDB Local and the SQS server through the real
// SDK: FAILED records made with the store, a job that replays and enqueues
// them, and the processor's dispatcher with a handler that now succeeds.

const (
	window   = 24 * time.Hour
	pageSize = 7 // items a Scan page reads: the windows span pages
)

// world is one test's table, queues, processor and fakes.
type world struct {
	ctx    context.Context
	db     *dynamodb.Client
	sq     *sqs.Client
	name   string
	table  *store.Table
	queues awstest.Queues
	mainQ  *queue.Queue
	d      *dispatch.Dispatcher
	limit  *limiter
	ops    *opsLog

	mu    sync.Mutex
	calls map[string]int // handler runs by event key
}

func newWorld(t *testing.T) *world {
	t.Helper()
	w := &world{ctx: context.Background(), db: awstest.DynamoDB(t), sq: awstest.SQS(t), calls: map[string]int{},
		limit: &limiter{per: 3, taken: map[string]int{}}, ops: &opsLog{}}
	w.name = awstest.NewTable(t, w.db)
	w.queues = awstest.NewQueues(t, w.sq, 10, 30*time.Second)
	var err error
	if w.table, err = store.New(store.Config{Client: w.db, TableName: w.name, Function: "cli"}); err != nil {
		t.Fatal(err)
	}
	if w.mainQ, err = queue.New(queue.Config{Client: w.sq, URL: w.queues.URL}); err != nil {
		t.Fatal(err)
	}
	dlq, err := queue.New(queue.Config{Client: w.sq, URL: w.queues.DLQURL})
	if err != nil {
		t.Fatal(err)
	}
	reg := process.NewRegistry()
	process.HandleAll(reg, "test.crm", func(ctx context.Context, ev *process.Event[webhook.Envelope]) error {
		w.mu.Lock()
		w.calls[ev.Key]++
		w.mu.Unlock()
		return nil
	})
	processor, err := store.New(store.Config{Client: w.db, TableName: w.name, Function: "processor"})
	if err != nil {
		t.Fatal(err)
	}
	if w.d, err = dispatch.New(dispatch.Config{Registry: reg, Store: processor, DLQ: dlq, Kernel: dispatch.Kernel{Queue: w.mainQ}}); err != nil {
		t.Fatal(err)
	}
	return w
}

// jobs returns a Jobs on the world, as one process (owner) runs it.
func (w *world) jobs(t *testing.T, owner string) *recovery.Jobs {
	t.Helper()
	js, err := recovery.New(recovery.Config{DB: w.db, TableName: w.name, Store: w.table, Queue: w.mainQ, Limiter: w.limit,
		Ops: w.ops, Window: window, Owner: owner, PageSize: pageSize})
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// failed makes n FAILED records of tenant, received at the table's now, whose
// last attempt was bound for target ("" for none), and returns their keys.
func (w *world) failed(t *testing.T, tbl *store.Table, prefix, tenant, target string, n int) []string {
	t.Helper()
	var keys []string
	for i := range n {
		key := fmt.Sprintf("line#%s#%s-%03d", tenant, prefix, i)
		payload := fmt.Sprintf(`{"type":"follow","n":%d}`, i)
		res, err := tbl.Claim(w.ctx, store.NewEvent{Key: key, Provider: "line", Tenant: tenant, EventType: "follow",
			PayloadHash: "h" + key, Payload: []byte(payload)}, window)
		if err != nil || res.Outcome != store.Claimed {
			t.Fatalf("claim %s: %v %v", key, res.Outcome, err)
		}
		acq, err := tbl.Acquire(w.ctx, key, "w1", time.Now().Add(time.Minute))
		if err != nil || acq.Outcome != webhook.Acquired {
			t.Fatalf("acquire %s: %v %v", key, acq.Outcome, err)
		}
		if ok, err := tbl.Fail(w.ctx, acq.Lease, "crm: 503"); !ok || err != nil {
			t.Fatalf("fail %s: %v %v", key, ok, err)
		}
		if target != "" {
			if _, err := w.db.UpdateItem(w.ctx, &dynamodb.UpdateItemInput{TableName: &w.name,
				Key: map[string]dbtypes.AttributeValue{"pk": &dbtypes.AttributeValueMemberS{Value: key},
					"sk": &dbtypes.AttributeValueMemberS{Value: store.SKEvent}},
				UpdateExpression:          aws.String("SET #t = :t"),
				ExpressionAttributeNames:  map[string]string{"#t": store.AttrTarget},
				ExpressionAttributeValues: map[string]dbtypes.AttributeValue{":t": &dbtypes.AttributeValueMemberS{Value: target}},
			}); err != nil {
				t.Fatal(err)
			}
		}
		keys = append(keys, key)
	}
	return keys
}

// process runs the processor over every message on the main queue once and
// returns how many it handled.
func (w *world) process(t *testing.T) int {
	t.Helper()
	msgs := awstest.Drain(t, w.sq, w.queues.URL)
	for _, m := range msgs {
		res := w.d.Handle(w.ctx, dispatch.Message{MessageID: aws.ToString(m.MessageId),
			ReceiptHandle: aws.ToString(m.ReceiptHandle), Body: []byte(aws.ToString(m.Body))})
		if res.Verdict != dispatch.Succeeded {
			t.Errorf("message for %s: verdict %v (%v), want succeeded", aws.ToString(m.Body)[:40], res.Verdict, res.Err)
		}
		if res.Ack {
			if _, err := w.sq.DeleteMessage(w.ctx, &sqs.DeleteMessageInput{QueueUrl: &w.queues.URL, ReceiptHandle: m.ReceiptHandle}); err != nil {
				t.Fatal(err)
			}
		}
	}
	return len(msgs)
}

// items counts the table's items.
func (w *world) items(t *testing.T) int {
	t.Helper()
	n := 0
	p := dynamodb.NewScanPaginator(w.db, &dynamodb.ScanInput{TableName: &w.name, Select: dbtypes.SelectCount})
	for p.HasMorePages() {
		out, err := p.NextPage(w.ctx)
		if err != nil {
			t.Fatal(err)
		}
		n += int(out.Count)
	}
	return n
}

// status returns the status of key.
func (w *world) status(t *testing.T, key string) webhook.Status {
	t.Helper()
	rec, err := w.table.Get(w.ctx, key)
	if err != nil || rec == nil {
		t.Fatalf("get %s: %v", key, err)
	}
	return rec.Status
}

// checkOnce fails unless each key ran its handler exactly once, ended
// SUCCEEDED, and nothing else ran.
func (w *world) checkOnce(t *testing.T, keys []string) {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, k := range keys {
		if w.calls[k] != 1 {
			t.Errorf("%s: handler ran %d times, want 1", k, w.calls[k])
		}
		if st := w.status(t, k); st != webhook.StatusSucceeded {
			t.Errorf("%s: %s, want SUCCEEDED", k, st)
		}
	}
	if len(w.calls) != len(keys) {
		t.Errorf("the handler ran for %d events, want %d", len(w.calls), len(keys))
	}
}

// limiter grants at most per tokens a Take, and counts what it granted.
type limiter struct {
	mu    sync.Mutex
	per   int
	taken map[string]int
}

func (l *limiter) Take(_ context.Context, target string, n int) (int, time.Time, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	g := min(n, l.per)
	l.taken[target] += g
	return g, time.Now(), nil
}

// opsLog records the operational events published.
type opsLog struct{ webhooktest.Ops[bus.Op] }

func (o *opsLog) keys() []string {
	var keys []string
	for _, op := range o.All() {
		if op.Type == bus.DetailTypeEventRecovered {
			keys = append(keys, op.Key)
		}
	}
	slices.Sort(keys)
	return keys
}

// TestRecoverAWindowOfFailedEvents is must-show 2: a job over a window of
// FAILED events replays and enqueues each of them (and nothing outside the
// window, of another tenant, or SUCCEEDED), page by page, a token each;
// the processor then takes every one to SUCCEEDED, its handler run once;
// a second job over the same window changes nothing.
func TestRecoverAWindowOfFailedEvents(t *testing.T) {
	w := newWorld(t)
	earlier, err := store.New(store.Config{Client: w.db, TableName: w.name, Function: "receiver",
		Now: func() time.Time { return time.Now().Add(-3 * time.Hour) }})
	if err != nil {
		t.Fatal(err)
	}
	w.failed(t, earlier, "old", "acme", "", 3) // before the window
	since := time.Now().Add(-time.Hour)
	keys := w.failed(t, w.table, "f", "acme", "", 23)
	w.failed(t, w.table, "other", "globex", "", 4) // another tenant
	ok := w.failed(t, w.table, "ok", "acme", "", 1)
	res, err := w.table.Replay(w.ctx, ok[0], store.ReplayOptions{Window: window})
	if err != nil || res.Outcome != store.Replayed {
		t.Fatal(res.Outcome, err)
	}
	w.process(t) // ok[0] ends SUCCEEDED
	w.calls = map[string]int{}

	js := w.jobs(t, "cli-1")
	f := recovery.Filter{Since: since, Until: time.Now().Add(time.Minute), Tenant: "acme"}
	job, err := js.Create(w.ctx, f, 0, "tester")
	if err != nil {
		t.Fatal(err)
	}
	var seen []recovery.Job
	got, err := js.Run(w.ctx, job.ID, func(j recovery.Job) { seen = append(seen, j) })
	if err != nil {
		t.Fatal(err)
	}
	want := recovery.Counts{Total: 23, Counted: true, Replayed: 23}
	if got.State != recovery.StateDone || got.Counts.Total != want.Total || got.Counts.Replayed != 23 || got.Counts.Skipped != 0 ||
		got.Counts.Missing != 0 || got.Counts.NotEnqueued != 0 || got.Owner != "" {
		t.Fatalf("job: %+v, want done with %+v", got, want)
	}
	if stored, err := js.Get(w.ctx, job.ID); err != nil || stored.State != recovery.StateDone || stored.Counts != got.Counts || stored.FinishedAt.IsZero() {
		t.Errorf("stored job: %+v %v, want what Run returned", stored, err)
	}
	if len(seen) < 23 || seen[len(seen)-1].Counts.Done() != 23 {
		t.Errorf("progress: %d reports, the last %+v", len(seen), seen[len(seen)-1].Counts)
	}
	if n := w.limit.taken[recovery.UnknownTarget]; n < 23 {
		t.Errorf("tokens taken for %s: %d, want one per replay at least (23)", recovery.UnknownTarget, n)
	}
	if n := w.process(t); n != 23 {
		t.Errorf("%d messages enqueued, want 23", n)
	}
	w.checkOnce(t, keys)
	if k := w.ops.keys(); !slices.Equal(k, keys) {
		t.Errorf("recovered events: %v, want %v", k, keys)
	}

	again, err := js.Create(w.ctx, f, 0, "tester")
	if err != nil {
		t.Fatal(err)
	}
	got, err = js.Run(w.ctx, again.ID, nil)
	if err != nil || got.State != recovery.StateDone || got.Counts.Total != 0 || got.Counts.Done() != 0 {
		t.Fatalf("second run: %+v %v, want done with nothing selected", got.Counts, err)
	}
	if n := w.process(t); n != 0 {
		t.Errorf("the second run enqueued %d message(s)", n)
	}
	list, err := js.List(w.ctx, 10)
	if err != nil || len(list) != 2 || list[0].ID != again.ID || list[1].ID != job.ID {
		t.Errorf("list: %v %v, want the two jobs, newest first", list, err)
	}
	if again, err := js.Run(w.ctx, job.ID, nil); err != nil || again.State != recovery.StateDone || again.Counts != got.Counts && again.Counts.Replayed != 23 {
		t.Errorf("resuming a done job: %+v %v, want it as it was", again, err)
	}
}

// TestCancelHalfwayThenResumeDoublesNothing is must-show 2 (cancel): a job
// cancelled from another process halfway stops at its next save, resumable;
// one interrupted (Ctrl-C) saves its cursor; each resumed job finishes the
// window, and every event was replayed, enqueued and handled exactly once.
// A second process cannot run a job whose lease holds.
func TestCancelHalfwayThenResumeDoublesNothing(t *testing.T) {
	for _, how := range []string{"cancel", "interrupt"} {
		t.Run(how, func(t *testing.T) {
			w := newWorld(t)
			since := time.Now().Add(-time.Minute)
			keys := w.failed(t, w.table, how, "acme", "crm.lead", 30)
			js, other := w.jobs(t, "cli-1"), w.jobs(t, "cli-2")
			job, err := js.Create(w.ctx, recovery.Filter{Since: since, Until: time.Now().Add(time.Minute)}, 0, "")
			if err != nil {
				t.Fatal(err)
			}
			ctx, stop := context.WithCancel(w.ctx)
			defer stop()
			stopped, busy := false, error(nil)
			first, err := js.Run(ctx, job.ID, func(j recovery.Job) {
				if j.Counts.Replayed < 12 || stopped {
					return
				}
				stopped = true
				_, busy = other.Run(w.ctx, job.ID, nil)
				if how == "interrupt" {
					stop()
					return
				}
				if _, changed, err := other.Cancel(w.ctx, job.ID); err != nil || !changed {
					t.Errorf("cancel: %v %v", changed, err)
				}
			})
			if !errors.Is(busy, recovery.ErrBusy) {
				t.Errorf("a second process ran the job: %v, want ErrBusy", busy)
			}
			switch how {
			case "cancel":
				if err != nil || first.State != recovery.StateCancelled {
					t.Fatalf("cancelled run: %+v %v", first, err)
				}
			case "interrupt":
				if !errors.Is(err, context.Canceled) || first.State != recovery.StateInterrupted {
					t.Fatalf("interrupted run: %+v %v", first, err)
				}
			}
			if r := first.Counts.Replayed; r < 12 || r >= 30 {
				t.Fatalf("the first run replayed %d, want it stopped halfway", r)
			}
			stored, err := other.Get(w.ctx, job.ID)
			if err != nil || stored.State != first.State || stored.Owner != "" || stored.Counts.Replayed != first.Counts.Replayed || stored.Cursor == "" {
				t.Fatalf("stored after the stop: %+v %v", stored, err)
			}
			w.process(t) // what the first run enqueued is handled before the resume
			second, err := other.Run(w.ctx, job.ID, nil)
			if err != nil || second.State != recovery.StateDone {
				t.Fatalf("resume: %+v %v", second, err)
			}
			if c := second.Counts; c.Replayed+c.Skipped != 30 || c.Replayed != 30 || c.Missing != 0 || c.NotEnqueued != 0 {
				t.Errorf("after the resume: %+v, want the 30 replayed once", c)
			}
			// The resume reads again at most the rest of the page it stopped in.
			if items := w.items(t); second.Counts.Scanned > items+pageSize {
				t.Errorf("the two runs read %d items of the %d in the table: the resume did not start at the cursor", second.Counts.Scanned, items)
			}
			w.process(t)
			w.checkOnce(t, keys)
			if k := w.ops.keys(); !slices.Equal(k, keys) {
				t.Errorf("recovered events: %d, want each of the %d once", len(k), len(keys))
			}
			if n := w.limit.taken["crm.lead"]; n < 30 {
				t.Errorf("tokens of crm.lead: %d, want at least 30", n)
			}
		})
	}
}

// TestHandlerSelectsByTarget: --handler selects the events whose last
// attempt was bound for the handler's target (its name, or name/<tenant>),
// and each target's tokens are taken from its own bucket.
func TestHandlerSelectsByTarget(t *testing.T) {
	w := newWorld(t)
	since := time.Now().Add(-time.Minute)
	fwd := append(w.failed(t, w.table, "fa", "acme", "forward/acme", 4), w.failed(t, w.table, "fg", "globex", "forward/globex", 3)...)
	w.failed(t, w.table, "crm", "acme", "crm.lead", 5)
	w.failed(t, w.table, "fwx", "acme", "forwarder", 2) // a prefix, not the handler's target
	js := w.jobs(t, "cli-1")
	job, err := js.Create(w.ctx, recovery.Filter{Since: since, Until: time.Now().Add(time.Minute), Handler: "forward"}, 1000, "")
	if err != nil {
		t.Fatal(err)
	}
	got, err := js.Run(w.ctx, job.ID, nil)
	if err != nil || got.Counts.Total != 7 || got.Counts.Replayed != 7 {
		t.Fatalf("job: %+v %v, want the 7 forward events", got, err)
	}
	if w.limit.taken["forward/acme"] < 4 || w.limit.taken["forward/globex"] < 3 || w.limit.taken["crm.lead"] != 0 {
		t.Errorf("tokens: %v", w.limit.taken)
	}
	w.process(t)
	w.checkOnce(t, fwd)
}

// TestRecoverAtTheGateRate runs a job through the targets' table (the
// DynamoDB token bucket) at 20 events per second per target: every event
// is replayed once, each after a token of its target. The pace is logged
// (a figure, not an assertion): run with -v.
func TestRecoverAtTheGateRate(t *testing.T) {
	w := newWorld(t)
	since := time.Now().Add(-time.Minute)
	keys := append(w.failed(t, w.table, "a", "acme", "forward/acme", 40), w.failed(t, w.table, "g", "globex", "forward/globex", 20)...)
	gate, err := targetsdb.New(targetsdb.TableConfig{Client: w.db, TableName: w.name, Config: targets.Config{Rate: 20}})
	if err != nil {
		t.Fatal(err)
	}
	js, err := recovery.New(recovery.Config{DB: w.db, TableName: w.name, Store: w.table, Queue: w.mainQ, Limiter: gate,
		Window: window, PageSize: pageSize})
	if err != nil {
		t.Fatal(err)
	}
	job, err := js.Create(w.ctx, recovery.Filter{Since: since, Until: time.Now().Add(time.Minute)}, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	got, err := js.Run(w.ctx, job.ID, nil)
	elapsed := time.Since(start)
	if err != nil || got.State != recovery.StateDone || got.Counts.Replayed != 60 {
		t.Fatalf("job: %+v %v", got, err)
	}
	t.Logf("60 events over 2 targets at 20/s per target (burst 20): %s, %.1f events/s in all", elapsed.Round(time.Millisecond),
		60/elapsed.Seconds())
	w.process(t)
	w.checkOnce(t, keys)
}

// TestHandlerSelectsDeadEventsNeverHeld is issue 29's must-show for
// --handler: events whose forward calls failed for good (never held: no
// breaker, no pause) and that the compensator ended DEAD are selected by
// `recover --status DEAD --handler forward`, as by `--tenant demo`: every
// attempt records the target it was bound for, not only a hold. And a job
// that selects nothing says why.
func TestHandlerSelectsDeadEventsNeverHeld(t *testing.T) {
	w := newWorld(t)
	since := time.Now().Add(-time.Minute)
	reg := process.NewRegistry()
	process.HandleAll(reg, "forward", func(context.Context, *process.Event[webhook.Envelope]) error {
		return process.Permanent(errors.New("forward: POST: status 400"))
	}, process.Target("forward/{tenant}"))
	processor, err := store.New(store.Config{Client: w.db, TableName: w.name, Function: "processor"})
	if err != nil {
		t.Fatal(err)
	}
	dlq, err := queue.New(queue.Config{Client: w.sq, URL: w.queues.DLQURL})
	if err != nil {
		t.Fatal(err)
	}
	d, err := dispatch.New(dispatch.Config{Registry: reg, Store: processor, DLQ: dlq, Kernel: dispatch.Kernel{Queue: w.mainQ}})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for i := range 3 {
		key := fmt.Sprintf("line#demo#dead-%03d", i)
		res, err := w.table.Claim(w.ctx, store.NewEvent{Key: key, Provider: "line", Tenant: "demo", EventType: "follow",
			PayloadHash: "h" + key, Payload: []byte(`{"type":"follow"}`)}, window)
		if err != nil || res.Outcome != store.Claimed {
			t.Fatalf("claim %s: %v %v", key, res.Outcome, err)
		}
		body, err := queue.EncodeMessage(new(res.Record.Envelope()))
		if err != nil {
			t.Fatal(err)
		}
		if r := d.Handle(w.ctx, dispatch.Message{MessageID: key, Body: body}); r.Verdict != dispatch.Failed {
			t.Fatalf("%s: verdict %v (%v), want failed", key, r.Verdict, r.Err)
		}
		acq, err := w.table.AcquireCompensation(w.ctx, key, "compensator", time.Now().Add(time.Minute))
		if err != nil || acq.Outcome != webhook.Acquired {
			t.Fatalf("acquire compensation %s: %v %v", key, acq.Outcome, err)
		}
		if ok, err := w.table.Dead(w.ctx, acq.Lease, "nothing to compensate", time.Now().Add(window)); !ok || err != nil {
			t.Fatalf("dead %s: %v %v", key, ok, err)
		}
		rec, err := w.table.Get(w.ctx, key)
		if err != nil || rec.Status != webhook.StatusDead || rec.HeldOn != "" || rec.Target != "forward/demo" {
			t.Fatalf("%s: %+v %v; want DEAD, never held, target forward/demo", key, rec, err)
		}
		keys = append(keys, key)
	}
	slices.Sort(keys)
	until := time.Now().Add(time.Minute)
	dead := []webhook.Status{webhook.StatusDead}
	run := func(f recovery.Filter) *recovery.Job {
		t.Helper()
		js := w.jobs(t, "cli-"+f.Tenant+f.Handler)
		job, err := js.Create(w.ctx, f, 1000, "")
		if err != nil {
			t.Fatal(err)
		}
		got, err := js.Run(w.ctx, job.ID, nil)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	// Nothing of this target: 0 selected, and the job says why.
	none := run(recovery.Filter{Since: since, Until: until, Statuses: dead, Handler: "crm.lead"})
	t.Logf("--handler crm.lead: %s", none.Why)
	if none.Counts.Total != 0 || !strings.Contains(none.Why, "0 of the 3 DEAD records") || !strings.Contains(none.Why, "forward/demo") {
		t.Errorf("--handler crm.lead: total %d, why %q; want 0, saying 3 were in the window, bound for forward/demo", none.Counts.Total, none.Why)
	}
	// A record settled before attempts recorded their target (made here
	// without one) is selected by the window, not the handler: said so.
	w.failed(t, w.table, "old", "demo", "", 1)
	old := run(recovery.Filter{Since: since, Until: until, Handler: "forward"})
	t.Logf("--status FAILED --handler forward: %s", old.Why)
	if old.Counts.Total != 0 || !strings.Contains(old.Why, "1 carry no target") || !strings.Contains(old.Why, "without the handler") {
		t.Errorf("--status FAILED --handler forward: total %d, why %q; want 0, saying 1 carries no target", old.Counts.Total, old.Why)
	}
	if empty := run(recovery.Filter{Since: since, Until: until, Tenant: "globex"}); empty.Counts.Total != 0 ||
		empty.Why != "no FAILED record was received in the window of tenant globex" {
		t.Errorf("--tenant globex: total %d, why %q", empty.Counts.Total, empty.Why)
	}
	got := run(recovery.Filter{Since: since, Until: until, Statuses: dead, Handler: "forward"})
	if got.Counts.Total != 3 || got.Counts.Replayed != 3 || got.Why != "" {
		t.Fatalf("--status DEAD --handler forward: %+v; want the 3 DEAD events", got.Counts)
	}
	if w.limit.taken["forward/demo"] < 3 || w.limit.taken[recovery.UnknownTarget] != 0 {
		t.Errorf("tokens: %v; want forward/demo's", w.limit.taken)
	}
	if ops := w.ops.keys(); !slices.Equal(ops, keys) {
		t.Errorf("recovered %v, want %v", ops, keys)
	}
	for _, k := range keys {
		if st := w.status(t, k); st != webhook.StatusReceived {
			t.Errorf("%s: %s, want RECEIVED (replayed)", k, st)
		}
	}
}

// TestCancelDuringASlowWaitReplaysNothingMore: a job slowed by its rate
// (one replay every 4 s) waits for its next token saving at least once a
// second, so a cancel that lands while it waits stops it before another
// replay: it ends cancelled with the one replay made before the cancel.
func TestCancelDuringASlowWaitReplaysNothingMore(t *testing.T) {
	w := newWorld(t)
	since := time.Now().Add(-time.Minute)
	w.failed(t, w.table, "slow", "acme", "crm.lead", 5)
	js, other := w.jobs(t, "page"), w.jobs(t, "cli")
	job, err := js.Create(w.ctx, recovery.Filter{Since: since, Until: time.Now().Add(time.Minute)}, 0.25, "")
	if err != nil {
		t.Fatal(err)
	}
	cancelled := false
	start := time.Now()
	done, err := js.Run(w.ctx, job.ID, func(j recovery.Job) {
		if j.Counts.Replayed == 1 && !cancelled {
			cancelled = true
			go func() { // while the run waits for its next replay
				time.Sleep(500 * time.Millisecond)
				if _, changed, err := other.Cancel(w.ctx, job.ID); err != nil || !changed {
					t.Errorf("cancel: %v %v", changed, err)
				}
			}()
		}
	})
	if err != nil || done.State != recovery.StateCancelled || done.Counts.Replayed != 1 {
		t.Fatalf("run: %+v %v, want cancelled after 1 replay", done, err)
	}
	if d := time.Since(start); d > 3500*time.Millisecond {
		t.Errorf("the run took %s to learn of the cancel, want it within about a second of it", d)
	}
}

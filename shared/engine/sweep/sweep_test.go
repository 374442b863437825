package sweep_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookwall/hookwall/shared/aws/queue"
	"github.com/hookwall/hookwall/shared/base/obs"
	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/base/webhook/webhooktest"
	"github.com/hookwall/hookwall/shared/engine/intake"
	"github.com/hookwall/hookwall/shared/engine/sweep"
	"github.com/hookwall/hookwall/shared/internal/kernel"
	"github.com/hookwall/hookwall/shared/state/store"
	"github.com/hookwall/hookwall/shared/state/store/memstore"
)

// t0 is when every test's first event is claimed.
var t0 = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

const (
	window     = 7 * 24 * time.Hour
	sweepAfter = store.DefaultSweepAfter
	grace      = sweep.DefaultGrace
	stuckAfter = sweep.DefaultStuckAfter
	retryCap   = sweep.DefaultRetryCap
)

// fakeQueue is the main queue: it keeps what it was sent, or fails.
type fakeQueue struct {
	mu   sync.Mutex
	sent []webhook.Envelope
	fail error
}

func (q *fakeQueue) Send(_ context.Context, envs []webhook.Envelope) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.fail != nil {
		return q.fail
	}
	q.sent = append(q.sent, envs...)
	return nil
}

func (q *fakeQueue) keys() []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	var ks []string
	for _, e := range q.sent {
		ks = append(ks, e.Key)
	}
	return ks
}

// letter is one message sent to the fake dead-letter queue.
type letter struct {
	key, reason string
	body        []byte
}

// fakeDLQ is the dead-letter queue: it keeps what it was sent, or fails.
type fakeDLQ struct {
	mu      sync.Mutex
	letters []letter
	fail    error
}

func (q *fakeDLQ) SendDeadLetter(_ context.Context, key string, body []byte, reason string) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.fail != nil {
		return q.fail
	}
	q.letters = append(q.letters, letter{key: key, reason: reason, body: body})
	return nil
}

// hookStore is a memstore with faults and hooks around the calls the
// sweeper makes.
type hookStore struct {
	*memstore.Store
	mu          sync.Mutex
	afterGet    func(key string)       // runs after Get read the record, before it returns
	getErr      map[string]error       // Get fails for these keys
	stuckErr    map[int]error          // Stuck fails for these shards
	ghosts      []store.StuckRecord    // index entries without a live record (the GSI lags)
	markErr     error                  // MarkRequeued fails
	resweepErr  error                  // Resweep fails
	queried     map[int]int            // Stuck calls per shard
	limits      []int32                // every Stuck limit asked
	cursorsSeen int                    // Stuck calls with a cursor
	gets        int                    // Get calls
	resweeps    map[string][]time.Time // Resweep calls by key
}

func (h *hookStore) Get(ctx context.Context, key string) (*store.Record, error) {
	h.mu.Lock()
	h.gets++
	err, hook := h.getErr[key], h.afterGet
	h.mu.Unlock()
	if err != nil {
		return nil, err
	}
	rec, err := h.Store.Get(ctx, key)
	if hook != nil {
		hook(key)
	}
	return rec, err
}

func (h *hookStore) Stuck(ctx context.Context, shard int, after, before time.Time, limit int32, cursor map[string]types.AttributeValue) ([]store.StuckRecord, map[string]types.AttributeValue, error) {
	h.mu.Lock()
	if h.queried == nil {
		h.queried = map[int]int{}
	}
	h.queried[shard]++
	h.limits = append(h.limits, limit)
	if cursor != nil {
		h.cursorsSeen++
	}
	err := h.stuckErr[shard]
	var ghosts []store.StuckRecord
	if shard == 0 && cursor == nil {
		ghosts = h.ghosts
	}
	h.mu.Unlock()
	if err != nil {
		return nil, nil, err
	}
	if len(ghosts) > 0 && int(limit) > len(ghosts) {
		recs, next, err := h.Store.Stuck(ctx, shard, after, before, limit-int32(len(ghosts)), cursor)
		return append(ghosts, recs...), next, err
	}
	return h.Store.Stuck(ctx, shard, after, before, limit, cursor)
}

func (h *hookStore) MarkRequeued(ctx context.Context, rec *store.Record) (bool, error) {
	if h.markErr != nil {
		return false, h.markErr
	}
	return h.Store.MarkRequeued(ctx, rec)
}

func (h *hookStore) Resweep(ctx context.Context, rec *store.Record, at time.Time) (bool, error) {
	h.mu.Lock()
	if h.resweeps == nil {
		h.resweeps = map[string][]time.Time{}
	}
	h.resweeps[rec.Key] = append(h.resweeps[rec.Key], at)
	err := h.resweepErr
	h.mu.Unlock()
	if err != nil {
		return false, err
	}
	return h.Store.Resweep(ctx, rec, at)
}

// env is one test's table, queues, clock and sweeper.
type env struct {
	t       *testing.T
	ctx     context.Context
	clock   *webhooktest.Clock
	mem     *memstore.Store
	st      *hookStore
	q       *fakeQueue
	dlq     *fakeDLQ
	metrics *obs.Metrics
	logs    *bytes.Buffer
	sw      *sweep.Sweeper
}

func newEnv(t *testing.T, tweak ...func(*sweep.Config)) *env {
	t.Helper()
	clock := webhooktest.NewClock(t0)
	mem := memstore.New(memstore.Config{Now: clock.Now, Function: "sweeper"})
	e := &env{t: t, ctx: context.Background(), clock: clock, mem: mem, st: &hookStore{Store: mem},
		q: &fakeQueue{}, dlq: &fakeDLQ{}, metrics: obs.NewMetrics(&bytes.Buffer{}, "Hookwall", map[string]string{"Function": "compensator"}),
		logs: &bytes.Buffer{}}
	cfg := sweep.Config{Store: e.st, Queue: e.q, DLQ: e.dlq, Now: clock.Now, Metrics: e.metrics,
		Logger: slog.New(slog.NewJSONHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	for _, f := range tweak {
		f(&cfg)
	}
	sw, err := sweep.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	e.sw = sw
	return e
}

// claim claims key now, as the receiver does, and sends nothing.
func (e *env) claim(key string) *store.Record {
	e.t.Helper()
	return e.claimPayload(key, []byte(`{"userId":"U-`+key+`"}`))
}

func (e *env) claimPayload(key string, payload []byte) *store.Record {
	e.t.Helper()
	res, err := e.mem.Claim(e.ctx, store.NewEvent{Key: key, Provider: "line", Tenant: "t1", EventType: "follow",
		PayloadHash: "h-" + key, Payload: payload, TraceID: "trace-" + key}, window)
	if err != nil || res.Outcome != store.Claimed {
		e.t.Fatalf("claim %s: %v, %v", key, res.Outcome, err)
	}
	return e.get(key)
}

// acquire takes key's lease until now+lease, as the processor does.
func (e *env) acquire(key string, lease time.Duration) webhook.Lease {
	e.t.Helper()
	acq, err := e.mem.Acquire(e.ctx, key, "worker-"+key, e.clock.Now().Add(lease))
	if err != nil || acq.Outcome != webhook.Acquired {
		e.t.Fatalf("acquire %s: %v, %v", key, acq.Outcome, err)
	}
	return acq.Lease
}

func (e *env) get(key string) *store.Record {
	e.t.Helper()
	rec, err := e.mem.Get(e.ctx, key)
	if err != nil || rec == nil {
		e.t.Fatalf("get %s: %v (nil: %v)", key, err, rec == nil)
	}
	return rec
}

// put stores rec as is, in the sweep index from sweepAt.
func (e *env) put(rec *store.Record, sweepAt time.Time) {
	rec.SK = store.SKEvent
	if rec.ExpiresAt == 0 {
		rec.ExpiresAt = t0.Add(window).Unix()
	}
	if rec.Payload == nil {
		rec.Payload = store.Payload(`{"userId":"U-` + rec.Key + `"}`)
	}
	rec.Provider, rec.Tenant, rec.EventType, rec.ClaimID = "line", "t1", "follow", "claim-"+rec.Key
	if !rec.Status.Terminal() {
		rec.SweepShard, rec.SweepAt = store.ShardName(store.ShardOf(rec.Key)), sweepAt.UnixMilli()
	}
	e.mem.Put(rec)
}

func (e *env) run() sweep.Report {
	e.t.Helper()
	rep, err := e.sw.Run(e.ctx)
	if err != nil {
		e.t.Fatalf("run: %v", err)
	}
	return rep
}

// want compares the counters of a report (Elapsed and CursorLag ignored).
func want(t *testing.T, got, want sweep.Report) {
	t.Helper()
	got.Elapsed, got.CursorLag = 0, 0
	if got != want {
		t.Errorf("report:\n got %+v\nwant %+v", got, want)
	}
}

func ms(t time.Time) int64 { return t.UnixMilli() }

func TestRunRequeuesAClaimLeftWithoutAMessage(t *testing.T) {
	e := newEnv(t)
	claimed := e.claim("line#t1#crashed")
	if claimed.SweepAt != ms(t0.Add(sweepAfter)) {
		t.Fatalf("claim: sweepAt %d, want claim + SweepAfter %d", claimed.SweepAt, ms(t0.Add(sweepAfter)))
	}

	e.clock.Advance(sweepAfter - time.Millisecond)
	want(t, e.run(), sweep.Report{}) // not due yet: the index hides it
	if len(e.q.sent) != 0 {
		t.Fatalf("sent %d before the record was due", len(e.q.sent))
	}

	e.clock.Advance(time.Millisecond)
	now := e.clock.Now()
	want(t, e.run(), sweep.Report{Scanned: 1, Requeued: 1})
	if len(e.q.sent) != 1 {
		t.Fatalf("sent %d messages, want 1", len(e.q.sent))
	}
	if got, want := e.q.sent[0], claimed.Envelope(); !reflect.DeepEqual(got, want) {
		t.Errorf("sent %+v, want the record's envelope %+v", got, want)
	}
	rec := e.get(claimed.Key)
	if rec.Status != webhook.StatusReceived || rec.Version != claimed.Version {
		t.Errorf("record is %s v%d, want RECEIVED v%d (a re-enqueue is no transition)", rec.Status, rec.Version, claimed.Version)
	}
	if rec.EnqueuedAt != ms(now) || rec.SweepAt != ms(now.Add(sweepAfter)) {
		t.Errorf("enqueuedAt %d sweepAt %d, want %d and %d", rec.EnqueuedAt, rec.SweepAt, ms(now), ms(now.Add(sweepAfter)))
	}
	if got := e.metrics.Counts()[sweep.MetricRequeued]; got != 1 {
		t.Errorf("%s = %v, want 1", sweep.MetricRequeued, got)
	}
	if !strings.Contains(e.logs.String(), `"event_key":"line#t1#crashed"`) {
		t.Errorf("no log line names the event key:\n%s", e.logs)
	}

	// Sent once: the next run, at the same time, finds nothing due.
	want(t, e.run(), sweep.Report{})
	// Still no message a SweepAfter later: sent again.
	e.clock.Advance(sweepAfter)
	want(t, e.run(), sweep.Report{Scanned: 1, Requeued: 1})
}

// TestRunWaitsForRecordsThatAreNotStuckYet: each status is due in the index
// before it is stuck; the sweeper moves its sweepAt to when it will be, and
// acts on it then, not a millisecond before.
func TestRunWaitsForRecordsThatAreNotStuckYet(t *testing.T) {
	const key = "line#t1#ev"
	due := t0.Add(sweepAfter) // when every case is first due in the index
	cases := []struct {
		name    string
		setup   func(e *env)
		stuckAt time.Time
		dlq     bool
	}{
		{"RECEIVED re-enqueued by a duplicate delivery a moment ago", func(e *env) {
			e.claim(key)
			e.clock.AdvanceTo(due.Add(-time.Second))
			rec := e.get(key)
			if ok, err := e.mem.TakeOverEnqueue(e.ctx, rec, grace); !ok || err != nil {
				t.Fatalf("take over: %v %v", ok, err)
			}
		}, due.Add(-time.Second).Add(grace), false},
		{"PROCESSING with a live lease", func(e *env) {
			e.claim(key)
			e.acquire(key, 10*time.Minute)
		}, t0.Add(10*time.Minute + stuckAfter), false},
		{"PROCESSING whose lease ran out a minute ago", func(e *env) {
			e.claim(key)
			e.acquire(key, 4*time.Minute)
		}, t0.Add(4*time.Minute + stuckAfter), false},
		{"RETRY waiting for its backoff", func(e *env) {
			e.claim(key)
			l := e.acquire(key, time.Minute)
			e.clock.Advance(30 * time.Second)
			if ok, err := e.mem.Retry(e.ctx, l, "boom"); !ok || err != nil {
				t.Fatalf("retry: %v %v", ok, err)
			}
		}, t0.Add(30*time.Second + retryCap + stuckAfter), false},
		{"FAILED two minutes ago", func(e *env) {
			e.claim(key)
			l := e.acquire(key, time.Minute)
			e.clock.Advance(2 * time.Minute)
			if ok, err := e.mem.Fail(e.ctx, l, "permanent"); !ok || err != nil {
				t.Fatalf("fail: %v %v", ok, err)
			}
		}, t0.Add(2*time.Minute + stuckAfter), true},
		{"COMPENSATING with a live lease", func(e *env) {
			e.put(&store.Record{Key: key, Status: webhook.StatusCompensating, Version: 4, UpdatedAt: ms(t0),
				EnqueuedAt: ms(t0), LeaseOwner: "comp", LeaseUntil: ms(t0.Add(8 * time.Minute))}, due)
		}, t0.Add(8*time.Minute + stuckAfter), true},
		{"COMPENSATING between two compensation attempts", func(e *env) {
			e.put(&store.Record{Key: key, Status: webhook.StatusCompensating, Version: 5, UpdatedAt: ms(t0.Add(time.Minute)),
				EnqueuedAt: ms(t0)}, due)
		}, t0.Add(time.Minute + retryCap + stuckAfter), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			c.setup(e)
			e.clock.AdvanceTo(due)
			before := e.get(key)
			want(t, e.run(), sweep.Report{Scanned: 1, Resweeped: 1})
			after := e.get(key)
			if after.SweepAt != ms(c.stuckAt) {
				t.Errorf("sweepAt %v, want %v", time.UnixMilli(after.SweepAt).UTC(), c.stuckAt)
			}
			if after.Version != before.Version || after.Status != before.Status || after.EnqueuedAt != before.EnqueuedAt {
				t.Errorf("re-sweep changed more than sweepAt: %+v → %+v", before, after)
			}
			e.clock.AdvanceTo(c.stuckAt.Add(-time.Millisecond))
			want(t, e.run(), sweep.Report{}) // hidden until then
			e.clock.AdvanceTo(c.stuckAt)
			if c.dlq {
				want(t, e.run(), sweep.Report{Scanned: 1, DeadLettered: 1})
			} else {
				want(t, e.run(), sweep.Report{Scanned: 1, Requeued: 1})
			}
			if n, d := len(e.q.sent), len(e.dlq.letters); c.dlq && (n != 0 || d != 1) || !c.dlq && (n != 1 || d != 0) {
				t.Errorf("sent %d to the queue and %d to the DLQ", n, d)
			}
		})
	}
}

func TestRunRequeuesStuckRetryAndProcessingRecords(t *testing.T) {
	e := newEnv(t)
	e.claim("line#t1#retry")
	l := e.acquire("line#t1#retry", time.Minute)
	if ok, err := e.mem.Retry(e.ctx, l, "503 from the CRM"); !ok || err != nil {
		t.Fatal(ok, err)
	}
	e.claim("line#t1#crashed-worker")
	e.acquire("line#t1#crashed-worker", time.Minute) // the worker dies, no redelivery

	e.clock.Advance(retryCap + stuckAfter)
	want(t, e.run(), sweep.Report{Scanned: 2, Requeued: 2})
	got := e.q.keys()
	if len(got) != 2 {
		t.Fatalf("sent %v", got)
	}
	rec := e.get("line#t1#crashed-worker")
	if rec.Status != webhook.StatusProcessing || rec.LeaseOwner != "worker-line#t1#crashed-worker" {
		t.Errorf("the sweeper changed the record's state: %s owner %q", rec.Status, rec.LeaseOwner)
	}
	// The processor takes the expired lease over from the re-enqueued message.
	if acq, err := e.mem.Acquire(e.ctx, rec.Key, "worker-2", e.clock.Now().Add(time.Minute)); err != nil || acq.Outcome != webhook.Acquired {
		t.Errorf("acquire after the re-enqueue: %v %v", acq.Outcome, err)
	}
}

func TestRunDeadLettersStuckFailedRecords(t *testing.T) {
	e := newEnv(t)
	rec := e.claim("line#t1#failed")
	l := e.acquire(rec.Key, time.Minute)
	if ok, err := e.mem.Fail(e.ctx, l, "crm: blocked user"); !ok || err != nil {
		t.Fatal(ok, err)
	}
	e.clock.Advance(stuckAfter)
	want(t, e.run(), sweep.Report{Scanned: 1, DeadLettered: 1})
	if len(e.q.sent) != 0 || len(e.dlq.letters) != 1 {
		t.Fatalf("sent %d to the queue and %d to the DLQ, want 0 and 1", len(e.q.sent), len(e.dlq.letters))
	}
	dl := e.dlq.letters[0]
	if dl.key != rec.Key {
		t.Errorf("dead letter key %q, want %q", dl.key, rec.Key)
	}
	for _, s := range []string{"sweeper", "FAILED", "crm: blocked user"} {
		if !strings.Contains(dl.reason, s) {
			t.Errorf("reason %q does not say %q", dl.reason, s)
		}
	}
	var got webhook.Envelope
	if err := json.Unmarshal(dl.body, &got); err != nil {
		t.Fatalf("dead letter body %s: %v", dl.body, err)
	}
	if w := rec.Envelope(); !reflect.DeepEqual(got, w) {
		t.Errorf("dead letter body %+v, want the record's envelope %+v", got, w)
	}
	if after := e.get(rec.Key); after.Status != webhook.StatusFailed || after.EnqueuedAt != ms(e.clock.Now()) {
		t.Errorf("record %s enqueuedAt %d, want FAILED marked at %d", after.Status, after.EnqueuedAt, ms(e.clock.Now()))
	}
	if got := e.metrics.Counts()[sweep.MetricDeadLettered]; got != 1 {
		t.Errorf("%s = %v, want 1", sweep.MetricDeadLettered, got)
	}
}

// A payload too large for a message stays in the record, as the receiver
// does it: the dead letter carries the key and PayloadInRecord.
func TestRunLeavesALargePayloadInTheRecord(t *testing.T) {
	e := newEnv(t)
	big := []byte(`{"text":"` + strings.Repeat("x", queue.InlinePayloadBytes) + `"}`)
	rec := e.claimPayload("line#t1#big", big)
	l := e.acquire(rec.Key, time.Minute)
	if ok, err := e.mem.Fail(e.ctx, l, "permanent"); !ok || err != nil {
		t.Fatal(ok, err)
	}
	e.clock.Advance(stuckAfter)
	want(t, e.run(), sweep.Report{Scanned: 1, DeadLettered: 1})
	var got webhook.Envelope
	if err := json.Unmarshal(e.dlq.letters[0].body, &got); err != nil {
		t.Fatal(err)
	}
	if !got.PayloadInRecord || len(got.Payload) != 0 || got.Key != rec.Key {
		t.Errorf("dead letter: key %q, payloadInRecord %v, %d payload bytes; want the key alone", got.Key, got.PayloadInRecord, len(got.Payload))
	}
	if n := len(e.dlq.letters[0].body); n > queue.InlinePayloadBytes {
		t.Errorf("dead letter is %d bytes", n)
	}
}

func TestRunIgnoresTerminalAndVanishedRecords(t *testing.T) {
	e := newEnv(t)
	e.put(&store.Record{Key: "line#t1#done", Status: webhook.StatusSucceeded, Version: 3, UpdatedAt: ms(t0)}, t0)
	e.st.ghosts = []store.StuckRecord{
		{Key: "line#t1#done", SweepAt: t0},    // terminal: the index has not caught up yet
		{Key: "line#t1#deleted", SweepAt: t0}, // deleted or expired
	}
	e.clock.Advance(sweepAfter)
	// Both are passed on the batch read, without a Get.
	want(t, e.run(), sweep.Report{Passed: 2})
	if len(e.q.sent)+len(e.dlq.letters) != 0 || len(e.st.resweeps) != 0 {
		t.Errorf("acted on terminal or missing records: sent %d, dead letters %d, resweeps %v", len(e.q.sent), len(e.dlq.letters), e.st.resweeps)
	}
	if strings.Contains(e.logs.String(), "unknown status") {
		t.Errorf("a terminal record was logged as an unknown status:\n%s", e.logs)
	}
	if rec := e.get("line#t1#done"); rec.SweepAt != 0 || rec.SweepShard != "" {
		t.Errorf("terminal record got sweep attributes: %q %d", rec.SweepShard, rec.SweepAt)
	}
}

// TestRunIsFenced: a processor (or another sweeper) that moves the record
// between the sweeper's read and its write wins; the sweeper leaves it alone
// and sends nothing.
func TestRunIsFenced(t *testing.T) {
	const key = "line#t1#race"
	cases := []struct {
		name  string
		setup func(e *env)
		move  func(e *env)
		check func(t *testing.T, rec *store.Record)
	}{
		{"a processor takes the lease of a stuck RECEIVED record", func(e *env) { e.claim(key) },
			func(e *env) { e.acquire(key, time.Minute) },
			func(t *testing.T, rec *store.Record) {
				if rec.Status != webhook.StatusProcessing {
					t.Errorf("status %s, want PROCESSING", rec.Status)
				}
			}},
		{"a processor completes a record the sweeper would re-sweep", func(e *env) {
			e.claim(key)
			e.acquire(key, 10*time.Minute)
		}, func(e *env) {
			acq := e.get(key)
			l := webhook.Lease{Key: key, Owner: acq.LeaseOwner, Version: acq.Version, ClaimID: acq.ClaimID}
			if ok, err := e.mem.Complete(e.ctx, l, e.clock.Now().Add(window)); !ok || err != nil {
				e.t.Fatalf("complete: %v %v", ok, err)
			}
		}, func(t *testing.T, rec *store.Record) {
			if rec.Status != webhook.StatusSucceeded {
				t.Errorf("got %s, want SUCCEEDED", rec.Status)
			}
		}},
		{"a duplicate delivery takes the enqueue over", func(e *env) { e.claim(key) },
			func(e *env) {
				if ok, err := e.mem.TakeOverEnqueue(e.ctx, e.get(key), grace); !ok || err != nil {
					e.t.Fatalf("take over: %v %v", ok, err)
				}
			}, func(t *testing.T, rec *store.Record) {
				if rec.Status != webhook.StatusReceived {
					t.Errorf("status %s", rec.Status)
				}
			}},
		{"the processor fails a stuck PROCESSING record", func(e *env) {
			e.claim(key)
			e.acquire(key, time.Minute)
			e.clock.Advance(time.Minute + stuckAfter)
		}, func(e *env) {
			acq, err := e.mem.Acquire(e.ctx, key, "worker-2", e.clock.Now().Add(time.Minute))
			if err != nil || acq.Outcome != webhook.Acquired {
				e.t.Fatalf("acquire: %v %v", acq.Outcome, err)
			}
			if ok, err := e.mem.Fail(e.ctx, acq.Lease, "permanent"); !ok || err != nil {
				e.t.Fatalf("fail: %v %v", ok, err)
			}
		}, func(t *testing.T, rec *store.Record) {
			if rec.Status != webhook.StatusFailed {
				t.Errorf("status %s, want FAILED", rec.Status)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			c.setup(e)
			e.clock.AdvanceTo(t0.Add(sweepAfter))
			e.st.afterGet = func(string) {
				e.st.afterGet = nil
				c.move(e)
			}
			want(t, e.run(), sweep.Report{Scanned: 1, MovedOn: 1})
			if len(e.q.sent)+len(e.dlq.letters) != 0 {
				t.Errorf("sent %d messages and %d dead letters for a record that moved on", len(e.q.sent), len(e.dlq.letters))
			}
			c.check(t, e.get(key))
		})
	}
}

// Two sweepers race for one stuck record: exactly one sends it.
func TestConcurrentSweepersSendOnce(t *testing.T) {
	e := newEnv(t)
	e.claim("line#t1#crashed")
	e.clock.Advance(sweepAfter)
	other, err := sweep.New(sweep.Config{Store: e.mem, Queue: e.q, DLQ: e.dlq, Now: e.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	var otherRep sweep.Report
	e.st.afterGet = func(string) { // the other sweeper runs between this one's read and write
		e.st.afterGet = nil
		otherRep, err = other.Run(e.ctx)
		if err != nil {
			t.Error(err)
		}
	}
	want(t, e.run(), sweep.Report{Scanned: 1, MovedOn: 1})
	want(t, otherRep, sweep.Report{Scanned: 1, Requeued: 1})
	if got := e.q.keys(); len(got) != 1 {
		t.Errorf("sent %v, want the record once", got)
	}
}

// A send that fails after MarkRequeued loses nothing: the record is put
// back at the head of the index and the next run sends it.
func TestRunRetriesAFailedSend(t *testing.T) {
	t.Run("main queue", func(t *testing.T) {
		e := newEnv(t)
		e.claim("line#t1#crashed")
		e.clock.Advance(sweepAfter)
		now := e.clock.Now()
		e.q.fail = errors.New("sqs: throttled")
		rep, err := e.sw.Run(e.ctx)
		if err == nil || !strings.Contains(err.Error(), "sqs: throttled") || !strings.Contains(err.Error(), "line#t1#crashed") {
			t.Errorf("run error %v, want the send's failure naming the key", err)
		}
		want(t, rep, sweep.Report{Scanned: 1, Errors: 1})
		// Stuck again the grace after the enqueuedAt MarkRequeued wrote, not
		// a SweepAfter later.
		if rec := e.get("line#t1#crashed"); rec.SweepAt != ms(now.Add(grace)) {
			t.Errorf("sweepAt %v after a failed send, want now + grace %v", time.UnixMilli(rec.SweepAt).UTC(), now.Add(grace))
		}
		if got := e.metrics.Counts()[sweep.MetricErrors]; got != 1 {
			t.Errorf("%s = %v, want 1", sweep.MetricErrors, got)
		}
		e.q.fail = nil
		e.clock.Advance(grace)
		want(t, e.run(), sweep.Report{Scanned: 1, Requeued: 1})
		if got := e.q.keys(); len(got) != 1 {
			t.Errorf("sent %v", got)
		}
	})
	t.Run("dead-letter queue", func(t *testing.T) {
		e := newEnv(t)
		e.put(&store.Record{Key: "line#t1#failed", Status: webhook.StatusFailed, Version: 3, UpdatedAt: ms(t0), EnqueuedAt: ms(t0)}, t0)
		e.clock.Advance(stuckAfter)
		e.dlq.fail = errors.New("sqs: unavailable")
		if rep, err := e.sw.Run(e.ctx); err == nil {
			t.Error("run: no error after a failed dead-letter send")
		} else {
			want(t, rep, sweep.Report{Scanned: 1, Errors: 1})
		}
		if rec := e.get("line#t1#failed"); rec.SweepAt != ms(e.clock.Now()) {
			t.Errorf("sweepAt %v after a failed send, want now", time.UnixMilli(rec.SweepAt).UTC())
		}
		e.dlq.fail = nil
		want(t, e.run(), sweep.Report{Scanned: 1, DeadLettered: 1})
	})
	t.Run("and the re-sweep after it", func(t *testing.T) {
		e := newEnv(t)
		e.claim("line#t1#crashed")
		e.clock.Advance(sweepAfter)
		e.q.fail = errors.New("sqs: throttled")
		e.st.resweepErr = errors.New("dynamodb: throttled")
		rep, err := e.sw.Run(e.ctx)
		if err == nil || !strings.Contains(err.Error(), "dynamodb: throttled") {
			t.Errorf("run error %v, want both failures", err)
		}
		want(t, rep, sweep.Report{Scanned: 1, Errors: 1})
		e.q.fail, e.st.resweepErr = nil, nil
		// MarkRequeued's sweepAt = now + SweepAfter brings it back then.
		e.clock.Advance(sweepAfter - time.Millisecond)
		want(t, e.run(), sweep.Report{})
		e.clock.Advance(time.Millisecond)
		want(t, e.run(), sweep.Report{Scanned: 1, Requeued: 1})
	})
}

func TestRunCountsFailedCallsAndGoesOn(t *testing.T) {
	e := newEnv(t)
	keys := []string{"line#t1#a", "line#t1#b", "line#t1#c"}
	for _, k := range keys {
		e.claim(k)
	}
	e.clock.Advance(sweepAfter)
	e.st.getErr = map[string]error{"line#t1#b": errors.New("dynamodb: timeout")}
	rep, err := e.sw.Run(e.ctx)
	if err == nil || !strings.Contains(err.Error(), "read line#t1#b") {
		t.Errorf("run error %v", err)
	}
	want(t, rep, sweep.Report{Scanned: 3, Requeued: 2, Errors: 1})
	e.st.getErr = nil
	want(t, e.run(), sweep.Report{Scanned: 1, Requeued: 1}) // it stayed due
	e.st.markErr = errors.New("dynamodb: throttled")
	e.clock.Advance(sweepAfter)
	rep, err = e.sw.Run(e.ctx)
	if err == nil {
		t.Error("no error from failed MarkRequeued calls")
	}
	want(t, rep, sweep.Report{Scanned: 3, Errors: 3})
	if n := len(e.q.sent); n != 3 {
		t.Errorf("sent %d, want each key once so far", n)
	}
}

func TestRunGoesOnAfterAFailedQuery(t *testing.T) {
	e := newEnv(t)
	keys := keysInShards(2)
	for _, k := range keys {
		e.claim(k)
	}
	bad := store.ShardOf(keys[0])
	e.st.stuckErr = map[int]error{bad: errors.New("dynamodb: throttled")}
	e.clock.Advance(sweepAfter)
	rep, err := e.sw.Run(e.ctx)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("query shard %d", bad)) {
		t.Errorf("run error %v, want the failed shard", err)
	}
	want(t, rep, sweep.Report{Scanned: 1, Requeued: 1, QueryErrors: 1})
	if got := e.q.keys(); len(got) != 1 || got[0] != keys[1] {
		t.Errorf("sent %v, want %s", got, keys[1])
	}
	if len(e.st.queried) != store.SweepShards {
		t.Errorf("queried %d shards, want all %d", len(e.st.queried), store.SweepShards)
	}
	e.st.stuckErr = nil
	want(t, e.run(), sweep.Report{Scanned: 1, Requeued: 1})
}

// TestRunStopsAtItsLimitAndResumes: bounded work per run, nothing handled
// twice, nothing left behind.
func TestRunStopsAtItsLimitAndResumes(t *testing.T) {
	const n, limit = 40, 15
	e := newEnv(t, func(c *sweep.Config) { c.Limit = limit })
	for i := range n {
		e.claim(fmt.Sprintf("line#t1#ev-%02d", i))
	}
	e.clock.Advance(sweepAfter)
	var total int
	for i, wantMore := range []bool{true, true, false} {
		rep := e.run()
		wantScanned := min(limit, n-total)
		want(t, rep, sweep.Report{Scanned: wantScanned, Requeued: wantScanned, More: wantMore})
		total += rep.Scanned
		if i < 2 && e.st.gets != total {
			t.Errorf("run %d: %d reads, want %d", i+1, e.st.gets, total)
		}
	}
	seen := map[string]int{}
	for _, k := range e.q.keys() {
		seen[k]++
	}
	if len(seen) != n {
		t.Errorf("sent %d distinct keys, want %d", len(seen), n)
	}
	for k, c := range seen {
		if c != 1 {
			t.Errorf("%s sent %d times", k, c)
		}
	}
	// A page is store.MaxGetMany entries whatever the Limit: the terminal
	// entries among them do not count against it.
	for _, l := range e.st.limits {
		if l != store.MaxGetMany {
			t.Errorf("queried with limit %d, want %d", l, store.MaxGetMany)
		}
	}
	want(t, e.run(), sweep.Report{})
}

// Pages: a shard with more due records than a page is read page by page.
func TestRunReadsAShardPageByPage(t *testing.T) {
	e := newEnv(t, func(c *sweep.Config) { c.Limit = 1000 })
	shard0 := 0
	var n int
	for i := 0; n < 230; i++ {
		k := fmt.Sprintf("line#t1#p-%d", i)
		if store.ShardOf(k) == shard0 {
			e.claim(k)
			n++
		}
	}
	e.clock.Advance(sweepAfter)
	want(t, e.run(), sweep.Report{Scanned: n, Requeued: n})
	if e.st.queried[shard0] < 3 || e.st.cursorsSeen < 2 {
		t.Errorf("shard %d: %d queries, %d with a cursor; want 3 pages", shard0, e.st.queried[shard0], e.st.cursorsSeen)
	}
}

func TestRunStopsBeforeItsDeadline(t *testing.T) {
	t.Run("too close to start", func(t *testing.T) {
		e := newEnv(t)
		e.claim("line#t1#a")
		e.clock.Advance(sweepAfter)
		ctx, cancel := context.WithTimeout(context.Background(), sweep.DefaultReserve/2)
		defer cancel()
		rep, err := e.sw.Run(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want(t, rep, sweep.Report{More: true})
		want(t, e.run(), sweep.Report{Scanned: 1, Requeued: 1})
	})
	t.Run("cut off in the middle", func(t *testing.T) {
		e := newEnv(t)
		const n = 10
		for i := range n {
			e.claim(fmt.Sprintf("line#t1#ev-%d", i))
		}
		e.clock.Advance(sweepAfter)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		reads := 0
		e.st.afterGet = func(string) {
			if reads++; reads == 3 {
				cancel() // the invocation's deadline, during the third record
			}
		}
		rep, err := e.sw.Run(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// The memstore and the fakes ignore ctx, so the third record is
		// finished; none is started after.
		want(t, rep, sweep.Report{Scanned: 3, Requeued: 3, More: true})
		e.st.afterGet = nil
		want(t, e.run(), sweep.Report{Scanned: n - 3, Requeued: n - 3})
		if got := e.q.keys(); len(got) != n {
			t.Errorf("sent %d, want %d", len(got), n)
		}
	})
}

// ctxStore fails every call once its context is done, as the SDK does.
type ctxStore struct{ *hookStore }

func (c ctxStore) MarkRequeued(ctx context.Context, rec *store.Record) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, fmt.Errorf("update item: %w", err)
	}
	return c.hookStore.MarkRequeued(ctx, rec)
}

// A call cut off by the end of the run is not an error: the record stays due.
func TestRunCountsACallCutOffAsInterrupted(t *testing.T) {
	e := newEnv(t)
	e.claim("line#t1#a")
	e.clock.Advance(sweepAfter)
	ctx, cancel := context.WithCancel(context.Background())
	e.st.afterGet = func(string) { cancel() }
	sw, err := sweep.New(sweep.Config{Store: ctxStore{e.st}, Queue: e.q, DLQ: e.dlq, Now: e.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := sw.Run(ctx)
	if err != nil {
		t.Errorf("run: %v", err)
	}
	want(t, rep, sweep.Report{Scanned: 1, Interrupted: 1, More: true})
	e.st.afterGet = nil
	want(t, e.run(), sweep.Report{Scanned: 1, Requeued: 1})
}

// Every shard gets its turn: the next run starts one shard after the last
// one read from, so a record failing at the head of a shard does not starve
// the others.
func TestRunTakesTheShardsInTurn(t *testing.T) {
	e := newEnv(t, func(c *sweep.Config) { c.Limit = 1 })
	keys := keysInShards(3) // in ascending shard order
	for _, k := range keys {
		e.claim(k)
	}
	e.clock.Advance(sweepAfter)
	e.st.getErr = map[string]error{keys[0]: errors.New("poison")}
	for range 3 {
		_, _ = e.sw.Run(e.ctx)
	}
	if got := e.q.keys(); !reflect.DeepEqual(got, keys[1:]) {
		t.Errorf("sent %v after 3 runs of 1 record, want %v (the failing record must not starve them)", got, keys[1:])
	}
}

// keysInShards returns n event keys in n distinct sweep shards, in
// ascending shard order.
func keysInShards(n int) []string {
	byShard := map[int]string{}
	for i := 0; len(byShard) < n; i++ {
		k := fmt.Sprintf("line#t1#s-%d", i)
		if _, ok := byShard[store.ShardOf(k)]; !ok {
			byShard[store.ShardOf(k)] = k
		}
	}
	var keys []string
	for s := range store.SweepShards {
		if k, ok := byShard[s]; ok {
			keys = append(keys, k)
		}
	}
	return keys
}

func TestNewRequiresItsPorts(t *testing.T) {
	mem := memstore.New(memstore.Config{})
	for name, cfg := range map[string]sweep.Config{
		"no store": {Queue: &fakeQueue{}, DLQ: &fakeDLQ{}},
		"no queue": {Store: mem, DLQ: &fakeDLQ{}},
		"no DLQ":   {Store: mem, Queue: &fakeQueue{}},
	} {
		if _, err := sweep.New(cfg); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// The defaults are the receiver's and the engines' (stated by the kernel):
// pin them.
func TestDefaultsMatchTheFunctionsTheySweepAfter(t *testing.T) {
	d := sweep.Defaults()
	if want := intake.DefaultBudget + intake.DefaultGraceMargin; d.Grace != want {
		t.Errorf("Grace %v, want the receiver's default re-enqueue grace %v", d.Grace, want)
	}
	if d.RetryCap != kernel.DefaultRetryCap {
		t.Errorf("RetryCap %v, want the engines' %v", d.RetryCap, kernel.DefaultRetryCap)
	}
	if d.StuckAfter != 5*time.Minute || d.Limit != 500 || d.Shards != store.SweepShards {
		t.Errorf("defaults %+v", d)
	}
}

package storetest

import (
	"context"
	"crypto/rand"
	"maps"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/base/webhook/webhooktest"
	"github.com/hookwall/hookwall/shared/state/store"
)

// Store is the events table as the contract knows it: the union of what the
// receiver (claim, take-over) and the processor (lease, fence, journal) use,
// as [store.Table] implements it.
type Store interface {
	Claim(ctx context.Context, ev store.NewEvent, window time.Duration) (store.ClaimResult, error)
	Unclaim(ctx context.Context, rec *store.Record) (bool, error)
	TakeOverEnqueue(ctx context.Context, rec *store.Record, grace time.Duration) (bool, error)
	RevertEnqueue(ctx context.Context, rec *store.Record, prev int64) error
	CountDelivery(ctx context.Context, rec *store.Record) (bool, error)
	Get(ctx context.Context, key string) (*store.Record, error)
	LoadPayload(ctx context.Context, key string) ([]byte, error)

	Acquire(ctx context.Context, key, owner string, until time.Time) (webhook.Acquisition, error)
	Heartbeat(ctx context.Context, l webhook.Lease, until time.Time) (bool, error)
	Complete(ctx context.Context, l webhook.Lease, retainUntil time.Time) (bool, error)
	Retry(ctx context.Context, l webhook.Lease, lastError string) (bool, error)
	Fail(ctx context.Context, l webhook.Lease, lastError string) (bool, error)

	Journal(ctx context.Context, l webhook.Lease) ([]webhook.JournalEntry, error)
	Steps(ctx context.Context, key, claimID string) ([]webhook.JournalEntry, error)
	SaveStep(ctx context.Context, l webhook.Lease, e webhook.JournalEntry) (bool, error)
	SaveSteps(ctx context.Context, l webhook.Lease, entries []webhook.JournalEntry) (bool, error)
	CompleteSteps(ctx context.Context, l webhook.Lease, retainUntil time.Time, entries []webhook.JournalEntry) (bool, error)

	AcquireCompensation(ctx context.Context, key, owner string, until time.Time) (webhook.Acquisition, error)
	AcquireGeneration(ctx context.Context, key string, gen int64, owner string, until time.Time) (webhook.Acquisition, error)
	AcquireCompensationGeneration(ctx context.Context, key string, gen int64, owner string, until time.Time) (webhook.Acquisition, error)
	HeartbeatCompensation(ctx context.Context, l webhook.Lease, until time.Time) (bool, error)
	Compensated(ctx context.Context, l webhook.Lease, retainUntil time.Time) (bool, error)
	Dead(ctx context.Context, l webhook.Lease, reason string, retainUntil time.Time) (bool, error)
	RetryCompensation(ctx context.Context, l webhook.Lease, lastError string) (bool, error)
	RequeueCompensation(ctx context.Context, l webhook.Lease, lastError string) (bool, error)

	Stuck(ctx context.Context, shard int, after, before time.Time, limit int32,
		cursor map[string]types.AttributeValue) ([]store.StuckRecord, map[string]types.AttributeValue, error)
	SweepCursor(ctx context.Context, shard int) (time.Time, error)
	AdvanceSweepCursor(ctx context.Context, shard int, to time.Time) (bool, error)
	GetMany(ctx context.Context, keys []string) ([]*store.Record, error)
	MarkRequeued(ctx context.Context, rec *store.Record) (bool, error)
	Resweep(ctx context.Context, rec *store.Record, at time.Time) (bool, error)
	Replay(ctx context.Context, key string, opts store.ReplayOptions) (store.ReplayResult, error)

	Hold(ctx context.Context, l webhook.Lease, h webhook.Hold) (bool, error)
	Held(ctx context.Context, on string, limit int32,
		cursor map[string]types.AttributeValue) ([]store.HeldRecord, map[string]types.AttributeValue, error)
	HeldCount(ctx context.Context, on string) (int, error)
	Release(ctx context.Context, rec *store.Record, sweepAt time.Time) (bool, error)
	Recheck(ctx context.Context, rec *store.Record, at, retainUntil time.Time) (bool, error)
	Bury(ctx context.Context, rec *store.Record, reason string, retainUntil time.Time) (bool, error)

	LoadProgress(ctx context.Context, id string) (store.Progress, error)
	SaveProgress(ctx context.Context, id string, p store.Progress) error
}

// Ops is implemented by a store that can tell the DynamoDB operations it
// made (by name: PutItem, UpdateItem, ...) since the last call. When the
// store under test implements it, the suite checks that each transition,
// history entry included, is one write.
type Ops interface {
	TakeOps() map[string]int
}

// NewStore returns an empty store for one subtest, reading the time from
// now (the suite's clock, which only moves when the suite moves it), and
// configured with the suite's [Function], [HistoryKeep] and [SweepAfter].
type NewStore func(t *testing.T, now func() time.Time) Store

// TransitionDB is a business table as [store.ApplyTransition] and the suite
// use it; *dynamodb.Client and *memstore.Table satisfy it.
type TransitionDB interface {
	store.UpdateItemAPI
	PutItem(ctx context.Context, in *dynamodb.PutItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
}

// NewTransitionTable returns an empty business table whose primary key is
// pk (S) and sk (S), as shared/aws/awstest.NewTable creates, and its name.
type NewTransitionTable func(t *testing.T) (db TransitionDB, table string)

// Option configures [Run].
type Option func(*options)

type options struct {
	transitions NewTransitionTable
}

// Transitions adds the store.ApplyTransition subtests, on tables from newTable.
func Transitions(newTable NewTransitionTable) Option {
	return func(o *options) { o.transitions = newTable }
}

// Durations the suite uses.
const (
	// Window is the dedup window (TTL) of the suite's claims.
	Window = time.Hour
	// Grace is the suite's re-enqueue grace.
	Grace = 3 * time.Second
	// LeaseFor is the length of the suite's leases.
	LeaseFor = 10 * time.Second
	// SweepAfter is the store's SweepAfter the suite expects.
	SweepAfter = 5 * time.Minute
)

// The store configuration the suite expects (see [NewStore]).
const (
	// Function is the store's Function, written in every history entry.
	Function = "storetest"
	// HistoryKeep is the store's HistoryKeep: small, so the suite sees
	// entries dropped, and enough for a retried event's five transitions.
	HistoryKeep = 5
)

// Run runs the contract suite against the stores newStore returns, one per
// subtest. Subtests are grouped as claim, take-over, lease, fence, journal,
// history, sweep, compensation, replay, payload, progress, hold, calls,
// deliveries and (with [Transitions])
// transition.
func Run(t *testing.T, newStore NewStore, opts ...Option) {
	t.Helper()
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	group := func(name string, cases []testCase) {
		t.Run(name, func(t *testing.T) {
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					clk := webhooktest.NewClock(time.Now().Truncate(time.Second))
					c.run(t, &env{s: newStore(t, clk.Now), clk: clk, ctx: context.Background()})
				})
			}
		})
	}
	group("claim", claimCases)
	group("take-over", takeOverCases)
	group("lease", leaseCases)
	group("fence", fenceCases)
	group("journal", journalCases)
	group("history", historyCases)
	group("sweep", sweepCases)
	group("compensation", compensationCases)
	group("replay", replayCases)
	group("generation", generationCases)
	group("payload", payloadCases)
	group("progress", progressCases)
	group("hold", holdCases)
	group("calls", callCases)
	group("deliveries", deliveryCases)
	if o.transitions != nil {
		t.Run("transition", func(t *testing.T) {
			for _, c := range transitionCases {
				t.Run(c.name, func(t *testing.T) {
					db, table := o.transitions(t)
					c.run(t, &rows{db: db, table: table, ctx: context.Background()})
				})
			}
		})
	}
}

type testCase struct {
	name string
	run  func(t *testing.T, e *env)
}

// env is one subtest's store and clock, with helpers that fail the test on
// an unexpected error.
type env struct {
	s   Store
	clk *webhooktest.Clock
	ctx context.Context
}

const key = "line#acme#E1"

func newEvent(k, hash string) store.NewEvent {
	return store.NewEvent{Key: k, Provider: "line", Tenant: "acme", EventType: "follow",
		PayloadHash: hash, Payload: []byte(`{"type":"follow","n":1}`), TraceID: "trace-1"}
}

func (e *env) claim(t *testing.T, hash string) store.ClaimResult {
	t.Helper()
	res, err := e.s.Claim(e.ctx, newEvent(key, hash), Window)
	if err != nil {
		t.Fatalf("claim: %v", err)
	}
	return res
}

// claimed claims key and fails the test unless the claim is new.
func (e *env) claimed(t *testing.T) *store.Record {
	t.Helper()
	res := e.claim(t, "h1")
	if res.Outcome != store.Claimed || res.Record == nil {
		t.Fatalf("claim: got %v, want claimed", res.Outcome)
	}
	return res.Record
}

func (e *env) get(t *testing.T) *store.Record {
	t.Helper()
	rec, err := e.s.Get(e.ctx, key)
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	return rec
}

// mustGet reads key's record and fails the test if there is none.
func (e *env) mustGet(t *testing.T) *store.Record {
	t.Helper()
	rec := e.get(t)
	if rec == nil {
		t.Fatalf("get: no record")
	}
	return rec
}

// acquireFunc takes a lease: [Store.Acquire] or [Store.AcquireCompensation].
type acquireFunc func(s Store, ctx context.Context, key, owner string, until time.Time) (webhook.Acquisition, error)

// take takes key's lease for owner for LeaseFor with acquire (op names it
// in failures) and fails the test on an error.
func (e *env) take(t *testing.T, op string, acquire acquireFunc, owner string) webhook.Acquisition {
	t.Helper()
	acq, err := acquire(e.s, e.ctx, key, owner, e.clk.Now().Add(LeaseFor))
	if err != nil {
		t.Fatalf("%s: %v", op, err)
	}
	return acq
}

// taken is take that also fails the test unless it got the lease.
func (e *env) taken(t *testing.T, op string, acquire acquireFunc, owner string) webhook.Acquisition {
	t.Helper()
	acq := e.take(t, op, acquire, owner)
	if acq.Outcome != webhook.Acquired {
		t.Fatalf("%s by %s: got outcome %v (status %s), want acquired", op, owner, acq.Outcome, acq.Status)
	}
	return acq
}

// acquire takes key's processing lease for owner.
func (e *env) acquire(t *testing.T, owner string) webhook.Acquisition {
	t.Helper()
	return e.take(t, "acquire", Store.Acquire, owner)
}

// leased acquires key for owner and fails the test unless it got the lease.
func (e *env) leased(t *testing.T, owner string) webhook.Lease {
	t.Helper()
	return e.taken(t, "acquire", Store.Acquire, owner).Lease
}

// firstLease claims key and returns the lease of its first attempt, taken
// by w1; it fails the test unless both succeed.
func (e *env) firstLease(t *testing.T) webhook.Lease {
	t.Helper()
	e.claimed(t)
	return e.leased(t, "w1")
}

// held fails the test on an error and returns held.
func held(t *testing.T, op string) func(bool, error) bool {
	return func(ok bool, err error) bool {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", op, err)
		}
		return ok
	}
}

func (e *env) journal(t *testing.T, l webhook.Lease) []webhook.JournalEntry {
	t.Helper()
	j, err := e.s.Journal(e.ctx, l)
	if err != nil {
		t.Fatalf("journal: %v", err)
	}
	return j
}

func (e *env) save(t *testing.T, l webhook.Lease, handler, step, result string) bool {
	t.Helper()
	var r []byte
	if result != "" {
		r = []byte(result)
	}
	return held(t, "save step")(e.s.SaveStep(e.ctx, l, webhook.JournalEntry{
		Handler: handler, Step: step, Result: r, CompletedAt: e.clk.Now()}))
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return b
}

// ops returns the operations the store made since the last call, or nil
// when it cannot tell (it does not implement [Ops]).
func (e *env) ops() map[string]int {
	if o, ok := e.s.(Ops); ok {
		return o.TakeOps()
	}
	return nil
}

// expectOps fails the test unless the store (if it counts) made exactly
// want since the last call.
func (e *env) expectOps(t *testing.T, what string, want map[string]int) {
	t.Helper()
	got := e.ops()
	if got == nil {
		return
	}
	if !maps.Equal(got, want) {
		t.Errorf("%s: got DynamoDB calls %v, want %v", what, got, want)
	}
}

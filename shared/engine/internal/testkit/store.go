package testkit

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/aws/awstest"
	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/engine/compensate"
	"github.com/hookwall/hookwall/shared/engine/dispatch"
	"github.com/hookwall/hookwall/shared/state/store"
	"github.com/hookwall/hookwall/shared/state/store/memstore"
)

// EnvStore names the environment variable that picks where the kits keep
// their tables: unset, empty or "memory" in memory (shared/state/store/memstore),
// so that a plain `go test` needs no services; "dynamodb" on fresh tables in
// DynamoDB Local (shared/aws/awstest, which fails the test with a hint when the
// local stack is not running). Any other value fails the test.
const EnvStore = "HOOKWALL_TEST_STORE"

// UseDynamoDB reports whether the kits' tables are in DynamoDB Local
// ([EnvStore] is "dynamodb"). It fails t on an unknown value.
func UseDynamoDB(t testing.TB) bool {
	t.Helper()
	switch v := os.Getenv(EnvStore); v {
	case "", "memory":
		return false
	case "dynamodb":
		return true
	default:
		t.Fatalf("testkit: %s=%q: want memory (the default) or dynamodb", EnvStore, v)
		return false
	}
}

// Store is the events table as the kits use it: what both engines need
// (the processing and the compensation leases, the journal, the fenced
// writes), the receiver's claim and the reads the reports are made of.
// *store.Table and *memstore.Store satisfy it.
type Store interface {
	dispatch.Store
	compensate.Store
	Claim(ctx context.Context, ev store.NewEvent, window time.Duration) (store.ClaimResult, error)
	Get(ctx context.Context, key string) (*store.Record, error)
	Steps(ctx context.Context, key, claimID string) ([]webhook.JournalEntry, error)
}

// NewStore returns an empty events table with the clock now: a
// memstore.Store, or with HOOKWALL_TEST_STORE=dynamodb a store.Table on a
// fresh table in DynamoDB Local, deleted when the test ends.
func NewStore(t testing.TB, now func() time.Time) Store {
	t.Helper()
	if !UseDynamoDB(t) {
		return memstore.New(memstore.Config{Now: now})
	}
	db := awstest.DynamoDB(t)
	table, err := store.New(store.Config{Client: db, TableName: awstest.NewTable(t, db), Now: now})
	if err != nil {
		t.Fatalf("testkit: %v", err)
	}
	return table
}

// errCrashed is what the journal write at the crash point returns to the
// dying attempt, so that it stops there.
var errCrashed = errors.New("testkit: simulated crash of the worker")

// FaultStore is the events table as one scenario's engine sees it: it
// passes every call on, holds the copies of a round together at the lease
// ([Rounds]), records the crash points (the journal writes the kit names),
// crashes the attempt at the scenario's point and then drops every write of
// the crashed attempt, as a dead worker's writes never land: the lease is
// not extended and runs out.
type FaultStore struct {
	Store
	sc     *Scenario
	rounds *Rounds
	point  func(step string) (string, bool)
}

// NewFaultStore wraps table for the scenario sc, the round gate rounds and
// the crash points point names: point returns, for a journal step, the
// step the crash point is reported as, and whether it is one.
func NewFaultStore(table Store, sc *Scenario, rounds *Rounds, point func(step string) (string, bool)) *FaultStore {
	return &FaultStore{Store: table, sc: sc, rounds: rounds, point: point}
}

// AcquireGeneration takes the processing lease, then waits for the round.
func (f *FaultStore) AcquireGeneration(ctx context.Context, key string, gen int64, owner string, until time.Time) (webhook.Acquisition, error) {
	acq, err := f.Store.AcquireGeneration(ctx, key, gen, owner, until)
	f.rounds.Wait(ctx)
	return acq, err
}

// AcquireCompensationGeneration takes the compensation lease, then waits
// for the round.
func (f *FaultStore) AcquireCompensationGeneration(ctx context.Context, key string, gen int64, owner string, until time.Time) (webhook.Acquisition, error) {
	acq, err := f.Store.AcquireCompensationGeneration(ctx, key, gen, owner, until)
	f.rounds.Wait(ctx)
	return acq, err
}

// LoadPayload passes the read on to the table when it keeps payloads apart
// (the processor's dispatch.PayloadLoader).
func (f *FaultStore) LoadPayload(ctx context.Context, key string) ([]byte, error) {
	if pl, ok := f.Store.(interface {
		LoadPayload(ctx context.Context, key string) ([]byte, error)
	}); ok {
		return pl.LoadPayload(ctx, key)
	}
	return nil, nil
}

// Heartbeat extends the processing lease, unless the attempt is dead.
func (f *FaultStore) Heartbeat(ctx context.Context, l webhook.Lease, until time.Time) (bool, error) {
	if f.sc.isDead(l.Owner, "heartbeat") {
		return true, nil // the lease is not extended; the attempt is left to end on its own
	}
	return f.Store.Heartbeat(ctx, l, until)
}

// HeartbeatCompensation extends the compensation lease, unless the attempt is dead.
func (f *FaultStore) HeartbeatCompensation(ctx context.Context, l webhook.Lease, until time.Time) (bool, error) {
	if f.sc.isDead(l.Owner, "heartbeat") {
		return true, nil
	}
	return f.Store.HeartbeatCompensation(ctx, l, until)
}

// fenced makes the write op of the lease l, unless its attempt is dead.
func (f *FaultStore) fenced(l webhook.Lease, op string, write func() (bool, error)) (bool, error) {
	if f.sc.isDead(l.Owner, op) {
		return false, nil
	}
	return write()
}

// Complete moves the record to SUCCEEDED, unless the attempt is dead.
func (f *FaultStore) Complete(ctx context.Context, l webhook.Lease, retainUntil time.Time) (bool, error) {
	return f.fenced(l, "complete", func() (bool, error) { return f.Store.Complete(ctx, l, retainUntil) })
}

// Retry moves the record to RETRY, unless the attempt is dead.
func (f *FaultStore) Retry(ctx context.Context, l webhook.Lease, lastError string) (bool, error) {
	return f.fenced(l, "retry", func() (bool, error) { return f.Store.Retry(ctx, l, lastError) })
}

// Fail moves the record to FAILED, unless the attempt is dead.
func (f *FaultStore) Fail(ctx context.Context, l webhook.Lease, lastError string) (bool, error) {
	return f.fenced(l, "fail", func() (bool, error) { return f.Store.Fail(ctx, l, lastError) })
}

// Compensated moves the record to COMPENSATED, unless the attempt is dead.
func (f *FaultStore) Compensated(ctx context.Context, l webhook.Lease, retainUntil time.Time) (bool, error) {
	return f.fenced(l, "compensated", func() (bool, error) { return f.Store.Compensated(ctx, l, retainUntil) })
}

// Dead moves the record to DEAD, unless the attempt is dead.
func (f *FaultStore) Dead(ctx context.Context, l webhook.Lease, reason string, retainUntil time.Time) (bool, error) {
	return f.fenced(l, "dead", func() (bool, error) { return f.Store.Dead(ctx, l, reason, retainUntil) })
}

// RequeueCompensation gives the record back to the processor, unless the attempt is dead.
func (f *FaultStore) RequeueCompensation(ctx context.Context, l webhook.Lease, lastError string) (bool, error) {
	return f.fenced(l, "requeue", func() (bool, error) { return f.Store.RequeueCompensation(ctx, l, lastError) })
}

// RetryCompensation leaves the record for the next compensation attempt, unless the attempt is dead.
func (f *FaultStore) RetryCompensation(ctx context.Context, l webhook.Lease, lastError string) (bool, error) {
	return f.fenced(l, "retry compensation", func() (bool, error) { return f.Store.RetryCompensation(ctx, l, lastError) })
}

// SaveStep writes a journal entry, unless the attempt is dead. At a crash
// point it may crash the attempt: before the write (the entry is not
// written) or after it (written, and still reported failed).
func (f *FaultStore) SaveStep(ctx context.Context, l webhook.Lease, e webhook.JournalEntry) (bool, error) {
	if f.sc.isDead(l.Owner, "save "+e.Handler+"/"+e.Step) {
		return false, nil
	}
	step, ok := f.point(e.Step)
	if !ok {
		return f.Store.SaveStep(ctx, l, e)
	}
	p := Point{Key: l.Key, Handler: e.Handler, Step: step, Attempt: l.Attempt}
	if f.sc.at(p, l.Owner) {
		return false, errCrashed
	}
	held, err := f.Store.SaveStep(ctx, l, e)
	if err != nil || !held {
		return held, err
	}
	f.sc.landed(e.Handler + "/" + step)
	p.Journaled = true
	if f.sc.at(p, l.Owner) {
		return false, errCrashed
	}
	return true, nil
}

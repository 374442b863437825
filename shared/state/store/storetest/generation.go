package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/state/store"
)

// acquireGen takes key's processing lease for owner for a message of
// generation gen.
func (e *env) acquireGen(t *testing.T, gen int64, owner string) webhook.Acquisition {
	t.Helper()
	return e.takeGen(t, "acquire", e.s.AcquireGeneration, gen, owner)
}

// compensateGen takes key's compensation lease for owner for a dead letter
// of generation gen.
func (e *env) compensateGen(t *testing.T, gen int64, owner string) webhook.Acquisition {
	t.Helper()
	return e.takeGen(t, "acquire compensation", e.s.AcquireCompensationGeneration, gen, owner)
}

// takeGen takes key's lease through acquire (named what) for owner for a
// message of generation gen, failing the test on an error.
func (e *env) takeGen(t *testing.T, what string,
	acquire func(ctx context.Context, key string, gen int64, owner string, until time.Time) (webhook.Acquisition, error),
	gen int64, owner string) webhook.Acquisition {
	t.Helper()
	acq, err := acquire(e.ctx, key, gen, owner, e.clk.Now().Add(LeaseFor))
	if err != nil {
		t.Fatalf("%s (generation %d): %v", what, gen, err)
	}
	return acq
}

// unchanged fails the test unless key's record is still before.
func (e *env) unchanged(t *testing.T, what string, before *store.Record) {
	t.Helper()
	got := e.mustGet(t)
	if got.Version != before.Version || got.Status != before.Status || got.LeaseOwner != before.LeaseOwner ||
		got.Compensations != before.Compensations || got.Attempts != before.Attempts {
		t.Errorf("%s: the record changed: %+v, want %+v", what, got, before)
	}
}

var generationCases = []testCase{
	{"a claimed record is generation 0 and its messages carry 0, as the old ones without it", func(t *testing.T, e *env) {
		e.claimed(t)
		rec := e.mustGet(t)
		if rec.Generation != 0 || rec.Envelope().Generation != 0 {
			t.Fatalf("got generation %d (envelope %d), want 0", rec.Generation, rec.Envelope().Generation)
		}
		if acq := e.acquireGen(t, 0, "w1"); acq.Outcome != webhook.Acquired || acq.Generation != 0 {
			t.Fatalf("acquire for generation 0: got %v (generation %d), want acquired", acq.Outcome, acq.Generation)
		}
	}},
	{"each replay starts a new generation, and the envelope carries it", func(t *testing.T, e *env) {
		e.failed(t)
		for want := int64(1); want <= 2; want++ {
			rec := e.replayed(t, store.ReplayOptions{Force: true, Window: Window})
			if rec.Generation != want || rec.Envelope().Generation != want || e.mustGet(t).Generation != want {
				t.Fatalf("replay %d: got generation %d (envelope %d, stored %d), want %d", want, rec.Generation,
					rec.Envelope().Generation, e.mustGet(t).Generation, want)
			}
		}
	}},
	{"a stale dead letter of a replayed FAILED event is not compensated; the current one is", func(t *testing.T, e *env) {
		e.failed(t)
		e.clk.Advance(time.Second)
		e.replayed(t, store.ReplayOptions{Window: Window}) // RECEIVED, generation 1
		before := e.mustGet(t)
		e.ops()
		acq := e.compensateGen(t, 0, "c1")
		if acq.Outcome != webhook.AcquireStale || acq.Status != webhook.StatusReceived || acq.Generation != 1 {
			t.Fatalf("the old dead letter: got %v from %s (generation %d), want stale from RECEIVED (1)", acq.Outcome, acq.Status, acq.Generation)
		}
		if ops := e.ops(); ops != nil && ops["UpdateItem"] > 1 {
			t.Errorf("the stale dead letter: got calls %v, want at most one write (failed)", ops)
		}
		e.unchanged(t, "the stale dead letter", before)
		// With the lease learned (the hint path) the write itself refuses.
		if acq := e.compensateGen(t, 0, "c1"); acq.Outcome != webhook.AcquireStale {
			t.Fatalf("the old dead letter again: got %v, want stale", acq.Outcome)
		}
		e.unchanged(t, "the stale dead letter again", before)
		if acq := e.compensateGen(t, 1, "c2"); acq.Outcome != webhook.Acquired || acq.Status != webhook.StatusReceived {
			t.Fatalf("a dead letter of the current life (a redrive): got %v from %s, want acquired from RECEIVED", acq.Outcome, acq.Status)
		}
	}},
	{"the processor leaves a stale message and takes the current one", func(t *testing.T, e *env) {
		e.failed(t)
		e.replayed(t, store.ReplayOptions{Window: Window})
		before := e.mustGet(t)
		if acq := e.acquireGen(t, 0, "w1"); acq.Outcome != webhook.AcquireStale || acq.Generation != 1 {
			t.Fatalf("the old message: got %v (generation %d), want stale (1)", acq.Outcome, acq.Generation)
		}
		e.unchanged(t, "the stale message", before)
		if acq := e.acquireGen(t, 1, "w2"); acq.Outcome != webhook.Acquired || acq.Lease.Attempt != 1 {
			t.Fatalf("the current message: got %v attempt %d, want acquired, attempt 1", acq.Outcome, acq.Lease.Attempt)
		}
		// A stale message beside a live lease of the new life: stale, not busy.
		if acq := e.acquireGen(t, 0, "w3"); acq.Outcome != webhook.AcquireStale {
			t.Fatalf("the old message beside the new lease: got %v, want stale", acq.Outcome)
		}
	}},
	{"a message of any generation and a newer one than the record's are not stale", func(t *testing.T, e *env) {
		e.failed(t)
		e.replayed(t, store.ReplayOptions{Window: Window})
		if acq := e.acquireGen(t, webhook.AnyGeneration, "w1"); acq.Outcome != webhook.Acquired {
			t.Fatalf("any generation: got %v, want acquired", acq.Outcome)
		}
		held(t, "fail")(e.s.Fail(e.ctx, e.mustGet(t).Lease(), "again"))
		if acq := e.compensateGen(t, 5, "c1"); acq.Outcome != webhook.Acquired || acq.Status != webhook.StatusFailed {
			t.Fatalf("a newer generation: got %v from %s, want acquired from FAILED", acq.Outcome, acq.Status)
		}
	}},
}

package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/state/store"
)

// The scopes and the target the hold cases use.
const (
	holdOn     = "target#forward/acme"
	holdTarget = "forward/acme"
	holdReason = "circuit open: forward/acme"
	// Recheck is how far ahead the hold cases set recheckAt.
	Recheck = 30 * time.Second
	// HeldRetention is how long the hold cases keep a held record at least.
	HeldRetention = 7 * 24 * time.Hour
)

// holdOf is the hold the cases write at now, on scope on.
func holdOf(now time.Time, on string) webhook.Hold {
	return webhook.Hold{Reason: holdReason, On: on, Target: holdTarget, RecheckAt: now.Add(Recheck),
		RetainUntil: now.Add(HeldRetention)}
}

// heldRecord claims key, leases it and holds it on on, failing the test
// unless each step happens; it returns the lease the hold settled.
func (e *env) heldRecord(t *testing.T, k, on string) webhook.Lease {
	t.Helper()
	if res, err := e.s.Claim(e.ctx, newEvent(k, "h"), Window); err != nil || res.Outcome != store.Claimed {
		t.Fatalf("claim %s: %v, %v", k, res.Outcome, err)
	}
	acq, err := e.s.Acquire(e.ctx, k, "w1", e.clk.Now().Add(LeaseFor))
	if err != nil || acq.Outcome != webhook.Acquired {
		t.Fatalf("acquire %s: %+v, %v", k, acq, err)
	}
	if !held(t, "hold")(e.s.Hold(e.ctx, acq.Lease, holdOf(e.clk.Now(), on))) {
		t.Fatalf("hold %s: lease lost", k)
	}
	return acq.Lease
}

// heldKeys pages through the held index of on, limit entries a page, and
// returns the keys listed (at most 20 pages).
func (e *env) heldKeys(t *testing.T, on string, limit int32) []string {
	t.Helper()
	return allPages(t, "held", limit, func(r store.HeldRecord) string { return r.Key },
		func(cursor map[string]types.AttributeValue) ([]store.HeldRecord, map[string]types.AttributeValue, error) {
			return e.s.Held(e.ctx, on, limit, cursor)
		})
}

func (e *env) heldCount(t *testing.T, on string) int {
	t.Helper()
	n, err := e.s.HeldCount(e.ctx, on)
	if err != nil {
		t.Fatalf("held count: %v", err)
	}
	return n
}

var holdCases = []testCase{
	{"bury ends a held record DEAD with the reason, pinned to its version, never under a live lease", func(t *testing.T, e *env) {
		e.heldRecord(t, key, holdOn)
		rec := e.mustGet(t)
		stale := *rec
		stale.Version--
		if ok, err := e.s.Bury(e.ctx, &stale, "payload gone", e.clk.Now().Add(HeldRetention)); ok || err != nil {
			t.Fatalf("bury at a stale version: %v %v; want moved on", ok, err)
		}
		e.clk.Advance(time.Minute)
		if ok, err := e.s.Bury(e.ctx, rec, "payload gone", e.clk.Now().Add(2*HeldRetention)); !ok || err != nil {
			t.Fatalf("bury: %v %v", ok, err)
		}
		got := e.mustGet(t)
		if got.Status != webhook.StatusDead || got.LastError != "payload gone" || got.HeldOn != "" || got.RecheckAt != 0 ||
			got.Version != rec.Version || got.ExpiresAt != e.clk.Now().Add(2*HeldRetention).Unix() {
			t.Errorf("after bury: %+v; want DEAD, reason, held attributes gone, version %d, expiry raised", got, rec.Version)
		}
		if h := got.History[len(got.History)-1]; h.From != webhook.StatusHeld || h.To != webhook.StatusDead || h.Error != "payload gone" {
			t.Errorf("history entry %+v", h)
		}
		if n := e.heldCount(t, holdOn); n != 0 {
			t.Errorf("still %d in the held index", n)
		}
		// A live lease is never buried.
		k2 := key + "-leased"
		if res, err := e.s.Claim(e.ctx, newEvent(k2, "h"), Window); err != nil || res.Outcome != store.Claimed {
			t.Fatalf("claim: %v %v", res.Outcome, err)
		}
		if acq, err := e.s.Acquire(e.ctx, k2, "w1", e.clk.Now().Add(LeaseFor)); err != nil || acq.Outcome != webhook.Acquired {
			t.Fatalf("acquire: %v %v", acq.Outcome, err)
		}
		leased, err := e.s.Get(e.ctx, k2)
		if err != nil {
			t.Fatal(err)
		}
		if ok, err := e.s.Bury(e.ctx, leased, "payload gone", e.clk.Now().Add(HeldRetention)); ok || err != nil {
			t.Errorf("bury under a live lease: %v %v; want refused", ok, err)
		}
	}},
	{"hold moves PROCESSING to HELD under the lease and gives the attempt back", func(t *testing.T, e *env) {
		base := e.clk.Now()
		rec := e.claimed(t)
		l := e.leased(t, "w1")
		e.clk.Advance(time.Second)
		now := e.clk.Now()
		h := holdOf(now, holdOn)
		h.RetainUntil = base.Add(Window + 24*time.Hour)
		e.ops()
		if !held(t, "hold")(e.s.Hold(e.ctx, l, h)) {
			t.Fatal("hold: lease lost")
		}
		e.expectOps(t, "hold", map[string]int{"UpdateItem": 1})
		got := e.mustGet(t)
		if got.Status != webhook.StatusHeld || got.Version != l.Version+1 || got.Attempts != 0 || got.LeaseOwner != "" || got.LeaseUntil != 0 {
			t.Errorf("got status %s version %d attempts %d lease %q/%d; want HELD, %d, 0 and no lease",
				got.Status, got.Version, got.Attempts, got.LeaseOwner, got.LeaseUntil, l.Version+1)
		}
		if got.HeldOn != holdOn || got.HeldSince != now.UnixMilli() || got.RecheckAt != h.RecheckAt.UnixMilli() ||
			got.HeldReason != holdReason || got.Target != holdTarget {
			t.Errorf("got heldOn %q heldSince %d recheckAt %d reason %q target %q; want %q, now, now+%v, %q, %q",
				got.HeldOn, got.HeldSince, got.RecheckAt, got.HeldReason, got.Target, holdOn, Recheck, holdReason, holdTarget)
		}
		if got.SweepShard != rec.SweepShard || got.SweepAt != h.RecheckAt.UnixMilli() {
			t.Errorf("got sweep %q/%d, want %q/%d (recheckAt)", got.SweepShard, got.SweepAt, rec.SweepShard, h.RecheckAt.UnixMilli())
		}
		if got.ExpiresAt != h.RetainUntil.Unix() {
			t.Errorf("got expiresAt %d, want raised to RetainUntil %d", got.ExpiresAt, h.RetainUntil.Unix())
		}
		expectHistory(t, got, base, 0,
			`v1 →RECEIVED attempt=0 owner= error="" fn=storetest @0`,
			`v2 RECEIVED→PROCESSING attempt=1 owner=w1 error="" fn=storetest @0`,
			`v3 PROCESSING→HELD attempt=0 owner=w1 error="circuit open: forward/acme" fn=storetest @1000`)
	}},
	{"a hold of the call that opened the breaker counts the give-back, once per hold", func(t *testing.T, e *env) {
		e.claimed(t)
		l := e.leased(t, "w1")
		if l.GivenBack != 0 {
			t.Fatalf("a fresh lease: given back %d, want 0", l.GivenBack)
		}
		h := holdOf(e.clk.Now(), holdOn)
		h.GiveBack = true
		if !held(t, "hold")(e.s.Hold(e.ctx, l, h)) {
			t.Fatal("hold: lease lost")
		}
		got := e.mustGet(t)
		if got.GivenBack != 1 || got.Attempts != 0 {
			t.Errorf("got givenBack %d attempts %d; want 1 and 0", got.GivenBack, got.Attempts)
		}
		if ok, err := e.s.Release(e.ctx, got, e.clk.Now().Add(time.Minute)); !ok || err != nil {
			t.Fatal(ok, err)
		}
		acq, err := e.s.Acquire(e.ctx, got.Key, "w2", e.clk.Now().Add(LeaseFor))
		if err != nil || acq.Outcome != webhook.Acquired || acq.Lease.GivenBack != 1 {
			t.Fatalf("acquire after the release: %+v, %v; want a lease with GivenBack 1", acq, err)
		}
		if !held(t, "hold")(e.s.Hold(e.ctx, acq.Lease, holdOf(e.clk.Now(), holdOn))) {
			t.Fatal("second hold: lease lost")
		}
		if got := e.mustGet(t); got.GivenBack != 1 {
			t.Errorf("a gate's hold (no call): givenBack %d, want 1 unchanged", got.GivenBack)
		}
	}},
	{"hold never lowers expiresAt", func(t *testing.T, e *env) {
		rec := e.claimed(t)
		l := e.leased(t, "w1")
		h := holdOf(e.clk.Now(), holdOn)
		h.RetainUntil = e.clk.Now().Add(time.Minute) // before the claim's window ends
		held(t, "hold")(e.s.Hold(e.ctx, l, h))
		if got := e.mustGet(t); got.ExpiresAt != rec.ExpiresAt {
			t.Errorf("got expiresAt %d, want the claim's %d", got.ExpiresAt, rec.ExpiresAt)
		}
	}},
	{"hold is fenced on the lease and needs PROCESSING", func(t *testing.T, e *env) {
		e.claimed(t)
		l1 := e.leased(t, "w1")
		e.clk.Advance(LeaseFor + time.Second)
		l2 := e.leased(t, "w2") // w1's lease ran out and w2 took it over
		if held(t, "hold")(e.s.Hold(e.ctx, l1, holdOf(e.clk.Now(), holdOn))) {
			t.Error("hold with the lost lease: got true, want false")
		}
		held(t, "retry")(e.s.Retry(e.ctx, l2, "x"))
		if held(t, "hold")(e.s.Hold(e.ctx, l2, holdOf(e.clk.Now(), holdOn))) {
			t.Error("hold after the lease settled: got true, want false")
		}
		if got := e.mustGet(t); got.Status != webhook.StatusRetry || got.HeldOn != "" || got.Attempts != 2 {
			t.Errorf("got %s heldOn %q attempts %d, want RETRY, none, 2", got.Status, got.HeldOn, got.Attempts)
		}
		l3 := e.leased(t, "w3")
		if _, err := e.s.Hold(e.ctx, l3, webhook.Hold{Reason: "no scope"}); err == nil {
			t.Error("hold without a scope or recheck time: got no error")
		}
	}},
	{"a held record is not acquired, and a second hold after release counts attempts right", func(t *testing.T, e *env) {
		l := e.firstLease(t)
		held(t, "retry")(e.s.Retry(e.ctx, l, "503"))
		l = e.leased(t, "w1") // attempt 2
		held(t, "hold")(e.s.Hold(e.ctx, l, holdOf(e.clk.Now(), holdOn)))
		acq := e.acquire(t, "w2")
		if acq.Outcome != webhook.AcquireHeld || acq.Status != webhook.StatusHeld || acq.Attempts != 1 {
			t.Errorf("acquire a HELD record: got %v %s attempts %d, want held HELD 1", acq.Outcome, acq.Status, acq.Attempts)
		}
		rec := e.mustGet(t)
		if rec.Version != l.Version+1 {
			t.Errorf("the refused acquire wrote: version %d, want %d", rec.Version, l.Version+1)
		}
		if !held(t, "release")(e.s.Release(e.ctx, rec, e.clk.Now().Add(Grace))) {
			t.Fatal("release: got false")
		}
		if l = e.leased(t, "w3"); l.Attempt != 2 {
			t.Errorf("after the release: got attempt %d, want 2 (the held attempt was given back)", l.Attempt)
		}
		if !held(t, "hold")(e.s.Hold(e.ctx, l, holdOf(e.clk.Now(), holdOn))) {
			t.Fatal("second hold: lease lost")
		}
		if got := e.mustGet(t); got.Attempts != 1 || got.Status != webhook.StatusHeld {
			t.Errorf("second hold: got %s attempts %d, want HELD 1", got.Status, got.Attempts)
		}
	}},
	{"release moves HELD to RETRY fenced on the version and leaves the held index", func(t *testing.T, e *env) {
		base := e.clk.Now()
		e.heldRecord(t, key, holdOn)
		rec := e.mustGet(t)
		stale := *rec
		stale.Version--
		if held(t, "release")(e.s.Release(e.ctx, &stale, e.clk.Now())) {
			t.Error("release at a stale version: got true, want false")
		}
		e.clk.Advance(time.Minute)
		now := e.clk.Now()
		seen := *rec
		e.ops()
		if !held(t, "release")(e.s.Release(e.ctx, rec, now.Add(Grace))) {
			t.Fatal("release: got false")
		}
		e.expectOps(t, "release", map[string]int{"UpdateItem": 1})
		got := e.mustGet(t)
		for name, r := range map[string]*store.Record{"returned": rec, "stored": got} {
			if r.Status != webhook.StatusRetry || r.Version != seen.Version+1 || r.HeldOn != "" || r.HeldSince != 0 || r.RecheckAt != 0 ||
				r.HeldReason != "" || r.EnqueuedAt != now.UnixMilli() || r.SweepAt != now.Add(Grace).UnixMilli() ||
				r.SweepShard != store.ShardName(shardOfKey) || r.Attempts != 0 {
				t.Errorf("%s: got %+v; want RETRY at version %d, the held attributes gone, enqueued now, swept after the grace, attempts 0",
					name, r, seen.Version+1)
			}
		}
		if got.Target != holdTarget {
			t.Errorf("got target %q, want %q kept", got.Target, holdTarget)
		}
		expectHistory(t, got, base, 0,
			`v1 →RECEIVED attempt=0 owner= error="" fn=storetest @0`,
			`v2 RECEIVED→PROCESSING attempt=1 owner=w1 error="" fn=storetest @0`,
			`v3 PROCESSING→HELD attempt=0 owner=w1 error="circuit open: forward/acme" fn=storetest @0`,
			`v4 HELD→RETRY attempt=0 owner= error="" fn=storetest @60000`)
		if held(t, "release")(e.s.Release(e.ctx, &seen, now)) {
			t.Error("a second release of the same record: got true, want false")
		}
		if got := e.heldKeys(t, holdOn, 10); len(got) != 0 || e.heldCount(t, holdOn) != 0 {
			t.Errorf("held index after the release: got %v, want none", got)
		}
	}},
	{"the held index lists one scope's records, oldest first, only while HELD", func(t *testing.T, e *env) {
		keys := []string{"line#acme#H3", "line#acme#H1", "line#acme#H2"}
		for _, k := range keys { // the order is heldSince's, not the key's
			e.heldRecord(t, k, holdOn)
			e.clk.Advance(time.Second)
		}
		e.heldRecord(t, "line#acme#H0", "tenant#acme")
		for _, limit := range []int32{1, 2, 3, 10} {
			if got := e.heldKeys(t, holdOn, limit); !slices.Equal(got, keys) {
				t.Errorf("limit %d: got %v, want %v", limit, got, keys)
			}
		}
		if n := e.heldCount(t, holdOn); n != 3 {
			t.Errorf("count: got %d, want 3", n)
		}
		if got := e.heldKeys(t, "tenant#acme", 10); !slices.Equal(got, []string{"line#acme#H0"}) {
			t.Errorf("other scope: got %v", got)
		}
		if got := e.heldKeys(t, "target#nobody", 10); len(got) != 0 {
			t.Errorf("empty scope: got %v", got)
		}
		if _, _, err := e.s.Held(e.ctx, "", 10, nil); err == nil {
			t.Error("held without a scope: got no error")
		}
		rec, err := e.s.Get(e.ctx, keys[1])
		if err != nil || rec == nil {
			t.Fatalf("get: %v %v", rec, err)
		}
		held(t, "release")(e.s.Release(e.ctx, rec, e.clk.Now()))
		if got, want := e.heldKeys(t, holdOn, 10), []string{keys[0], keys[2]}; !slices.Equal(got, want) {
			t.Errorf("after releasing %s: got %v, want %v", keys[1], got, want)
		}
	}},
	{"recheck pushes the next look and extends the TTL of a record still HELD", func(t *testing.T, e *env) {
		e.heldRecord(t, key, holdOn)
		rec := e.mustGet(t)
		seen := *rec
		e.clk.Advance(Recheck)
		at, keep := e.clk.Now().Add(Recheck), e.clk.Now().Add(HeldRetention)
		e.ops()
		if !held(t, "recheck")(e.s.Recheck(e.ctx, rec, at, keep)) {
			t.Fatal("recheck: got false")
		}
		e.expectOps(t, "recheck", map[string]int{"UpdateItem": 1})
		got := e.mustGet(t)
		for name, r := range map[string]*store.Record{"returned": rec, "stored": got} {
			if r.Status != webhook.StatusHeld || r.Version != seen.Version || r.RecheckAt != at.UnixMilli() || r.SweepAt != at.UnixMilli() ||
				r.ExpiresAt != keep.Unix() || r.HeldOn != holdOn || r.HeldSince != seen.HeldSince {
				t.Errorf("%s: got %+v; want HELD at version %d, recheck and sweep at %d, expiresAt %d, still on %s",
					name, r, seen.Version, at.UnixMilli(), keep.Unix(), holdOn)
			}
		}
		if len(got.History) != len(seen.History) {
			t.Errorf("recheck wrote a history entry: %d entries, want %d", len(got.History), len(seen.History))
		}
		// A shorter retention never lowers the TTL.
		held(t, "recheck")(e.s.Recheck(e.ctx, rec, at, e.clk.Now()))
		if got := e.mustGet(t); got.ExpiresAt != keep.Unix() {
			t.Errorf("recheck with a shorter retention: expiresAt %d, want %d", got.ExpiresAt, keep.Unix())
		}
		held(t, "release")(e.s.Release(e.ctx, rec, e.clk.Now()))
		if held(t, "recheck")(e.s.Recheck(e.ctx, &seen, at, keep)) {
			t.Error("recheck after the release: got true, want false")
		}
	}},
	{"replay of a held record leaves the held index", func(t *testing.T, e *env) {
		e.heldRecord(t, key, holdOn)
		rec := e.replayed(t, store.ReplayOptions{Window: time.Minute})
		got := e.mustGet(t)
		for name, r := range map[string]*store.Record{"returned": rec, "stored": got} {
			if r.Status != webhook.StatusReceived || r.HeldOn != "" || r.HeldSince != 0 || r.RecheckAt != 0 {
				t.Errorf("%s: got %s heldOn %q heldSince %d recheckAt %d, want RECEIVED without held attributes",
					name, r.Status, r.HeldOn, r.HeldSince, r.RecheckAt)
			}
		}
		if got := e.heldKeys(t, holdOn, 10); len(got) != 0 {
			t.Errorf("held index: got %v, want none", got)
		}
	}},
}

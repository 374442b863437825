package storetest

import (
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/state/store"
)

// largePayload returns a JSON payload of about n bytes that gzip cannot
// shrink below half (hex of random bytes): it never fits in a record.
func largePayload(n int) []byte {
	return []byte(`{"type":"message","text":"` + hex.EncodeToString(randomBytes(n/2)) + `"}`)
}

// claimPayload claims key with payload under hash and returns the result.
func (e *env) claimPayload(t *testing.T, hash string, payload []byte) store.ClaimResult {
	t.Helper()
	ev := newEvent(key, hash)
	ev.Payload = payload
	res, err := e.s.Claim(e.ctx, ev, Window)
	if err != nil {
		t.Fatalf("claim: %v", err)
	}
	return res
}

// loadPayload reads key's payload with LoadPayload.
func (e *env) loadPayload(t *testing.T) []byte {
	t.Helper()
	p, err := e.s.LoadPayload(e.ctx, key)
	if err != nil {
		t.Fatalf("load payload: %v", err)
	}
	return p
}

// samePayload fails the test unless got is want.
func samePayload(t *testing.T, what string, got, want []byte) {
	t.Helper()
	if string(got) != string(want) {
		t.Errorf("%s: got %d payload bytes (%.20q), want %d", what, len(got), got, len(want))
	}
}

var payloadCases = []testCase{
	{"a small payload stays in the record and the lease carries it", func(t *testing.T, e *env) {
		payload := []byte(`{"type":"message","text":"` + strings.Repeat("a", 300) + `"}`)
		res := e.claimPayload(t, "h1", payload)
		e.expectOps(t, "claim of a small payload", map[string]int{"PutItem": 1})
		if res.Outcome != store.Claimed || res.Record.PayloadRef != "" {
			t.Fatalf("claim: got %v, payload ref %q; want claimed, in the record", res.Outcome, res.Record.PayloadRef)
		}
		samePayload(t, "get", e.mustGet(t).Payload, payload)
		if rec := e.mustGet(t); rec.PayloadRef != "" {
			t.Errorf("get: payload ref %q, want none", rec.PayloadRef)
		}
		e.ops()
		acq := e.acquire(t, "w1")
		e.expectOps(t, "acquire", map[string]int{"UpdateItem": 1})
		samePayload(t, "acquire", acq.Payload, payload)
	}},
	{"a large payload is stored apart, written before the record, and every reader gets it", func(t *testing.T, e *env) {
		payload := largePayload(8 << 10)
		e.ops()
		res := e.claimPayload(t, "h1", payload)
		// The claim reads the record first (a duplicate would then not
		// rewrite the payload item), finds none, writes the payload item,
		// then the record.
		e.expectOps(t, "claim of a large payload", map[string]int{"GetItem": 1, "PutItem": 2})
		if res.Outcome != store.Claimed || !strings.HasPrefix(res.Record.PayloadRef, store.SKPayloadPrefix) {
			t.Fatalf("claim: got %v, payload ref %q; want claimed, apart", res.Outcome, res.Record.PayloadRef)
		}
		env := res.Record.Envelope()
		samePayload(t, "the claim's envelope", env.Payload, payload)
		if env.PayloadInRecord {
			t.Errorf("the claim's envelope asks for the record's payload; it has it")
		}
		rec := e.mustGet(t)
		samePayload(t, "get", rec.Payload, payload)
		samePayload(t, "get's envelope", rec.Envelope().Payload, payload)
		e.ops()
		acq := e.acquire(t, "w1")
		e.expectOps(t, "acquire of a record whose payload is apart", map[string]int{"UpdateItem": 1})
		if acq.Outcome != webhook.Acquired || len(acq.Payload) != 0 {
			t.Errorf("acquire: got %v with %d payload bytes; want acquired, no payload (no read)", acq.Outcome, len(acq.Payload))
		}
		samePayload(t, "load payload", e.loadPayload(t), payload)
		e.expectOps(t, "load payload", map[string]int{"Query": 1})
	}},
	{"a duplicate of a large payload carries it without reading or rewriting the payload item", func(t *testing.T, e *env) {
		payload := largePayload(8 << 10)
		e.claimPayload(t, "h1", payload)
		e.ops()
		res := e.claimPayload(t, "h1", payload)
		// One read of the record (not of the payload item), and the claim's
		// update that counts it; the payload item is not written again.
		e.expectOps(t, "duplicate claim of a large payload", map[string]int{"GetItem": 1, "UpdateItem": 1})
		if res.Outcome != store.Duplicate || !res.Counted || res.Record.Deliveries != 2 {
			t.Fatalf("claim again: got %v (counted %v, %d deliveries), want a counted duplicate (2)", res.Outcome, res.Counted, res.Record.Deliveries)
		}
		samePayload(t, "the duplicate's record", res.Record.Payload, payload)
		samePayload(t, "the duplicate's envelope", res.Record.Envelope().Payload, payload)
	}},
	{"a conflicting payload never replaces the record's payload item", func(t *testing.T, e *env) {
		payload, other := largePayload(8<<10), largePayload(8<<10)
		first := e.claimPayload(t, "h1", payload)
		res := e.claimPayload(t, "h2", other)
		if res.Outcome != store.Conflict || res.Record.ClaimID != first.Record.ClaimID {
			t.Fatalf("claim of another payload: got %v, want a conflict with the first claim", res.Outcome)
		}
		if len(res.Record.Payload) != 0 && string(res.Record.Payload) != string(payload) {
			t.Errorf("the conflict's record carries the conflicting payload")
		}
		samePayload(t, "get", e.mustGet(t).Payload, payload)
		samePayload(t, "load payload", e.loadPayload(t), payload)
	}},
	{"a duplicate with another payload under the same hash asks the processor to read the record's", func(t *testing.T, e *env) {
		payload, other := largePayload(8<<10), largePayload(8<<10)
		e.claimPayload(t, "h1", payload)
		res := e.claimPayload(t, "h1", other)
		if res.Outcome != store.Duplicate {
			t.Fatalf("claim: got %v, want duplicate", res.Outcome)
		}
		env := res.Record.Envelope()
		if !env.PayloadInRecord || len(env.Payload) != 0 {
			t.Errorf("envelope: PayloadInRecord %v with %d payload bytes; want true and none", env.PayloadInRecord, len(env.Payload))
		}
		samePayload(t, "load payload", e.loadPayload(t), payload)
	}},
	{"the compensator's lease, a replay and a take-over carry a payload stored apart", func(t *testing.T, e *env) {
		payload := largePayload(8 << 10)
		rec := e.claimPayload(t, "h1", payload).Record
		e.clk.Advance(Grace)
		dup := e.claimPayload(t, "h1", payload)
		if won := held(t, "take over")(e.s.TakeOverEnqueue(e.ctx, dup.Record, Grace)); !won {
			t.Fatalf("take over: got false, want true")
		}
		samePayload(t, "take-over's envelope", dup.Record.Envelope().Payload, payload)
		l := e.leased(t, "w1")
		if !held(t, "fail")(e.s.Fail(e.ctx, l, "boom")) {
			t.Fatal("fail: lease lost")
		}
		acq, err := e.s.AcquireCompensation(e.ctx, key, "c1", e.clk.Now().Add(LeaseFor))
		if err != nil || acq.Outcome != webhook.Acquired {
			t.Fatalf("acquire compensation: %v, %v", acq.Outcome, err)
		}
		samePayload(t, "acquire compensation", acq.Payload, payload)
		if !held(t, "dead")(e.s.Dead(e.ctx, acq.Lease, "gave up", e.clk.Now().Add(Window))) {
			t.Fatal("dead: lease lost")
		}
		res, err := e.s.Replay(e.ctx, key, store.ReplayOptions{Window: Window})
		if err != nil || res.Outcome != store.Replayed {
			t.Fatalf("replay: %v, %v", res.Outcome, err)
		}
		samePayload(t, "replay", res.Record.Payload, payload)
		samePayload(t, "replay's envelope", res.Record.Envelope().Payload, payload)
		if res.Record.PayloadRef != rec.PayloadRef {
			t.Errorf("replay: payload ref %q, want %q", res.Record.PayloadRef, rec.PayloadRef)
		}
	}},
	{"unclaim of a large payload lets the retry claim it again, payload whole", func(t *testing.T, e *env) {
		payload := largePayload(8 << 10)
		rec := e.claimPayload(t, "h1", payload).Record
		if !held(t, "unclaim")(e.s.Unclaim(e.ctx, rec)) {
			t.Fatal("unclaim: got false, want true")
		}
		if got := e.get(t); got != nil {
			t.Fatalf("get after unclaim: got a record")
		}
		if p := e.loadPayload(t); p != nil {
			t.Errorf("load payload after unclaim: got %d bytes, want none (no record)", len(p))
		}
		if res := e.claimPayload(t, "h1", payload); res.Outcome != store.Claimed {
			t.Fatalf("claim after unclaim: got %v, want claimed", res.Outcome)
		}
		samePayload(t, "get", e.mustGet(t).Payload, payload)
	}},
	{"an expired record claimed again keeps a payload stored apart", func(t *testing.T, e *env) {
		payload := largePayload(8 << 10)
		e.claimPayload(t, "h1", payload)
		e.clk.Advance(Window + 2*Grace)
		if rec := e.get(t); rec != nil {
			t.Fatalf("get after the window: got a record")
		}
		if res := e.claimPayload(t, "h1", payload); res.Outcome != store.Claimed {
			t.Fatalf("claim after the window: got %v, want claimed", res.Outcome)
		}
		samePayload(t, "get", e.mustGet(t).Payload, payload)
		samePayload(t, "load payload", e.loadPayload(t), payload)
	}},
	{"a payload near the item limit is stored apart and read back; one over it is refused", func(t *testing.T, e *env) {
		payload := randomBytes(store.MaxStoredPayload - 1024) // incompressible: gzip adds a little
		ev := newEvent(key, "h1")
		ev.Payload = payload
		if err := ev.Prepare(); err != nil {
			t.Fatalf("prepare: %v", err)
		}
		if ev.PayloadRef() == "" {
			t.Fatalf("prepare: the payload stays in the record")
		}
		if res, err := e.s.Claim(e.ctx, ev, Window); err != nil || res.Outcome != store.Claimed {
			t.Fatalf("claim: %v, %v", res.Outcome, err)
		}
		samePayload(t, "get", e.mustGet(t).Payload, payload)
		over := newEvent("line#acme#E2", "h1")
		over.Payload = randomBytes(store.MaxStoredPayload + 1)
		if err := over.Prepare(); !errors.Is(err, webhook.ErrTooLarge) {
			t.Errorf("prepare of a payload over the limit: got %v, want ErrTooLarge", err)
		}
	}},
}

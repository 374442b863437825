package store

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookwall/hookwall/shared/base/webhook"
)

// ReplayOptions configures [Table.Replay].
type ReplayOptions struct {
	// Force allows replaying a SUCCEEDED record.
	Force bool
	// FreshSteps gives the record a new claim id, so that the journal of
	// the steps already done is ignored and every step runs again. Without
	// it the journal is kept: the steps done are skipped, but a step whose
	// undo the compensator journaled is not done and runs again, as its
	// next run ([webhook.JournalEntry.Run]), under a new idempotency key.
	FreshSteps bool
	// Window keeps the record at least this long from now (expiresAt is
	// never moved earlier).
	Window time.Duration
	// From, when not empty, replays the record only from these states:
	// one in another state is refused (ReplayRefused, nothing written). The
	// write is pinned to the state read, so a record that left them under
	// the replay is refused too (a bulk recovery of FAILED events never
	// replays one that another run already sent back).
	From []webhook.Status
}

// ReplayOutcome says what [Table.Replay] did.
type ReplayOutcome int

// Replay outcomes.
const (
	// Replayed: the record is RECEIVED again; the caller must enqueue it.
	Replayed ReplayOutcome = iota + 1
	// ReplayRefused: the record is SUCCEEDED and Force was not given, or a
	// worker holds a live lease on it; nothing was written.
	ReplayRefused
	// ReplayMissing: there is no record, or it has expired.
	ReplayMissing
)

// String returns the outcome's name.
func (o ReplayOutcome) String() string { return outcomeName(o, "replayed", "refused", "missing") }

// ReplayResult is the outcome of [Table.Replay] and the record it concerns:
// the record as replayed (Replayed) or as found (ReplayRefused); nil for
// ReplayMissing.
type ReplayResult struct {
	Outcome ReplayOutcome
	Record  *Record
}

// replayable reports whether Replay may move r at now with opts, and if
// not, why.
func replayable(r *Record, opts ReplayOptions, now time.Time) bool {
	if len(opts.From) > 0 && !slices.Contains(opts.From, r.Status) {
		return false
	}
	switch r.Status {
	case webhook.StatusSucceeded:
		return opts.Force
	case webhook.StatusProcessing, webhook.StatusCompensating:
		return r.LeaseUntil < now.UnixMilli()
	}
	return true
}

// Replay sends the record of key back to RECEIVED, to be enqueued again from
// its stored payload: from FAILED, DEAD, COMPENSATED, RETRY or RECEIVED; from
// HELD (leaving the held index), from PROCESSING or COMPENSATING only once their lease has run out; from
// SUCCEEDED only with opts.Force. One strongly consistent read, then one
// conditional UpdateItem pinned to the version and status read: version+1,
// attempts and compensations 0, the lease and lastError removed, enqueuedAt
// = now, the generation + 1 (a new life: the messages of the old one, its
// dead letter among them, are stale from now on, see [AttrGeneration]),
// the sweep attributes set (sweepAt = now + SweepAfter), expiresAt =
// max(its own, now + opts.Window), a new claim id with opts.FreshSteps (the
// journal of the old one is ignored), and the history entry. The caller
// must enqueue the replayed record's envelope; if that fails, the sweeper
// does it later. The record carries its payload; a payload in its own item
// is read (one more read), and its expiry moved to outlive the record's new
// expiresAt by PayloadRetention when it would not (one more write).
//
// Outcomes: Replayed with the record as written, ReplayRefused with the
// record as found (SUCCEEDED without Force, a live lease, or a state not in
// opts.From), ReplayMissing.
func (t *Table) Replay(ctx context.Context, key string, opts ReplayOptions) (ReplayResult, error) {
	now := t.now()
	item, err := t.readItem(ctx, key)
	if err != nil {
		return ReplayResult{}, fmt.Errorf("store: replay %s: %w", key, err)
	}
	cur, err := decodeRecord(item)
	if err != nil {
		return ReplayResult{}, fmt.Errorf("store: replay %s: %w", key, err)
	}
	var payload []byte    // of the payload item payloadRef, read before the write
	var payloadRef string // the payload item read
	var payloadExp int64  // that item's expiresAt
	for range maxPinTries {
		if cur == nil || cur.Expired(now) {
			t.hints.drop(key)
			return ReplayResult{Outcome: ReplayMissing}, nil
		}
		if !replayable(cur, opts, now) {
			if err := t.fillPayload(ctx, cur); err != nil {
				return ReplayResult{}, fmt.Errorf("store: replay %s: %w", key, err)
			}
			return ReplayResult{Outcome: ReplayRefused, Record: cur}, nil
		}
		if cur.PayloadRef != "" && cur.PayloadRef != payloadRef {
			// Read first: a record whose payload is gone cannot be replayed.
			if payload, payloadExp, err = t.getPayload(ctx, key, cur.PayloadRef); err != nil {
				return ReplayResult{}, fmt.Errorf("store: replay %s: %w", key, err)
			}
			payloadRef = cur.PayloadRef
		}
		s := stateOf(cur)
		w := newWrite().
			when("attribute_exists(pk) AND (attribute_not_exists(expiresAt) OR expiresAt >= :nowSec) AND "+
				"(NOT (#s IN (:processing, :compensating)) OR attribute_not_exists(leaseUntil) OR leaseUntil < :nowMs)",
				map[string]types.AttributeValue{
					":nowSec":       avInt(now.Unix()),
					":nowMs":        avInt(now.UnixMilli()),
					":processing":   avString(string(webhook.StatusProcessing)),
					":compensating": avString(string(webhook.StatusCompensating)),
				}).
			sets(map[string]types.AttributeValue{
				AttrStatus:        avString(string(webhook.StatusReceived)),
				AttrVersion:       avInt(s.version + 1),
				AttrAttempts:      avInt(0),
				AttrCompensations: avInt(0),
				AttrEnqueuedAt:    avInt(now.UnixMilli()),
				AttrUpdatedAt:     avInt(now.UnixMilli()),
				AttrSweepShard:    avString(shardName(ShardOf(key))),
				AttrSweepAt:       avInt(now.Add(t.sweepAfter).UnixMilli()),
				AttrExpiresAt:     avInt(max(cur.ExpiresAt, now.Add(opts.Window).Unix())),
				AttrGeneration:    avInt(cur.Generation + 1),
			}).
			removes(AttrLeaseOwner, AttrLeaseUntil, AttrLastError).
			removes(heldAttrs...).
			history(t.historyEntry(now, s.status, webhook.StatusReceived, s.version+1, 0, "", ""), t.keep)
		if opts.FreshSteps {
			w.sets(map[string]types.AttributeValue{AttrClaimID: avString(newClaimID())})
			dropSteps(w, item) // the old claim's entries kept in the record
		}
		pin(w, s)
		out, err := t.update(ctx, key, w, types.ReturnValueAllNew, true)
		if err != nil {
			old, ok := conditionFailed(err)
			if !ok {
				return ReplayResult{}, fmt.Errorf("store: replay %s: %w", key, err)
			}
			item = old
			if cur, err = decodeRecord(old); err != nil {
				return ReplayResult{}, fmt.Errorf("store: replay %s: %w", key, err)
			}
			continue
		}
		rec, err := decodeRecord(out.Attributes)
		if err != nil {
			return ReplayResult{}, fmt.Errorf("store: replay %s: %w", key, err)
		}
		if rec == nil {
			return ReplayResult{}, fmt.Errorf("store: replay %s: no record returned", key)
		}
		t.hints.put(key, stateOf(rec))
		if rec.PayloadRef != "" {
			if rec.PayloadRef != payloadRef { // the write was pinned to cur's version: cannot happen
				return ReplayResult{}, fmt.Errorf("store: replay %s: the record's payload changed under the replay", key)
			}
			rec.Payload = payload
			if err := t.keepPayload(ctx, rec, payloadExp); err != nil {
				return ReplayResult{}, fmt.Errorf("store: replay %s: %w", key, err)
			}
		}
		return ReplayResult{Outcome: Replayed, Record: rec}, nil
	}
	return ReplayResult{}, fmt.Errorf("store: replay %s: the record changed under %d writes in a row", key, maxPinTries)
}

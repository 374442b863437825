package store

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookwall/hookwall/shared/base/webhook"
)

// acquireCondition: claimable (RECEIVED or RETRY, or PROCESSING whose lease
// ran out) and not expired.
const acquireCondition = "attribute_exists(pk) AND (attribute_not_exists(expiresAt) OR expiresAt >= :nowSec) AND " +
	"(#s IN (:received, :retry) OR (#s = :processing AND (attribute_not_exists(leaseUntil) OR leaseUntil < :nowMs)))"

// fenceCondition: the lease is still ours and nothing moved the record since
// (:leased is the status the lease holds the record in).
const fenceCondition = "leaseOwner = :owner AND version = :version AND #s = :leased"

// maxPinTries bounds the conditional writes of one lease-taking call: each
// failed try returns the record as it is, and the next is pinned to it.
const maxPinTries = 5

// pin makes w conditional on the record being exactly in s: its version,
// status and counters, so that the history entry w writes (keyed by the new
// version, from s's status) is the transition it makes.
func pin(w *write, s state) {
	w.when("version = :pinVersion AND #s = :pinStatus", map[string]types.AttributeValue{
		":pinVersion": avInt(s.version), ":pinStatus": avString(string(s.status))})
	for attr, n := range map[string]int64{AttrAttempts: s.attempts, AttrCompensations: s.compensations} {
		if n == 0 {
			w.when("attribute_not_exists("+attr+") OR "+attr+" = :pinZero", map[string]types.AttributeValue{":pinZero": avInt(0)})
		} else {
			w.when(attr+" = :pin"+attr, map[string]types.AttributeValue{":pin" + attr: avInt(n)})
		}
	}
}

// claimable reports whether Acquire may take r at now.
func claimable(r *Record, now time.Time) bool {
	return r != nil && !r.Expired(now) && (r.Status == webhook.StatusReceived || r.Status == webhook.StatusRetry ||
		(r.Status == webhook.StatusProcessing && r.LeaseUntil < now.UnixMilli()))
}

// Acquire takes the lease of the record of key for owner until the given
// time, in one conditional UpdateItem: from RECEIVED or RETRY, or from
// PROCESSING whose lease has run out, and only while the record has not
// expired. It sets status PROCESSING, leaseOwner, leaseUntil and updatedAt,
// increments attempts and version, and adds the transition's history entry.
// When the condition fails it reads the old record sent back with the
// failure (ReturnValuesOnConditionCheckFailure ALL_OLD) and reports
// AlreadyDone, Busy (with the lease's remaining time), InFailedState or
// Missing: a lost race is never an error.
//
// Acquired carries the payload when it is stored in the record, and none
// when it is in its own item (a large payload, see [NewEvent.Prepare]): the
// processor, which has the payload in its message unless the message was
// too large, reads it then with [Table.LoadPayload], so that a lease costs
// no read.
//
// The write is pinned to the record's version and status, which the history
// entry is keyed by: it first assumes the record as a claim leaves it
// (RECEIVED, version 1) or as this table last saw it, and when the record is
// claimable in another state it writes again pinned to the state the failed
// write returned (one more call, for a later attempt that another process
// prepared).
func (t *Table) Acquire(ctx context.Context, key, owner string, until time.Time) (webhook.Acquisition, error) {
	return t.AcquireGeneration(ctx, key, webhook.AnyGeneration, owner, until)
}

// AcquireGeneration is [Table.Acquire] for a message of generation gen
// ([webhook.Envelope.Generation]): the write is also conditional on the
// record's generation being at most gen, and a record of a newer
// generation (replayed or recovered since the message was made) is
// AcquireStale, nothing written. gen [webhook.AnyGeneration] checks
// nothing.
func (t *Table) AcquireGeneration(ctx context.Context, key string, gen int64, owner string, until time.Time) (webhook.Acquisition, error) {
	guess, ok := t.hints.get(key)
	if !ok {
		guess = claimedState
	}
	return t.take(ctx, key, gen, owner, until, t.now(), guess, taking{
		op:        "acquire",
		condition: acquireCondition,
		values: map[string]types.AttributeValue{
			":received":   avString(string(webhook.StatusReceived)),
			":retry":      avString(string(webhook.StatusRetry)),
			":processing": avString(string(webhook.StatusProcessing)),
		},
		to:      webhook.StatusProcessing,
		counter: AttrAttempts,
		count:   func(s state) int64 { return s.attempts },
		may:     claimable,
		lost:    LostAcquisition,
		lease:   (*Record).Lease,
	})
}

// generationCondition: the record's generation is at most :gen (absent is
// 0): the message is not stale.
const generationCondition = "attribute_not_exists(" + AttrGeneration + ") OR " + AttrGeneration + " <= :gen"

// taking is one way of taking a lease: the processor's or the compensator's.
type taking struct {
	op         string                          // in error messages
	condition  string                          // uses :nowMs and :nowSec besides values
	values     map[string]types.AttributeValue // of condition
	to         webhook.Status                  // the status the lease holds the record in
	counter    string                          // the attribute counting the leases taken
	count      func(state) int64               // counter's value in a state
	may        func(*Record, time.Time) bool   // condition, evaluated on a record
	lost       func(*Record, time.Time) webhook.Acquisition
	lease      func(*Record) webhook.Lease
	reportFrom bool // Acquired's Status is the status taken from (else the record's)
	payload    bool // Acquired carries the payload even when it is in its own item
}

// take writes k's lease on key in one conditional UpdateItem pinned to
// guess, and again pinned to the state a failed write returns while the
// record may still be taken (at most maxPinTries writes). A record whose
// generation is newer than gen is AcquireStale ([Record.StaleFor]).
func (t *Table) take(ctx context.Context, key string, gen int64, owner string, until, now time.Time, guess state, k taking) (webhook.Acquisition, error) {
	for range maxPinTries {
		values := map[string]types.AttributeValue{":nowMs": avInt(now.UnixMilli()), ":nowSec": avInt(now.Unix())}
		maps.Copy(values, k.values)
		n := k.count(guess) + 1
		w := newWrite().
			when(k.condition, values)
		if gen != webhook.AnyGeneration {
			w.when(generationCondition, map[string]types.AttributeValue{":gen": avInt(gen)})
		}
		w.
			sets(map[string]types.AttributeValue{
				AttrStatus:     avString(string(k.to)),
				AttrLeaseOwner: avString(owner),
				AttrLeaseUntil: avInt(until.UnixMilli()),
				AttrUpdatedAt:  avInt(now.UnixMilli()),
				k.counter:      avInt(n),
				AttrVersion:    avInt(guess.version + 1),
			}).
			history(t.historyEntry(now, guess.status, k.to, guess.version+1, int(n), owner, ""), t.keep)
		pin(w, guess)
		out, err := t.update(ctx, key, w, types.ReturnValueAllNew, true)
		if err != nil {
			old, ok := conditionFailed(err)
			if !ok {
				return webhook.Acquisition{}, fmt.Errorf("store: %s %s: %w", k.op, key, err)
			}
			rec, err := decodeRecord(old)
			if err != nil {
				return webhook.Acquisition{}, fmt.Errorf("store: %s %s: %w", k.op, key, err)
			}
			if stale(rec, gen, now) {
				t.learn(key, rec, now)
				return StaleAcquisition(rec), nil
			}
			if !k.may(rec, now) {
				t.learn(key, rec, now)
				return k.lost(rec, now), nil
			}
			guess = stateOf(rec)
			continue
		}
		rec, err := decodeRecord(out.Attributes)
		if err != nil {
			return webhook.Acquisition{}, fmt.Errorf("store: %s %s: %w", k.op, key, err)
		}
		if rec == nil {
			return webhook.Acquisition{}, fmt.Errorf("store: %s %s: no record returned", k.op, key)
		}
		t.hints.put(key, stateOf(rec))
		if k.payload {
			if err := t.fillPayload(ctx, rec); err != nil {
				return webhook.Acquisition{}, fmt.Errorf("store: %s %s: %w", k.op, key, err)
			}
		}
		a := webhook.Acquisition{
			Outcome:    webhook.Acquired,
			Lease:      k.lease(rec),
			Status:     rec.Status,
			Attempts:   int(rec.Attempts),
			LastError:  rec.LastError,
			Payload:    rec.Payload,
			Generation: rec.Generation,
		}
		if k.reportFrom {
			a.Status = guess.status
		}
		return a, nil
	}
	return webhook.Acquisition{}, fmt.Errorf("store: %s %s: the record changed under %d writes in a row", k.op, key, maxPinTries)
}

// stale reports whether rec is a live record of a newer generation than
// gen: a message of gen is stale for it.
func stale(rec *Record, gen int64, now time.Time) bool {
	return rec != nil && !rec.Expired(now) && rec.StaleFor(gen)
}

// StaleAcquisition is the AcquireStale of the live record rec (a message
// of an older generation than rec's).
func StaleAcquisition(rec *Record) webhook.Acquisition {
	return webhook.Acquisition{Outcome: webhook.AcquireStale, Status: rec.Status, Attempts: int(rec.Attempts),
		LastError: rec.LastError, Generation: rec.Generation}
}

// learn remembers the state of rec (nothing for a record gone or final).
func (t *Table) learn(key string, rec *Record, now time.Time) {
	if rec == nil || rec.Expired(now) || rec.Status.Terminal() {
		t.hints.drop(key)
		return
	}
	t.hints.put(key, stateOf(rec))
}

// LostAcquisition classifies the record (nil if absent) that made Acquire
// fail at now: AcquireMissing (absent or expired), AcquireDone (final),
// AcquireBusy (PROCESSING, with the lease's remaining time),
// AcquireFailedState (FAILED or COMPENSATING) or AcquireHeld (HELD).
func LostAcquisition(rec *Record, now time.Time) webhook.Acquisition {
	return lost(rec, now, []webhook.Status{webhook.StatusProcessing},
		[]webhook.Status{webhook.StatusFailed, webhook.StatusCompensating})
}

// LostCompensation classifies the record (nil if absent) that
// AcquireCompensation could not take at now: AcquireMissing, AcquireDone,
// AcquireBusy (PROCESSING or COMPENSATING) or AcquireHeld (HELD: the drain
// sends it to the processor again, nothing to compensate).
func LostCompensation(rec *Record, now time.Time) webhook.Acquisition {
	return lost(rec, now, []webhook.Status{webhook.StatusProcessing, webhook.StatusCompensating}, nil)
}

// lost classifies a record a lease could not be taken on: busy statuses
// hold a live lease, failed ones are AcquireFailedState.
func lost(rec *Record, now time.Time, busy, failed []webhook.Status) webhook.Acquisition {
	if rec == nil || rec.Expired(now) {
		return webhook.Acquisition{Outcome: webhook.AcquireMissing}
	}
	a := webhook.Acquisition{Status: rec.Status, Attempts: int(rec.Attempts), LastError: rec.LastError}
	switch {
	case rec.Status.Terminal():
		a.Outcome = webhook.AcquireDone
	case slices.Contains(busy, rec.Status):
		a.Outcome = webhook.AcquireBusy
		a.RetryAfter = max(time.UnixMilli(rec.LeaseUntil).Sub(now), 0)
	case slices.Contains(failed, rec.Status):
		a.Outcome = webhook.AcquireFailedState
	case rec.Status == webhook.StatusHeld:
		a.Outcome = webhook.AcquireHeld
	default:
		a.Outcome = webhook.AcquireMissing
	}
	return a
}

// Lease is the processing lease rec holds: its Attempt counts attempts.
func (rec *Record) Lease() webhook.Lease {
	l := webhook.Lease{
		Key:     rec.Key,
		Owner:   rec.LeaseOwner,
		Version: rec.Version,
		ClaimID: rec.ClaimID,
		Attempt: int(rec.Attempts),
		Until:   time.UnixMilli(rec.LeaseUntil),
		Status:  rec.Status,
		// The calls so far: the attempt adds its own, and its settling
		// write stores them all.
		Calls:     rec.Calls,
		CallCount: int(rec.CallCount),
		GivenBack: int(rec.GivenBack),
	}
	if rec.ExpiresAt > 0 {
		l.ExpiresAt = time.Unix(rec.ExpiresAt, 0)
	}
	return l
}

// CompensationLease is the compensation lease rec holds: its Attempt counts
// compensations.
func (rec *Record) CompensationLease() webhook.Lease {
	l := rec.Lease()
	l.Attempt = int(rec.Compensations)
	return l
}

// Heartbeat extends the lease to until, on condition that l still holds it
// (leaseOwner and status PROCESSING). It does not change the version.
// held is false when the lease is lost.
func (t *Table) Heartbeat(ctx context.Context, l webhook.Lease, until time.Time) (bool, error) {
	_, err := t.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                &t.name,
		Key:                      recordKey(l.Key),
		UpdateExpression:         aws.String("SET leaseUntil = :until, updatedAt = :nowMs"),
		ConditionExpression:      aws.String("leaseOwner = :owner AND #s = :processing"),
		ExpressionAttributeNames: map[string]string{"#s": AttrStatus},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":until":      avInt(until.UnixMilli()),
			":nowMs":      avInt(t.now().UnixMilli()),
			":owner":      avString(l.Owner),
			":processing": avString(string(webhook.StatusProcessing)),
		},
	})
	return fenced(err, "heartbeat", l.Key)
}

// Complete moves the record to SUCCEEDED, keeps it until retainUntil
// (expiresAt), clears the lease and lastError and leaves the sweep
// attributes alone (the index entry is not written; the sweeper passes it,
// see [SweepIndex]); fenced on l's owner and version. held is false when the lease
// is lost (nothing is written).
func (t *Table) Complete(ctx context.Context, l webhook.Lease, retainUntil time.Time) (bool, error) {
	return t.transition(ctx, l, webhook.StatusProcessing, webhook.StatusSucceeded, "", completion(retainUntil))
}

// completion is the write of a completion, without the transition.
func completion(retainUntil time.Time) *write {
	return newWrite().sets(map[string]types.AttributeValue{AttrExpiresAt: avInt(retainUntil.Unix())}).
		removes(AttrLastError)
}

// Retry moves the record to RETRY with lastError and clears the lease;
// fenced on l's owner and version.
func (t *Table) Retry(ctx context.Context, l webhook.Lease, lastError string) (bool, error) {
	return t.transitionWithError(ctx, l, webhook.StatusProcessing, webhook.StatusRetry, lastError)
}

// Fail moves the record to FAILED with lastError and clears the lease;
// fenced on l's owner and version.
func (t *Table) Fail(ctx context.Context, l webhook.Lease, lastError string) (bool, error) {
	return t.transitionWithError(ctx, l, webhook.StatusProcessing, webhook.StatusFailed, lastError)
}

// transition completes w as one fenced transition of the lease l, which
// holds the record in status leased: to status to, version+1, the lease
// removed, updatedAt, the history entry (with errText), the calls the
// attempt added ([webhook.Lease.AddCalls]) and the target it was bound for
// (l.Target, when set), in one conditional UpdateItem.
func (t *Table) transition(ctx context.Context, l webhook.Lease, leased, to webhook.Status, errText string, w *write) (bool, error) {
	_, held, err := t.transitionReturning(ctx, l, leased, to, errText, w, types.ReturnValueNone)
	return held, err
}

// transitionReturning is [Table.transition], returning the item as rv
// asks (nil unless held).
func (t *Table) transitionReturning(ctx context.Context, l webhook.Lease, leased, to webhook.Status, errText string, w *write,
	rv types.ReturnValue) (map[string]types.AttributeValue, bool, error) {
	now := t.now()
	if err := recordCalls(w, l); err != nil {
		return nil, false, fmt.Errorf("store: set %s %s: %w", to, l.Key, err)
	}
	if _, set := w.values[":set_"+AttrTarget]; !set && l.Target != "" { // a hold's own target comes first
		w.sets(map[string]types.AttributeValue{AttrTarget: avString(l.Target)})
	}
	w.sets(map[string]types.AttributeValue{
		AttrStatus:    avString(string(to)),
		AttrVersion:   avInt(l.Version + 1),
		AttrUpdatedAt: avInt(now.UnixMilli()),
	}).removes(AttrLeaseOwner, AttrLeaseUntil).
		when(fenceCondition, map[string]types.AttributeValue{
			":owner":   avString(l.Owner),
			":version": avInt(l.Version),
			":leased":  avString(string(leased)),
		}).
		history(t.historyEntry(now, leased, to, l.Version+1, l.Attempt, l.Owner, errText), t.keep)
	out, err := t.update(ctx, l.Key, w, rv, false)
	held, err := fenced(err, "set "+string(to), l.Key)
	if cur, ok := t.hints.get(l.Key); held && ok && cur.version == l.Version && !to.Terminal() {
		cur.version, cur.status = l.Version+1, to
		t.hints.put(l.Key, cur)
	} else if held {
		t.hints.drop(l.Key)
	}
	if !held || out == nil {
		return nil, held, err
	}
	return out.Attributes, held, err
}

// transitionWithError is the transition of the lease l from leased to to
// that records lastError, in the record's lastError and in the history
// entry.
func (t *Table) transitionWithError(ctx context.Context, l webhook.Lease, leased, to webhook.Status, lastError string) (bool, error) {
	w := newWrite().sets(map[string]types.AttributeValue{AttrLastError: avString(lastError)})
	return t.transition(ctx, l, leased, to, lastError, w)
}

func avString(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }

func avInt(n int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
}

// The compensator's lease: the same conditional take and settle as the
// processor's, from and to other states.

// compensateCondition: the compensator may take the record (FAILED,
// RECEIVED or RETRY; PROCESSING or COMPENSATING whose lease ran out or was
// given back) and it has not expired.
const compensateCondition = "attribute_exists(pk) AND (attribute_not_exists(expiresAt) OR expiresAt >= :nowSec) AND " +
	"(#s IN (:failed, :received, :retry) OR (#s IN (:processing, :compensating) AND " +
	"(attribute_not_exists(leaseUntil) OR leaseUntil < :nowMs)))"

// compensable reports whether AcquireCompensation may take r at now.
func compensable(r *Record, now time.Time) bool {
	if r == nil || r.Expired(now) {
		return false
	}
	switch r.Status {
	case webhook.StatusFailed, webhook.StatusReceived, webhook.StatusRetry:
		return true
	case webhook.StatusProcessing, webhook.StatusCompensating:
		return r.LeaseUntil < now.UnixMilli()
	}
	return false
}

// AcquireCompensation takes the compensation lease of the record of key for
// owner until the given time, in one conditional UpdateItem: from FAILED,
// RECEIVED or RETRY, or from PROCESSING or COMPENSATING whose lease has run
// out (or was given back by RetryCompensation), while the record has not
// expired. It sets status COMPENSATING, leaseOwner, leaseUntil and
// updatedAt, increments version and compensations (the lease's Attempt) and
// adds the history entry. Acquired carries the payload (read from its own
// item when it is stored apart, one more read), the record's
// processing attempts and lastError, and in Status the status the record
// came from. Otherwise: a final record is AcquireDone, a live lease
// (PROCESSING or COMPENSATING) AcquireBusy with its remaining time, an
// absent or expired record AcquireMissing.
//
// Like Acquire, the write is pinned to the record's version and status; the
// state comes from this table's last write of the key, or else from one
// strongly consistent read first.
func (t *Table) AcquireCompensation(ctx context.Context, key, owner string, until time.Time) (webhook.Acquisition, error) {
	return t.AcquireCompensationGeneration(ctx, key, webhook.AnyGeneration, owner, until)
}

// AcquireCompensationGeneration is [Table.AcquireCompensation] for a dead
// letter of generation gen ([webhook.Envelope.Generation]): a record of a
// newer generation is AcquireStale, nothing written. That is a dead letter
// of an earlier life of the event (its FAILED message, say) that arrives
// after a replay or recovery sent the event back to RECEIVED: without the
// check it would be taken as a redrive of the new life and compensate it.
// gen [webhook.AnyGeneration] checks nothing.
func (t *Table) AcquireCompensationGeneration(ctx context.Context, key string, gen int64, owner string, until time.Time) (webhook.Acquisition, error) {
	now := t.now()
	guess, ok := t.hints.get(key)
	if !ok {
		rec, err := t.read(ctx, key)
		if err != nil {
			return webhook.Acquisition{}, fmt.Errorf("store: acquire compensation %s: %w", key, err)
		}
		if stale(rec, gen, now) {
			return StaleAcquisition(rec), nil
		}
		if !compensable(rec, now) {
			return LostCompensation(rec, now), nil
		}
		guess = stateOf(rec)
	}
	return t.take(ctx, key, gen, owner, until, now, guess, taking{
		op:        "acquire compensation",
		condition: compensateCondition,
		values: map[string]types.AttributeValue{
			":failed":       avString(string(webhook.StatusFailed)),
			":received":     avString(string(webhook.StatusReceived)),
			":retry":        avString(string(webhook.StatusRetry)),
			":processing":   avString(string(webhook.StatusProcessing)),
			":compensating": avString(string(webhook.StatusCompensating)),
		},
		to:         webhook.StatusCompensating,
		counter:    AttrCompensations,
		count:      func(s state) int64 { return s.compensations },
		may:        compensable,
		lost:       LostCompensation,
		lease:      (*Record).CompensationLease,
		reportFrom: true,
		payload:    true,
	})
}

// read is a strongly consistent GetItem of the record of key (nil if absent).
func (t *Table) read(ctx context.Context, key string) (*Record, error) {
	item, err := t.readItem(ctx, key)
	if err != nil {
		return nil, err
	}
	return decodeRecord(item)
}

// readItem is a strongly consistent GetItem of the record item of key (nil if absent).
func (t *Table) readItem(ctx context.Context, key string) (map[string]types.AttributeValue, error) {
	out, err := t.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &t.name, Key: recordKey(key), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, err
	}
	return out.Item, nil
}

// HeartbeatCompensation extends the compensation lease l to until, on
// condition that l still holds the record (leaseOwner, version, status
// COMPENSATING). It does not change the version. held is false when the
// lease is lost.
func (t *Table) HeartbeatCompensation(ctx context.Context, l webhook.Lease, until time.Time) (bool, error) {
	w := newWrite().
		sets(map[string]types.AttributeValue{AttrLeaseUntil: avInt(until.UnixMilli()), AttrUpdatedAt: avInt(t.now().UnixMilli())}).
		when(fenceCondition, map[string]types.AttributeValue{
			":owner":   avString(l.Owner),
			":version": avInt(l.Version),
			":leased":  avString(string(webhook.StatusCompensating)),
		})
	_, err := t.update(ctx, l.Key, w, types.ReturnValueNone, false)
	return fenced(err, "heartbeat compensation", l.Key)
}

// Compensated moves the record to COMPENSATED, keeps it until retainUntil
// (expiresAt), clears the lease and leaves the sweep attributes alone
// (lastError stays: why it was compensated); fenced on the compensation lease l (owner,
// version, status COMPENSATING). held is false when the lease is lost.
func (t *Table) Compensated(ctx context.Context, l webhook.Lease, retainUntil time.Time) (bool, error) {
	w := newWrite().sets(map[string]types.AttributeValue{AttrExpiresAt: avInt(retainUntil.Unix())})
	return t.transition(ctx, l, webhook.StatusCompensating, webhook.StatusCompensated, "", w)
}

// Dead moves the record to DEAD with lastError = reason, keeps it until
// retainUntil (expiresAt), clears the lease and leaves the sweep
// attributes alone; fenced on the compensation lease l. held is false when the
// lease is lost.
func (t *Table) Dead(ctx context.Context, l webhook.Lease, reason string, retainUntil time.Time) (bool, error) {
	w := newWrite().sets(map[string]types.AttributeValue{AttrExpiresAt: avInt(retainUntil.Unix()), AttrLastError: avString(reason)})
	return t.transition(ctx, l, webhook.StatusCompensating, webhook.StatusDead, reason, w)
}

// RequeueCompensation gives a record the processor never finished back to
// the processor: COMPENSATING → RETRY with lastError (why), the lease
// cleared, version+1, the sweep attributes kept (RETRY is not terminal);
// fenced on the compensation lease l. The compensator calls it for a dead
// letter whose record was not FAILED (SQS redrove it after
// maxReceiveCount receives, before the processor gave up) and then sends
// the event to the main queue again. held is false when the lease is lost.
func (t *Table) RequeueCompensation(ctx context.Context, l webhook.Lease, lastError string) (bool, error) {
	return t.transitionWithError(ctx, l, webhook.StatusCompensating, webhook.StatusRetry, lastError)
}

// RetryCompensation gives the compensation lease l back after a failed
// attempt: the record stays COMPENSATING with lastError, without a lease, at
// version+1 (a transition COMPENSATING → COMPENSATING in its history), so
// the next delivery takes it at once. Fenced on l; held is false when the
// lease is lost.
func (t *Table) RetryCompensation(ctx context.Context, l webhook.Lease, lastError string) (bool, error) {
	return t.transitionWithError(ctx, l, webhook.StatusCompensating, webhook.StatusCompensating, lastError)
}

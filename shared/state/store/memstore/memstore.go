package memstore

import (
	"bytes"
	"cmp"
	"context"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/state/store"
)

// Config configures a [Store].
type Config struct {
	// Now is the clock (optional; default time.Now).
	Now func() time.Time
	// Function, HistoryKeep and SweepAfter are those of [store.Config].
	Function    string
	HistoryKeep int
	SweepAfter  time.Duration
}

// Store is an in-memory events table: event records and their journal
// entries, with the conditional semantics of [store.Table]. It is safe for
// concurrent use. The zero value is not usable; call [New].
type Store struct {
	now        func() time.Time
	function   string
	keep       int64
	sweepAfter time.Duration

	mu    sync.Mutex
	recs  map[string]*store.Record      // by event key
	steps map[string]map[string]journal // by event key, then sort key
	prog  map[string]store.Progress     // by delivery id

	cursors map[int]int64 // the sweeper's cursors, by shard (epoch ms)
}

// journal is one journal entry as the table stores it.
type journal struct {
	claimID     string
	handler     string
	step        string
	result      []byte
	completedAt int64 // epoch ms
	run         int   // webhook.JournalEntry.Run
	expiresAt   int64 // epoch s
}

// New returns an empty Store.
func New(cfg Config) *Store {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.HistoryKeep <= 0 {
		cfg.HistoryKeep = store.DefaultHistoryKeep
	}
	if cfg.SweepAfter <= 0 {
		cfg.SweepAfter = store.DefaultSweepAfter
	}
	return &Store{now: cfg.Now, function: cfg.Function, keep: int64(cfg.HistoryKeep), sweepAfter: cfg.SweepAfter,
		recs: map[string]*store.Record{}, steps: map[string]map[string]journal{}, prog: map[string]store.Progress{}}
}

// clone returns a deep copy of r (nil for nil).
func clone(r *store.Record) *store.Record {
	if r == nil {
		return nil
	}
	c := *r
	c.Payload = store.Payload(slices.Clone([]byte(r.Payload)))
	c.History = slices.Clone(r.History)
	c.Calls = slices.Clone(r.Calls)
	return &c
}

// Get returns the event record of key, or nil if there is none or it has
// expired, as [store.Table.Get].
func (s *Store) Get(_ context.Context, key string) (*store.Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.recs[key]
	if r == nil || r.Expired(s.now()) {
		return nil, nil
	}
	return clone(r), nil
}

// Put stores a copy of rec as it is, with no condition, as a plain PutItem
// would: a test seam for records in a state the API cannot reach directly
// (its Key must be set; SK is set to [store.SKEvent]).
func (s *Store) Put(rec *store.Record) {
	c := clone(rec)
	c.SK = store.SKEvent
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recs[c.Key] = c
}

// Records returns copies of every event record that has not expired, sorted
// by key: a test seam to look at the whole table.
func (s *Store) Records() []*store.Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	var out []*store.Record
	for _, r := range s.recs {
		if !r.Expired(now) {
			out = append(out, clone(r))
		}
	}
	slices.SortFunc(out, func(a, b *store.Record) int { return cmp.Compare(a.Key, b.Key) })
	return out
}

// Claim creates the event's record (RECEIVED, version 1) if the key is
// absent or its record expired (expiresAt < now), as [store.Table.Claim]:
// a live record gives Duplicate or Conflict with a copy of that record. A
// Duplicate is counted on the record (Counted), as the table's claim counts
// it with its second write ([store.Table.CountDelivery]). The store keeps
// every payload with its record, but decides where the table would store it
// ([store.NewEvent.PayloadRef]) and hands payloads out as the table does:
// a found record whose payload the table keeps apart carries it only when
// it is the claimer's own.
func (s *Store) Claim(_ context.Context, ev store.NewEvent, window time.Duration) (store.ClaimResult, error) {
	if err := ev.Prepare(); err != nil {
		return store.ClaimResult{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if old := s.recs[ev.Key]; old != nil && !old.Expired(now) {
		counted := old.PayloadHash == ev.PayloadHash
		if counted {
			old.Deliveries = old.DeliveryCount() + 1
			old.LastDeliveryAt = now.UnixMilli()
		}
		found := clone(old)
		if found.PayloadRef != "" && !bytes.Equal(found.Payload, ev.Payload) {
			// The table returns the record without the payload of
			// its payload item, unless it is the claimer's own.
			found.Payload = nil
		}
		if old.PayloadHash != ev.PayloadHash {
			return store.ClaimResult{Outcome: store.Conflict, Record: found}, nil
		}
		return store.ClaimResult{Outcome: store.Duplicate, Record: found, Counted: counted}, nil
	}
	rec := ev.ClaimRecord(now, window, s.sweepAfter, s.function)
	rec.Payload = store.Payload(slices.Clone(ev.Payload))
	s.recs[ev.Key] = rec
	return store.ClaimResult{Outcome: store.Claimed, Record: clone(rec)}, nil
}

// Unclaim deletes the record of rec.Key if it is still the claim rec
// describes (RECEIVED, version 1, the same claimId and enqueuedAt), as
// [store.Table.Unclaim]. It reports whether it deleted.
func (s *Store) Unclaim(_ context.Context, rec *store.Record) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.recs[rec.Key]
	if old == nil || old.Status != webhook.StatusReceived || old.Version != 1 ||
		old.ClaimID != rec.ClaimID || old.EnqueuedAt != rec.EnqueuedAt {
		return false, nil
	}
	delete(s.recs, rec.Key)
	return true, nil
}

// TakeOverEnqueue lets one duplicate re-enqueue a record left RECEIVED for
// at least grace since its last enqueue, as [store.Table.TakeOverEnqueue]:
// conditional on the enqueuedAt the caller saw. A caller that loses finds
// rec updated to the record as it is (an empty status if it is gone).
func (s *Store) TakeOverEnqueue(_ context.Context, rec *store.Record, grace time.Duration) (bool, error) {
	now := s.now()
	if rec.Status != webhook.StatusReceived || now.Sub(time.UnixMilli(rec.EnqueuedAt)) < grace {
		return false, nil
	}
	won, cur := s.swapEnqueuedAt(rec.Key, rec.EnqueuedAt, now.UnixMilli())
	if !won {
		rec.Status, rec.EnqueuedAt, rec.Version = cur.Status, cur.EnqueuedAt, cur.Version
		return false, nil
	}
	rec.EnqueuedAt = now.UnixMilli()
	return true, nil
}

// RevertEnqueue undoes TakeOverEnqueue after a failed send (enqueuedAt back
// to prev), as [store.Table.RevertEnqueue].
func (s *Store) RevertEnqueue(_ context.Context, rec *store.Record, prev int64) error {
	s.swapEnqueuedAt(rec.Key, rec.EnqueuedAt, prev)
	return nil
}

// swapEnqueuedAt sets enqueuedAt from → to on a RECEIVED record. When the
// condition fails it returns the record as it is (a record with only the key
// if it is absent or expired).
func (s *Store) swapEnqueuedAt(key string, from, to int64) (bool, *store.Record) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.recs[key]
	if old != nil && old.Status == webhook.StatusReceived && old.EnqueuedAt == from {
		old.EnqueuedAt = to
		return true, nil
	}
	if old == nil || old.Expired(s.now()) {
		return false, &store.Record{Key: key}
	}
	return false, clone(old)
}

// Acquire takes the lease of key for owner until the given time, as
// [store.Table.Acquire]: from RECEIVED or RETRY, or from PROCESSING whose
// lease has run out, on a record that has not expired. A failed condition
// gives AlreadyDone, Busy, InFailedState or Missing, never an error.
func (s *Store) Acquire(ctx context.Context, key, owner string, until time.Time) (webhook.Acquisition, error) {
	return s.AcquireGeneration(ctx, key, webhook.AnyGeneration, owner, until)
}

// AcquireGeneration is Acquire for a message of generation gen, as
// [store.Table.AcquireGeneration]: a live record of a newer generation is
// AcquireStale.
func (s *Store) AcquireGeneration(_ context.Context, key string, gen int64, owner string, until time.Time) (webhook.Acquisition, error) {
	return s.acquire(key, gen, claimable, store.LostAcquisition, func(r *store.Record, now time.Time) webhook.Acquisition {
		s.takeLease(r, now, webhook.StatusProcessing, owner, until, &r.Attempts)
		acq := acquired(r, clone(r).Lease())
		acq.Status = r.Status
		return acq
	}), nil
}

// claimable reports whether Acquire may take r at now: the table's
// condition.
func claimable(r *store.Record, now time.Time) bool {
	return r != nil && r.ExpiresAt >= now.Unix() &&
		(r.Status == webhook.StatusReceived || r.Status == webhook.StatusRetry ||
			(r.Status == webhook.StatusProcessing && (r.LeaseUntil == 0 || r.LeaseUntil < now.UnixMilli())))
}

// acquire is the one write of Acquire and AcquireCompensation, under the
// lock: a live record of key of a generation newer than gen is
// AcquireStale; one that may not take the lease (may) is lost's outcome;
// otherwise take takes the lease and returns the acquisition.
func (s *Store) acquire(key string, gen int64, may func(*store.Record, time.Time) bool,
	lost func(*store.Record, time.Time) webhook.Acquisition, take func(*store.Record, time.Time) webhook.Acquisition) webhook.Acquisition {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	r := s.recs[key]
	if r != nil && r.ExpiresAt >= now.Unix() && r.StaleFor(gen) {
		return store.StaleAcquisition(r)
	}
	if !may(r, now) {
		return lost(r, now)
	}
	return take(r, now)
}

// takeLease moves r to status to under owner's lease until the given time,
// counts the attempt in *counter (attempts or compensations), increments the
// version and writes the history entry: the one conditional write of
// Acquire and AcquireCompensation, once their conditions hold.
func (s *Store) takeLease(r *store.Record, now time.Time, to webhook.Status, owner string, until time.Time, counter *int64) {
	from := r.Status
	r.Status = to
	r.LeaseOwner = owner
	r.LeaseUntil = until.UnixMilli()
	r.UpdatedAt = now.UnixMilli()
	*counter++
	r.Version++
	s.addHistory(r, now, from, owner, int(*counter), "")
}

// acquired is the Acquisition of a lease just taken on r, reporting in
// Status the status r came from (callers that report the new one set it).
//
// As the table's, it carries the payload only when the table keeps it in the
// record (no PayloadRef); AcquireCompensation sets it in any case.
func acquired(r *store.Record, l webhook.Lease) webhook.Acquisition {
	a := webhook.Acquisition{
		Outcome:    webhook.Acquired,
		Lease:      l,
		Attempts:   int(r.Attempts),
		LastError:  r.LastError,
		Generation: r.Generation,
	}
	if r.PayloadRef == "" {
		a.Payload = slices.Clone([]byte(r.Payload))
	}
	return a
}

// LoadPayload returns the payload of the live record of key (nil if there
// is none), as [store.Table.LoadPayload].
func (s *Store) LoadPayload(_ context.Context, key string) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.recs[key]
	if r == nil || r.Expired(s.now()) {
		return nil, nil
	}
	return slices.Clone([]byte(r.Payload)), nil
}

// Heartbeat extends the lease to until if l's owner still holds it (status
// PROCESSING), as [store.Table.Heartbeat]; the version is unchanged.
func (s *Store) Heartbeat(_ context.Context, l webhook.Lease, until time.Time) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.recs[l.Key]
	if r == nil || r.LeaseOwner != l.Owner || r.Status != webhook.StatusProcessing {
		return false, nil
	}
	r.LeaseUntil = until.UnixMilli()
	r.UpdatedAt = s.now().UnixMilli()
	return true, nil
}

// fenced reports whether l still holds r in status leased: the same owner
// and version (the table's fence condition).
func fenced(r *store.Record, l webhook.Lease, leased webhook.Status) bool {
	return r != nil && r.LeaseOwner == l.Owner && r.Version == l.Version && r.Status == leased
}

// leasedStatus is the status l holds its record in (PROCESSING when unset).
func leasedStatus(l webhook.Lease) webhook.Status {
	if l.Status == "" {
		return webhook.StatusProcessing
	}
	return l.Status
}

// Complete moves the record to SUCCEEDED until retainUntil, clears the
// lease and lastError and leaves the sweep attributes alone, fenced on l,
// as [store.Table.Complete].
func (s *Store) Complete(_ context.Context, l webhook.Lease, retainUntil time.Time) (bool, error) {
	return s.transition(l, webhook.StatusProcessing, webhook.StatusSucceeded, "", completion(retainUntil)), nil
}

// completion is what a completion sets besides the transition.
func completion(retainUntil time.Time) func(*store.Record) {
	return func(r *store.Record) {
		r.ExpiresAt = retainUntil.Unix()
		r.LastError = ""
	}
}

// Retry moves the record to RETRY with lastError and clears the lease,
// fenced on l, as [store.Table.Retry].
func (s *Store) Retry(_ context.Context, l webhook.Lease, lastError string) (bool, error) {
	return s.transition(l, webhook.StatusProcessing, webhook.StatusRetry, lastError, func(r *store.Record) { r.LastError = lastError }), nil
}

// Fail moves the record to FAILED with lastError and clears the lease,
// fenced on l, as [store.Table.Fail].
func (s *Store) Fail(_ context.Context, l webhook.Lease, lastError string) (bool, error) {
	return s.transition(l, webhook.StatusProcessing, webhook.StatusFailed, lastError, func(r *store.Record) { r.LastError = lastError }), nil
}

// transition is one fenced transition of the lease l, which holds the
// record in status leased, to status to: version+1, the lease removed, the
// history entry added. The sweep attributes stay, terminal or not (the
// sweeper passes a terminal record's entry, as on the table).
func (s *Store) transition(l webhook.Lease, leased, to webhook.Status, errText string, set func(*store.Record)) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.recs[l.Key]
	if !fenced(r, l, leased) {
		return false
	}
	now := s.now()
	r.Status = to
	r.Version++
	r.UpdatedAt = now.UnixMilli()
	r.LeaseOwner, r.LeaseUntil = "", 0
	if l.Target != "" {
		r.Target = l.Target
	}
	set(r)
	if l.CallsAdded() > 0 {
		r.Calls, r.CallCount = storedCalls(l.Calls), int64(l.CallCount)
	}
	s.addHistory(r, now, leased, l.Owner, l.Attempt, errText)
	return true
}

// storedCalls returns cs as the table reads them back: times and latencies
// in whole milliseconds.
func storedCalls(cs []webhook.Call) []webhook.Call {
	out := slices.Clone(cs)
	for i := range out {
		out[i].At = time.UnixMilli(out[i].At.UnixMilli())
		out[i].Latency = out[i].Latency.Truncate(time.Millisecond)
	}
	return out
}

// CountDelivery records one more delivery of rec's record, as
// [store.Table.CountDelivery]: counted is false when the record is gone or
// was claimed anew.
func (s *Store) CountDelivery(_ context.Context, rec *store.Record) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.recs[rec.Key]
	if r == nil || r.ClaimID != rec.ClaimID {
		return false, nil
	}
	r.Deliveries = r.DeliveryCount() + 1
	r.LastDeliveryAt = s.now().UnixMilli()
	rec.Deliveries, rec.LastDeliveryAt = r.Deliveries, r.LastDeliveryAt
	return true, nil
}

// SaveStep writes journal entry e, tagged with l's claim id, if l still
// holds the record (in the lease's status: PROCESSING or COMPENSATING), as
// [store.Table.SaveStep]. An entry of the same handler and step is
// replaced.
func (s *Store) SaveStep(ctx context.Context, l webhook.Lease, e webhook.JournalEntry) (bool, error) {
	return s.SaveSteps(ctx, l, []webhook.JournalEntry{e})
}

// SaveSteps writes journal entries in one step, fenced on l, as
// [store.Table.SaveSteps].
func (s *Store) SaveSteps(_ context.Context, l webhook.Lease, entries []webhook.JournalEntry) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !fenced(s.recs[l.Key], l, leasedStatus(l)) {
		return false, nil
	}
	s.saveSteps(l, entries)
	return true, nil
}

// CompleteSteps completes the record carrying journal entries, fenced on l,
// as [store.Table.CompleteSteps]: both or neither.
func (s *Store) CompleteSteps(_ context.Context, l webhook.Lease, retainUntil time.Time, entries []webhook.JournalEntry) (bool, error) {
	complete := completion(retainUntil)
	return s.transition(l, webhook.StatusProcessing, webhook.StatusSucceeded, "", func(r *store.Record) {
		complete(r)
		s.saveSteps(l, entries) // s.mu is held
	}), nil
}

// saveSteps stores entries of l's claim (s.mu held). Entries outlive the
// record's expiry by [store.StepRetention], as journal items do.
func (s *Store) saveSteps(l webhook.Lease, entries []webhook.JournalEntry) {
	now := s.now()
	base := now
	if l.ExpiresAt.After(now) {
		base = l.ExpiresAt
	}
	for _, e := range entries {
		j := journal{
			claimID: l.ClaimID, handler: e.Handler, step: e.Step, completedAt: e.CompletedAt.UnixMilli(), run: e.Run,
			expiresAt: base.Add(store.StepRetention).Unix(),
		}
		if len(e.Result) > 0 { // the table omits an empty result
			j.result = slices.Clone(e.Result)
		}
		if s.steps[l.Key] == nil {
			s.steps[l.Key] = map[string]journal{}
		}
		s.steps[l.Key][store.StepSK(e.Handler, e.Step)] = j
	}
}

// Journal returns the journal entries of l's claim in sort key order, as
// [store.Table.Journal].
func (s *Store) Journal(ctx context.Context, l webhook.Lease) ([]webhook.JournalEntry, error) {
	return s.Steps(ctx, l.Key, l.ClaimID)
}

// Steps returns the journal entries of key written under claimID, in sort
// key order, as [store.Table.Steps].
func (s *Store) Steps(_ context.Context, key, claimID string) ([]webhook.JournalEntry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	entries := s.steps[key]
	var out []webhook.JournalEntry
	for _, sk := range slices.Sorted(maps.Keys(entries)) {
		j := entries[sk]
		if j.claimID != claimID {
			continue
		}
		h, st := j.handler, j.step
		if h == "" || st == "" {
			h, st, _ = strings.Cut(strings.TrimPrefix(sk, store.SKStepPrefix), "#")
		}
		out = append(out, webhook.JournalEntry{
			Handler: h, Step: st, Result: slices.Clone(j.result), CompletedAt: time.UnixMilli(j.completedAt), Run: j.run,
		})
	}
	return out, nil
}

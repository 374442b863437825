package sweep

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookwall/hookwall/shared/aws/queue"
	"github.com/hookwall/hookwall/shared/base/format"
	"github.com/hookwall/hookwall/shared/base/obs"
	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/engine/drain"
	"github.com/hookwall/hookwall/shared/internal/kernel"
	"github.com/hookwall/hookwall/shared/state/store"
	"github.com/hookwall/hookwall/shared/state/targets"
)

// Store is the events table as the sweeper needs it; *store.Table and
// *memstore.Store satisfy it.
type Store interface {
	// Stuck returns at most limit entries of GSI `sweep` partition shard
	// whose sweepAt is after after (zero: from the start) and at or before
	// before, oldest first, from cursor (nil: the start), and the cursor of
	// the rest (nil: no more). Terminal records are among them.
	Stuck(ctx context.Context, shard int, after, before time.Time, limit int32, cursor map[string]types.AttributeValue) ([]store.StuckRecord, map[string]types.AttributeValue, error)
	// SweepCursor reads the shard's cursor (zero: none yet).
	SweepCursor(ctx context.Context, shard int) (time.Time, error)
	// AdvanceSweepCursor moves the shard's cursor to to, only forward
	// (false: it was already there or past it).
	AdvanceSweepCursor(ctx context.Context, shard int, to time.Time) (bool, error)
	// GetMany reads up to store.MaxGetMany records with eventually
	// consistent reads, in the order of keys (nil: absent or expired).
	GetMany(ctx context.Context, keys []string) ([]*store.Record, error)
	// Get reads a record with a strongly consistent read (nil: absent or expired).
	Get(ctx context.Context, key string) (*store.Record, error)
	// MarkRequeued sets enqueuedAt = now and sweepAt = now + SweepAfter,
	// fenced on rec's version, status and enqueuedAt (false: moved on).
	MarkRequeued(ctx context.Context, rec *store.Record) (bool, error)
	// Resweep sets sweepAt = at, fenced on rec's version (false: moved on).
	Resweep(ctx context.Context, rec *store.Record, at time.Time) (bool, error)
	// Recheck sets a HELD record's recheckAt and sweepAt = at and raises
	// its expiresAt to retainUntil (and its payload item's with it),
	// fenced on its version (false: moved on).
	Recheck(ctx context.Context, rec *store.Record, at, retainUntil time.Time) (bool, error)
	// Bury ends a record that can never be processed (its payload item
	// is gone) as DEAD with lastError = reason, fenced on its version and
	// status, never under a live lease (false: moved on).
	Bury(ctx context.Context, rec *store.Record, reason string, retainUntil time.Time) (bool, error)
}

// Gate is the targets' shared state as the sweeper reads it; targets.Gate
// satisfies it.
type Gate interface {
	// Blocked reports whether sc is paused or, for a target, its breaker open.
	Blocked(ctx context.Context, sc targets.Scope) (bool, error)
	// Breakers lists the targets' breakers.
	Breakers(ctx context.Context) ([]targets.Breaker, error)
	// Pauses lists the pauses.
	Pauses(ctx context.Context) ([]targets.Pause, error)
}

// Drainer releases a scope's held records at the rate; *drain.Drainer
// satisfies it.
type Drainer interface {
	Release(ctx context.Context, sc targets.Scope, opts drain.Options) (drain.Progress, error)
}

// Jobs are the background recovery jobs; *recovery.Jobs satisfies it.
type Jobs interface {
	// Continue runs the detached jobs until each is done or until comes
	// (no record is started after it), and returns how many jobs it ran
	// and how many records they dealt with.
	Continue(ctx context.Context, until time.Time) (jobs, records int, err error)
}

// Queue is the main queue; *queue.Queue satisfies it. Send leaves a large
// payload in the record ([queue.EncodeMessage]).
type Queue interface {
	Send(ctx context.Context, envs []webhook.Envelope) error
}

// DeadLetters is the dead-letter queue; *queue.Queue satisfies it.
type DeadLetters interface {
	// SendDeadLetter sends body (an envelope message) with the event key and
	// the reason as message attributes.
	SendDeadLetter(ctx context.Context, key string, body []byte, reason string) error
}

// Defaults of [Config].
const (
	// DefaultGrace is the receiver's default re-enqueue grace
	// (intake.DefaultBudget + intake.DefaultGraceMargin, stated by the kernel).
	DefaultGrace = kernel.DefaultReenqueueGrace
	// DefaultStuckAfter is how long past its lease (or its retry time) a
	// record must be before the sweeper takes it for stuck.
	DefaultStuckAfter = 5 * time.Minute
	// DefaultRetryCap is the engines' default longest retry backoff (the
	// kernel's).
	DefaultRetryCap = kernel.DefaultRetryCap
	// DefaultLimit is the most records one run handles (terminal records
	// passed are not counted).
	DefaultLimit = 500
	// DefaultSweepLag is how far behind now a shard's cursor stays at
	// least: longer than the sweep index's propagation and the eventually
	// consistent reads' (well under a second), and the clocks' skew.
	DefaultSweepLag = time.Minute
	// DefaultMaxPassed is the most terminal (or gone) entries one run
	// passes: a guard against a runaway run, set so that the run's
	// deadline (Reserve) binds first. Passing reads pages of 100 entries,
	// so a run's memory does not grow with it.
	DefaultMaxPassed = 1_000_000
	// DefaultReserve is the time kept back from the run's deadline: the run
	// starts no new record after that.
	DefaultReserve = 2 * time.Second
	// DefaultHeldRecheck is how far the sweeper pushes the next look at a
	// held record whose scope is still blocked (the target's recovery is
	// noticed through its breaker, every run, not through this).
	DefaultHeldRecheck = 10 * time.Minute
	// DefaultRetention is how long a held record is kept at least, from
	// each look (the engines' retention, the kernel's).
	DefaultRetention = kernel.DefaultRetention
	// DefaultJobBudget is the most time one run gives the detached
	// recovery jobs, after its own work.
	DefaultJobBudget = 20 * time.Second
	// pageSize bounds one query of the GSI (and one GetMany).
	pageSize = store.MaxGetMany
	// maxErrors is how many errors a run's error names.
	maxErrors = 5
)

// Metric names (EMF, PascalCase) a run records. Run does not flush; the
// caller does.
const (
	MetricRequeued     = "SweepRequeued"
	MetricDeadLettered = "SweepDeadLettered"
	MetricErrors       = "SweepErrors"
	MetricScanned      = "SweepScanned"
	MetricReleased     = "SweepReleased"
	MetricRechecked    = "SweepRechecked"
	// MetricPassed counts the terminal (or gone) entries passed.
	MetricPassed = "SweepPassed"
	// MetricCursorLag is, once per run, the largest now - cursor over the
	// shards the run read, in seconds: how far behind the sweeper is.
	MetricCursorLag = "SweepCursorLagSeconds"
)

// Config configures a [Sweeper].
type Config struct {
	// Store is the events table (required).
	Store Store
	// Queue is the main queue, for stuck RECEIVED, RETRY and PROCESSING records (required).
	Queue Queue
	// DLQ is the dead-letter queue, for stuck FAILED and COMPENSATING records (required).
	DLQ DeadLetters
	// Now is the clock (optional; default time.Now).
	Now func() time.Time
	// Logger logs one line per record acted on and one per run (optional; default discards).
	Logger *slog.Logger
	// Metrics receives the EMF counts (optional).
	Metrics *obs.Metrics
	// Grace is the receiver's re-enqueue grace: a RECEIVED record is stuck
	// once its last enqueue is older (HOOKWALL_REENQUEUE_GRACE; optional;
	// default DefaultGrace).
	Grace time.Duration
	// StuckAfter is how long past its lease, retry time or failure a record
	// must be to count as stuck (HOOKWALL_SWEEP_STUCK_AFTER; optional;
	// default 5 min).
	StuckAfter time.Duration
	// RetryCap is the longest retry backoff of the processor and the
	// compensator: a RETRY record's message comes back within it
	// (HOOKWALL_RETRY_CAP; optional; default 15 min).
	RetryCap time.Duration
	// Limit is the most records one run handles: read with a strongly
	// consistent Get because they are not terminal (HOOKWALL_SWEEP_LIMIT;
	// optional; default DefaultLimit).
	Limit int
	// SweepLag is how far behind the run's now a shard's cursor stays at
	// least, so that an entry is in the index before the cursor can pass
	// it (HOOKWALL_SWEEP_LAG; optional; default DefaultSweepLag).
	SweepLag time.Duration
	// MaxPassed is the most terminal or gone entries one run passes
	// (HOOKWALL_SWEEP_MAX_PASSED; optional; default DefaultMaxPassed).
	MaxPassed int
	// Shards is the number of sweep shards, 0 to Shards-1 (optional; default
	// store.SweepShards, the number the store writes: fewer leaves shards
	// unswept).
	Shards int
	// Reserve is kept back from the context's deadline: no record is
	// started after it (optional; default 2s).
	Reserve time.Duration
	// Gate and Drain handle the held records (optional, both or neither;
	// without them a due held record only gets its recheck pushed): a
	// record whose scope is no longer blocked is released with the rest of
	// its scope at the rate, one still blocked gets its recheck pushed by
	// HeldRecheck and its expiresAt raised to now + Retention; every run
	// drains the targets whose breaker is closed and releases one probe
	// carrier of each open breaker whose probe is due.
	Gate  Gate
	Drain Drainer
	// HeldRecheck is how far a still-blocked held record's next look is
	// pushed (optional; default 10 min).
	HeldRecheck time.Duration
	// Retention is the least a held record is kept from each look
	// (HOOKWALL_RETENTION; optional; default 7 days).
	Retention time.Duration
	// Jobs are the detached recovery jobs each run continues after its own
	// work, for at most JobBudget and never past the context's deadline
	// less Reserve (optional; nil: none).
	Jobs Jobs
	// JobBudget is the most time a run gives Jobs (optional; default 20s).
	JobBudget time.Duration
	// MetricsOut receives, on each run, the EMF metric
	// targets.MetricCircuitOpen of every breaker (1 open, 0 closed, with
	// the dimension Target) in namespace Namespace (optional, with Gate;
	// nil: none). Namespace is required with it.
	MetricsOut io.Writer
	Namespace  string
}

// Defaults returns the tuning defaults of [Config] (Grace, StuckAfter,
// RetryCap, Limit, SweepLag, MaxPassed, Shards, Reserve, ...), for the
// compensator's settings.
func Defaults() Config {
	return Config{
		Grace:       DefaultGrace,
		StuckAfter:  DefaultStuckAfter,
		RetryCap:    DefaultRetryCap,
		Limit:       DefaultLimit,
		SweepLag:    DefaultSweepLag,
		MaxPassed:   DefaultMaxPassed,
		Shards:      store.SweepShards,
		Reserve:     DefaultReserve,
		HeldRecheck: DefaultHeldRecheck,
		Retention:   DefaultRetention,
		JobBudget:   DefaultJobBudget,
	}
}

// Sweeper re-enqueues stuck records. It is safe for concurrent use; runs of
// one Sweeper take turns.
type Sweeper struct {
	cfg Config

	mu        sync.Mutex // one run at a time
	nextShard int        // where the next run starts
}

// New returns the Sweeper described by cfg.
func New(cfg Config) (*Sweeper, error) {
	if cfg.Store == nil || cfg.Queue == nil || cfg.DLQ == nil {
		return nil, errors.New("sweep: Store, Queue and DLQ are required")
	}
	if (cfg.Gate == nil) != (cfg.Drain == nil) {
		return nil, errors.New("sweep: Gate and Drain go together")
	}
	if cfg.MetricsOut != nil && cfg.Namespace == "" {
		return nil, errors.New("sweep: MetricsOut needs a Namespace")
	}
	def := Defaults()
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	cfg.Grace = kernel.OrDefault(cfg.Grace, def.Grace)
	cfg.StuckAfter = kernel.OrDefault(cfg.StuckAfter, def.StuckAfter)
	cfg.RetryCap = kernel.OrDefault(cfg.RetryCap, def.RetryCap)
	cfg.Limit = kernel.OrDefault(cfg.Limit, def.Limit)
	cfg.SweepLag = kernel.OrDefault(cfg.SweepLag, def.SweepLag)
	cfg.MaxPassed = kernel.OrDefault(cfg.MaxPassed, def.MaxPassed)
	cfg.Shards = kernel.OrDefault(cfg.Shards, def.Shards)
	cfg.Reserve = kernel.OrDefault(cfg.Reserve, def.Reserve)
	cfg.HeldRecheck = kernel.OrDefault(cfg.HeldRecheck, def.HeldRecheck)
	cfg.Retention = kernel.OrDefault(cfg.Retention, def.Retention)
	cfg.JobBudget = kernel.OrDefault(cfg.JobBudget, def.JobBudget)
	return &Sweeper{cfg: cfg}, nil
}

// Report is what one run did; the compensator answers a scheduled
// invocation with it, as JSON (Elapsed in nanoseconds). Every record
// handled (Scanned) is counted once, in exactly one of Requeued,
// DeadLettered, Resweeped, MovedOn, Ignored, Newer, Errors and Interrupted; the
// entries passed are apart (Passed).
type Report struct {
	// Scanned is the number of records handled: read with a strongly
	// consistent Get because the batch read showed them not terminal.
	Scanned int `json:"scanned"`
	// Passed is the number of entries passed without a Get: their record
	// was terminal or gone in the batch read.
	Passed int `json:"passed"`
	// CursorLag is the largest now - cursor over the shards read, after
	// the run's advances (0 when no shard has a cursor yet).
	CursorLag time.Duration `json:"cursorLag"`
	// Requeued were stuck and sent to the main queue.
	Requeued int `json:"requeued"`
	// DeadLettered were stuck (FAILED or COMPENSATING) and sent to the dead-letter queue.
	DeadLettered int `json:"deadLettered"`
	// PayloadMissing had lost their payload item (deleted, or expired
	// under an older version): they can never be processed, and were
	// dead-lettered (DEAD, with the reason) instead of failing every run.
	PayloadMissing int `json:"payloadMissing,omitempty"`
	// Resweeped were due but not stuck yet: their sweepAt moved to when they would be.
	Resweeped int `json:"resweeped"`
	// MovedOn changed between the read and the fenced write, and were left alone.
	MovedOn int `json:"movedOn"`
	// Ignored were terminal or gone at the Get (the batch read lagged), or
	// in a status this version does not know.
	Ignored int `json:"ignored"`
	// Newer were written in a format newer than this code knows (a newer
	// release runs beside it): left alone, due, for the newer sweeper.
	Newer int `json:"newer,omitempty"`
	// Errors failed (a read, a write or a send); they stay due.
	Errors int `json:"errors"`
	// Interrupted were cut off by the end of the run's context; they stay due.
	Interrupted int `json:"interrupted"`
	// Rechecked were HELD on a scope still blocked: their next look was
	// pushed and their TTL raised.
	Rechecked int `json:"rechecked"`
	// Drained were HELD on a scope no longer blocked: the scope was drained
	// (a record the drain did not reach stays due).
	Drained int `json:"drained"`
	// QueryErrors counts the GSI queries that failed (a shard left for the next run).
	QueryErrors int `json:"queryErrors"`
	// Released counts the held records the run's drains released (the
	// scopes of Drained, the targets whose breaker closed) and Carriers
	// the probe carriers among them (one per open breaker whose probe was
	// due). They are not part of Scanned.
	Released int `json:"released"`
	Carriers int `json:"carriers"`
	// Jobs counts the detached recovery jobs the run continued, and
	// JobRecords the records they dealt with (replayed, skipped or
	// missing); JobErrors is 1 when continuing them failed. They are not
	// part of Scanned.
	Jobs       int `json:"jobs"`
	JobRecords int `json:"jobRecords"`
	JobErrors  int `json:"jobErrors"`
	// More says the run stopped at its limit, its MaxPassed or its
	// deadline: due records may remain, and the next run continues with
	// them.
	More bool `json:"more"`
	// Elapsed is the run's duration.
	Elapsed time.Duration `json:"elapsed"`
}

// Run sweeps once: for each shard, from its cursor, page by page, it reads
// the due entries' records, passes the terminal ones and re-enqueues,
// dead-letters or re-sweeps the others, then advances the shard's cursor
// past what it handled (see the package doc). It stops after Limit
// records, MaxPassed entries passed or when the context is within Reserve
// of its deadline, and reports what it did. The error, if any, joins the first
// failures (the report counts them all); records that failed stay due.
func (s *Sweeper) Run(ctx context.Context) (Report, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	start := time.Now()
	r := &run{s: s, now: s.cfg.Now(), blocked: map[targets.Scope]bool{},
		drained: map[targets.Scope]bool{}, drainedAll: map[targets.Scope]bool{}}
	r.targets(ctx)
	first := s.nextShard % s.cfg.Shards
	r.last = first
	for i := range s.cfg.Shards {
		if !r.shard(ctx, (first+i)%s.cfg.Shards) {
			r.rep.More = true
			break
		}
	}
	// The next run starts one shard after the last one read from, so that
	// a shard whose head keeps failing, or a backlog larger than Limit (or
	// MaxPassed) in a few shards, never starves the others.
	s.nextShard = (r.last + 1) % s.cfg.Shards
	r.jobs(ctx)
	r.rep.Elapsed = time.Since(start)
	s.cfg.Metrics.Count(MetricScanned, r.rep.Scanned)
	s.cfg.Metrics.Count(MetricPassed, r.rep.Passed)
	s.cfg.Metrics.Count(MetricCursorLag, int(r.rep.CursorLag/time.Second))
	s.cfg.Metrics.Count(MetricRequeued, r.rep.Requeued)
	s.cfg.Metrics.Count(MetricDeadLettered, r.rep.DeadLettered)
	s.cfg.Metrics.Count(MetricReleased, r.rep.Released)
	s.cfg.Metrics.Count(MetricRechecked, r.rep.Rechecked)
	s.cfg.Metrics.Count(format.MetricNewer, r.rep.Newer)
	s.cfg.Metrics.Count(MetricErrors, r.rep.Errors+r.rep.QueryErrors+r.rep.JobErrors)
	level := slog.LevelInfo
	if r.rep.Errors+r.rep.QueryErrors+r.rep.JobErrors > 0 {
		level = slog.LevelWarn
	}
	s.cfg.Logger.Log(ctx, level, "sweep done",
		slog.Int("scanned", r.rep.Scanned), slog.Int("passed", r.rep.Passed), slog.Duration("cursor_lag", r.rep.CursorLag),
		slog.Int("requeued", r.rep.Requeued),
		slog.Int("dead_lettered", r.rep.DeadLettered), slog.Int("resweeped", r.rep.Resweeped),
		slog.Int("moved_on", r.rep.MovedOn), slog.Int("ignored", r.rep.Ignored),
		slog.Int("rechecked", r.rep.Rechecked), slog.Int("drained", r.rep.Drained), slog.Int("released", r.rep.Released),
		slog.Int("carriers", r.rep.Carriers), slog.Int("jobs", r.rep.Jobs), slog.Int("job_records", r.rep.JobRecords),
		slog.Int("errors", r.rep.Errors), slog.Int("query_errors", r.rep.QueryErrors), slog.Int("job_errors", r.rep.JobErrors),
		slog.Int("interrupted", r.rep.Interrupted),
		slog.Bool("more", r.rep.More), slog.Duration("elapsed", r.rep.Elapsed))
	if n := r.rep.Errors + r.rep.QueryErrors + r.rep.JobErrors; n > 0 {
		return r.rep, fmt.Errorf("sweep: %d failure(s): %w", n, errors.Join(r.errs...))
	}
	return r.rep, nil
}

// run is the state of one Run.
type run struct {
	s    *Sweeper
	now  time.Time // fixed for the run: the query bound and every stuck test
	last int       // the shard the last entry passed or handled came from
	rep  Report
	errs []error // the first maxErrors

	blocked    map[targets.Scope]bool // Gate.Blocked, once per scope and run
	drained    map[targets.Scope]bool // the scopes drained this run
	drainedAll map[targets.Scope]bool // ... and whether to the end
}

func (r *run) fail(err error) {
	if len(r.errs) < maxErrors {
		r.errs = append(r.errs, err)
	}
}

// halt reports whether the run must not pass or handle another entry: its
// MaxPassed is reached or its context is (nearly) over. Limit is checked
// apart, before a record that is not terminal ([run.full]).
func (r *run) halt(ctx context.Context) bool {
	if r.rep.Passed >= r.s.cfg.MaxPassed || ctx.Err() != nil {
		return true
	}
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < r.s.cfg.Reserve {
		return true
	}
	return false
}

// full reports whether the run has handled Limit records.
func (r *run) full() bool { return r.rep.Scanned >= r.s.cfg.Limit }

// shard sweeps one shard from its cursor, page by page, and then advances
// the cursor (once, if it moved) to the largest time at or before which
// every entry was handled, never past now - SweepLag. It returns false when
// the run must stop (limit, MaxPassed or deadline) before the shard is
// done.
func (r *run) shard(ctx context.Context, shard int) bool {
	cfg := &r.s.cfg
	if r.halt(ctx) || r.full() {
		return false
	}
	from, err := cfg.Store.SweepCursor(ctx, shard)
	if err != nil {
		return r.queryFailed(ctx, shard, "read the cursor of", err)
	}
	c := cursor{from: from, to: from, bound: r.now.Add(-cfg.SweepLag)}
	defer r.advance(ctx, shard, &c)
	var page map[string]types.AttributeValue
	for {
		due, next, err := cfg.Store.Stuck(ctx, shard, from, r.now, pageSize, page)
		if err != nil {
			return r.queryFailed(ctx, shard, "query", err)
		}
		keys := make([]string, len(due))
		for i, d := range due {
			keys[i] = d.Key
		}
		recs, err := cfg.Store.GetMany(ctx, keys)
		if err != nil {
			return r.queryFailed(ctx, shard, "batch read", err)
		}
		for i, d := range due {
			final := recs[i] == nil || recs[i].Status.Terminal()
			if r.halt(ctx) || (!final && r.full()) {
				c.stopAt(d)
				return false
			}
			r.last = shard // passes too: a run of passes alone moves the next run's start
			if final {
				r.rep.Passed++
				c.handled(d)
				continue
			}
			if r.record(ctx, d) {
				c.handled(d)
			} else {
				c.stopAt(d)
			}
		}
		if next == nil {
			c.done()
			return true
		}
		page = next
	}
}

// cursor is a shard's cursor during a run: from is where it was read, to
// where it may advance (every entry at or before to was handled), bound
// the most it may advance (now - SweepLag). Once an entry is not handled
// (failed, or the run stopped at it), to stops moving.
type cursor struct {
	from, to, bound time.Time
	stopped         bool
}

// handled moves the cursor to just before d (an entry after d may share
// its sweepAt), unless it stopped.
func (c *cursor) handled(d store.StuckRecord) {
	if !c.stopped {
		c.to = later(c.to, d.SweepAt.Add(-time.Millisecond))
	}
}

// stopAt stops the cursor before d: d and the entries after it (some may
// share its sweepAt) are read again by the next run.
func (c *cursor) stopAt(d store.StuckRecord) {
	if !c.stopped {
		c.to, c.stopped = later(c.to, d.SweepAt.Add(-time.Millisecond)), true
	}
}

// done moves the cursor over the whole range read, unless it stopped.
func (c *cursor) done() {
	if !c.stopped {
		c.to, c.stopped = later(c.to, c.bound), true
	}
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// advance writes c's new position, capped at its bound, if it moved, and
// folds the shard's lag into the report.
func (r *run) advance(ctx context.Context, shard int, c *cursor) {
	to := c.to
	if to.After(c.bound) {
		to = c.bound
	}
	at := c.from
	if to.UnixMilli() > c.from.UnixMilli() {
		if _, err := r.s.cfg.Store.AdvanceSweepCursor(ctx, shard, to); err != nil {
			if ctx.Err() == nil {
				r.queryError(ctx, fmt.Sprintf("advance the cursor of shard %d", shard), err,
					"sweep could not advance a cursor; its entries are read again", slog.Int("shard", shard))
			}
		} else {
			at = to
		}
	}
	if !at.IsZero() {
		r.rep.CursorLag = max(r.rep.CursorLag, r.now.Sub(at))
	}
}

// queryFailed counts a failed read of a shard's index or cursor, which
// leaves the shard for the next run; it returns false when the run's
// context is over.
func (r *run) queryFailed(ctx context.Context, shard int, op string, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	r.queryError(ctx, fmt.Sprintf("%s shard %d", op, shard), err, "sweep "+op+" shard failed", slog.Int("shard", shard))
	return true // the other shards still get their turn
}

// record handles one due record that the batch read showed not terminal.
// It reports whether the entry is handled, so that the cursor may pass
// it: the record is terminal or gone, or a write moved its sweepAt to now
// or later (re-enqueued, dead-lettered, re-swept, rechecked, released by a
// complete drain). A failure, a record that moved on between the read and
// the fenced write, an unknown status and an incomplete drain are not:
// the next run reads the entry again.
func (r *run) record(ctx context.Context, d store.StuckRecord) bool {
	r.rep.Scanned++
	log := r.s.cfg.Logger.With(slog.String(obs.KeyEventKey, d.Key))
	rec, err := r.s.cfg.Store.Get(ctx, d.Key)
	if rec != nil && format.Newer(format.Item, int(rec.Format)) {
		r.rep.Newer++
		format.CountNewer(format.Item)
		log.InfoContext(ctx, "record of a newer format; left for the newer release", slog.Int64("format", rec.Format))
		return false // stays due: the cursor stops before it, and the newer sweeper reads it
	}
	if errors.Is(err, store.ErrPayloadMissing) && rec != nil {
		return r.payloadMissing(ctx, log, rec, err)
	}
	if err != nil {
		r.failed(ctx, log, d.Key, "read", err)
		return false
	}
	if rec == nil || rec.Status.Terminal() {
		r.rep.Ignored++ // the batch read lagged the write that made it terminal (or deleted it)
		return true
	}
	log = log.With(slog.String(obs.KeyProvider, rec.Provider), slog.String(obs.KeyTenant, rec.Tenant),
		slog.String(obs.KeyStatus, string(rec.Status)), slog.Int64(obs.KeyAttempt, rec.Attempts))
	if rec.Status == webhook.StatusHeld {
		return r.held(ctx, log, rec)
	}
	v := r.s.verdict(rec, r.now)
	switch {
	case v.action == ignore:
		r.rep.Ignored++
		log.WarnContext(ctx, "sweep found a record in an unknown status; left alone")
		return false
	case v.action == wait:
		moved, err := r.s.cfg.Store.Resweep(ctx, rec, v.stuckAt)
		if !r.pushed(ctx, log, d.Key, "resweep", moved, err, &r.rep.Resweeped) {
			return false
		}
		log.DebugContext(ctx, "record due but not stuck yet: swept again later", slog.Time("sweep_at", v.stuckAt))
		return true
	default:
		return r.resend(ctx, log, rec, v)
	}
}

// payloadMissing handles a due record whose payload item is gone (why):
// nothing can ever process it (the processor, the drain, a recovery and
// the compensator all need the payload), so rather than fail every run
// and hold its shard's cursor back, the sweeper buries it, DEAD with the
// reason, once it is HELD or stuck. A record not stuck yet (a message
// carrying the payload may still be on its way, a lease may be live) is
// swept again later as any other. It reports whether the entry is handled.
func (r *run) payloadMissing(ctx context.Context, log *slog.Logger, rec *store.Record, why error) bool {
	log = log.With(slog.String(obs.KeyProvider, rec.Provider), slog.String(obs.KeyTenant, rec.Tenant),
		slog.String(obs.KeyStatus, string(rec.Status)))
	if rec.Status != webhook.StatusHeld {
		if v := r.s.verdict(rec, r.now); v.action == wait {
			moved, err := r.s.cfg.Store.Resweep(ctx, rec, v.stuckAt)
			return r.pushed(ctx, log, rec.Key, "resweep", moved, err, &r.rep.Resweeped)
		} else if v.action == ignore {
			r.rep.Ignored++
			return false
		}
	}
	reason := "payload item missing (deleted, or expired before the record): the event can never be processed; " +
		"dead-lettered by the sweeper from " + string(rec.Status) + ", nothing compensated"
	ok, err := r.s.cfg.Store.Bury(ctx, rec, reason, r.now.Add(r.s.cfg.Retention))
	if !r.pushed(ctx, log, rec.Key, "bury", ok, err, &r.rep.PayloadMissing) {
		return false
	}
	log.ErrorContext(ctx, "record without its payload dead-lettered: it could never be processed",
		slog.String("held_on", rec.HeldOn), slog.Any("error", why))
	return true
}

// resend marks a stuck record and sends it to the main queue or the DLQ.
// It reports whether the entry is handled: the record was marked (its
// sweepAt moved to now + SweepAfter, or back to now by the Resweep after a
// failed send).
func (r *run) resend(ctx context.Context, log *slog.Logger, rec *store.Record, v verdict) bool {
	env := rec.Envelope()
	var body []byte
	if v.action == deadLetter {
		b, err := queue.EncodeMessage(&env)
		if err != nil {
			r.failed(ctx, log, rec.Key, "encode", err)
			return false
		}
		body = b
	}
	marked, err := r.s.cfg.Store.MarkRequeued(ctx, rec)
	if err != nil {
		r.failed(ctx, log, rec.Key, "mark requeued", err)
		return false
	}
	if !marked {
		r.rep.MovedOn++
		log.InfoContext(ctx, "stuck record moved on before the sweeper could re-enqueue it: left alone")
		return false
	}
	stuckFor := r.now.Sub(v.stuckAt)
	if v.action == deadLetter {
		reason := fmt.Sprintf("sweeper: %s since %s", rec.Status, v.since.UTC().Format(time.RFC3339))
		if rec.LastError != "" {
			reason += ": " + rec.LastError
		}
		err = r.s.cfg.DLQ.SendDeadLetter(ctx, rec.Key, body, reason)
	} else {
		err = r.s.cfg.Queue.Send(ctx, []webhook.Envelope{env})
	}
	if err != nil {
		// The record is still stuck: put its sweepAt back to when it counts
		// as stuck again (rec now carries MarkRequeued's enqueuedAt), so
		// that the next run sends it again. Failing that, MarkRequeued's
		// sweepAt, now + SweepAfter, brings it back one SweepAfter later.
		// (The store never writes a sweepAt before its now.)
		again := r.s.verdict(rec, r.now).stuckAt
		if again.Before(r.now) {
			again = r.now
		}
		if _, rerr := r.s.cfg.Store.Resweep(ctx, rec, again); rerr != nil {
			err = errors.Join(err, fmt.Errorf("resweep after a failed send: %w", rerr))
		}
		r.failed(ctx, log, rec.Key, "send", err)
		// The entry moved (MarkRequeued's sweepAt, or the Resweep's): its
		// old place is handled, and the record is found at the new one.
		return true
	}
	if v.action == deadLetter {
		r.rep.DeadLettered++
		log.WarnContext(ctx, "stuck record sent to the dead-letter queue again", slog.Time("since", v.since),
			slog.Duration("stuck_for", stuckFor), slog.String("last_error", rec.LastError))
		return true
	}
	r.rep.Requeued++
	log.WarnContext(ctx, "stuck record re-enqueued from its stored payload", slog.Time("since", v.since),
		slog.Duration("stuck_for", stuckFor))
	return true
}

// jobs continues the detached recovery jobs, after the run's own work, for
// at most JobBudget and never past the deadline less Reserve.
func (r *run) jobs(ctx context.Context) {
	cfg := &r.s.cfg
	if cfg.Jobs == nil || ctx.Err() != nil {
		return
	}
	now := cfg.Now()
	until := now.Add(cfg.JobBudget)
	if dl, ok := ctx.Deadline(); ok {
		// The deadline is on the real clock: move it onto cfg.Now's.
		if end := now.Add(time.Until(dl) - cfg.Reserve); end.Before(until) {
			until = end
		}
	}
	if !now.Before(until) {
		return
	}
	n, recs, err := cfg.Jobs.Continue(ctx, until)
	r.rep.Jobs, r.rep.JobRecords = n, recs
	if err != nil {
		r.rep.JobErrors++
		r.fail(fmt.Errorf("recovery jobs: %w", err))
		cfg.Logger.ErrorContext(ctx, "sweep could not continue the recovery jobs", slog.Any("error", err))
	}
}

// queryError counts a failed read or write of the run's own (a listing, a
// shard's cursor), not of a record: what (its context) and err are kept for
// the run's error, and msg logged at error with attrs and err.
func (r *run) queryError(ctx context.Context, what string, err error, msg string, attrs ...any) {
	r.rep.QueryErrors++
	r.fail(fmt.Errorf("%s: %w", what, err))
	r.s.cfg.Logger.ErrorContext(ctx, msg, append(attrs, slog.Any("error", err))...)
}

// pushed counts the outcome of a conditional write that pushes a record's
// next look (op: its name): an error fails the entry ([run.failed]), a
// record that moved on meanwhile is counted MovedOn, and a record pushed is
// counted in count. It reports whether the record was pushed.
func (r *run) pushed(ctx context.Context, log *slog.Logger, key, op string, ok bool, err error, count *int) bool {
	switch {
	case err != nil:
		r.failed(ctx, log, key, op, err)
		return false
	case !ok:
		r.rep.MovedOn++
		return false
	default:
		*count++
		return true
	}
}

// failed counts and logs a failed call on one record, which stays due. A
// call cut off by the end of the run's context is counted as interrupted.
func (r *run) failed(ctx context.Context, log *slog.Logger, key, op string, err error) {
	if ctx.Err() != nil {
		r.rep.Interrupted++
		log.WarnContext(ctx, "sweep "+op+" cut off by the end of the run; the record stays due", slog.Any("error", err))
		return
	}
	r.rep.Errors++
	r.fail(fmt.Errorf("%s %s: %w", op, key, err))
	log.ErrorContext(ctx, "sweep "+op+" failed; the record stays due", slog.Any("error", err))
}

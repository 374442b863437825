// Package drain releases held events: the records of one scope (a target,
// a handler or a tenant) that the processor held while the scope was
// paused or the target's circuit breaker open, oldest first, at the rate
// limit of each record's target. `hookwall resume` calls it once the scope
// is resumed, with a progress callback; the sweeper calls it for a target
// whose breaker closed and for a scope it finds no longer blocked, and to
// release one probe carrier of an open breaker whose probe is due.
//
// For each record of the scope in the store's held index (store.Table.Held:
// a Query, never a Scan) it reads the record (a consistent Get), takes one
// token of its target's bucket (targets.Gate.Take, shared by every
// instance: waiting for the next token when there is none), moves it
// HELD → RETRY fenced on its version (store.Table.Release, with sweepAt =
// now + Grace, so that the sweeper rescues it if the send is lost) and sends
// its envelope to the main queue, in batches of up to 10. A record another
// drain released first is counted as moved on. The work stops at Limit
// records, when the context ends (within Reserve of its deadline), or, page
// by page, when the scope is blocked again.
package drain

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookwall/hookwall/shared/base/batch"
	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/internal/kernel"
	"github.com/hookwall/hookwall/shared/state/store"
	"github.com/hookwall/hookwall/shared/state/targets"
)

// Store is the events table as the drain uses it; *store.Table and
// *memstore.Store satisfy it.
type Store interface {
	// Held lists the records waiting on scope on, oldest first.
	Held(ctx context.Context, on string, limit int32, cursor map[string]types.AttributeValue) ([]store.HeldRecord, map[string]types.AttributeValue, error)
	// Get reads a record with a strongly consistent read, payload included.
	Get(ctx context.Context, key string) (*store.Record, error)
	// Release moves a HELD record to RETRY, fenced on its version.
	Release(ctx context.Context, rec *store.Record, sweepAt time.Time) (bool, error)
}

// Gate is the targets' shared state as the drain uses it; targets.Gate
// satisfies it.
type Gate interface {
	// Take takes up to n tokens of target's bucket.
	Take(ctx context.Context, target string, n int) (granted int, next time.Time, err error)
	// Blocked reports whether sc is paused or, for a target, its breaker open.
	Blocked(ctx context.Context, sc targets.Scope) (bool, error)
}

// Queue is the main queue; *queue.Queue satisfies it.
type Queue interface {
	Send(ctx context.Context, envs []webhook.Envelope) error
}

// Defaults of [Config].
const (
	// DefaultGrace is how long after its release the sweeper looks at a
	// released record whose send may have been lost.
	DefaultGrace = 5 * time.Minute
	// DefaultReserve is kept back from the context's deadline: no record is
	// started after it.
	DefaultReserve = 2 * time.Second
	// pageSize bounds one query of the held index.
	pageSize = 100
	// sendBatch is SQS's batch size.
	sendBatch = 10
)

// Config configures a [Drainer].
type Config struct {
	// Store is the events table (required).
	Store Store
	// Gate gives the tokens and tells whether a scope is blocked
	// (required).
	Gate Gate
	// Queue is the main queue (required).
	Queue Queue
	// Logger logs one line per drain (optional; default discards).
	Logger *slog.Logger
	// Grace: a released record's sweepAt is now + Grace (optional; default
	// DefaultGrace).
	Grace time.Duration
	// Reserve is kept back from the context's deadline (optional; default
	// DefaultReserve).
	Reserve time.Duration
	// Now is the clock (optional; default time.Now).
	Now func() time.Time
	// Sleep waits d or until ctx ends (optional; default a timer).
	Sleep func(ctx context.Context, d time.Duration) error
}

// Drainer releases held events. It is safe for concurrent use.
type Drainer struct{ cfg Config }

// New returns the Drainer described by cfg.
func New(cfg Config) (*Drainer, error) {
	if cfg.Store == nil || cfg.Gate == nil || cfg.Queue == nil {
		return nil, errors.New("drain: Store, Gate and Queue are required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	cfg.Grace = kernel.OrDefault(cfg.Grace, DefaultGrace)
	cfg.Reserve = kernel.OrDefault(cfg.Reserve, DefaultReserve)
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Sleep == nil {
		cfg.Sleep = batch.Sleep
	}
	return &Drainer{cfg: cfg}, nil
}

// Options tunes one [Drainer.Release].
type Options struct {
	// Limit is the most records released (0: no limit).
	Limit int
	// Force releases even while the scope is blocked (the sweeper's probe
	// carrier of an open breaker); otherwise a blocked scope is left alone
	// (checked before each page).
	Force bool
	// Progress, if set, is called after each batch sent and once at the
	// end (Done set).
	Progress func(Progress)
}

// Progress is what a drain has done so far.
type Progress struct {
	// Scope is the scope drained ("kind#name").
	Scope string
	// Seen counts the index entries read.
	Seen int
	// Released were moved to RETRY and sent to the main queue, each record
	// counted once (a record held again and released again by the same
	// drain is one), and only those that run: a record whose target is
	// blocked (its breaker open, or the target paused) is counted in
	// Waiting instead.
	Released int
	// Waiting were released and sent like the others, but their target is
	// blocked: the processor holds them again on it, where its probe and
	// its drain release them.
	Waiting int
	// MovedOn were no longer HELD (another drain, or gone) when read or written.
	MovedOn int
	// Errors failed (a read, a write or a send); a record whose send failed
	// is RETRY and the sweeper sends it again later.
	Errors int
	// Blocked says the drain stopped because the scope is blocked.
	Blocked bool
	// More says it stopped early (its limit or its deadline): records may
	// remain held.
	More bool
	// Done is set on the last call.
	Done bool
	// Started is when the drain began.
	Started time.Time
}

// Release releases the held records of sc (see the package doc) and
// reports what it did; the error joins the first failures (at most 5).
func (d *Drainer) Release(ctx context.Context, sc targets.Scope, opts Options) (Progress, error) {
	if err := sc.Validate(); err != nil {
		return Progress{}, fmt.Errorf("drain: %w", err)
	}
	r := &release{d: d, sc: sc, opts: opts, p: Progress{Scope: sc.String(), Started: d.cfg.Now()}, tokens: map[string]int{},
		sent: map[string]bool{}, blocked: map[string]bool{}, waits: map[string]bool{}}
	err := r.run(ctx)
	r.p.Done = true
	if opts.Progress != nil {
		opts.Progress(r.p)
	}
	level := slog.LevelInfo
	if r.p.Errors > 0 {
		level = slog.LevelWarn
	}
	d.cfg.Logger.Log(ctx, level, "drain done", slog.String("scope", r.p.Scope), slog.Int("seen", r.p.Seen),
		slog.Int("released", r.p.Released), slog.Int("waiting", r.p.Waiting), slog.Int("moved_on", r.p.MovedOn), slog.Int("errors", r.p.Errors),
		slog.Bool("blocked", r.p.Blocked), slog.Bool("more", r.p.More))
	return r.p, err
}

// release is one Release.
type release struct {
	d      *Drainer
	sc     targets.Scope
	opts   Options
	p      Progress
	tokens map[string]int // tokens taken and not used, by target
	batch  []webhook.Envelope
	errs   []error
	// sent are the keys released so far (each counted once), blocked the
	// targets found blocked (by target; read once per drain), waits the
	// keys of the batch whose target is blocked.
	sent    map[string]bool
	blocked map[string]bool
	waits   map[string]bool
}

func (r *release) fail(err error) {
	r.p.Errors++
	if len(r.errs) < 5 {
		r.errs = append(r.errs, err)
	}
}

// stop reports whether no further record may be started.
func (r *release) stop(ctx context.Context) bool {
	if r.opts.Limit > 0 && r.p.Released+r.p.Waiting+len(r.batch) >= r.opts.Limit {
		return true
	}
	if ctx.Err() != nil {
		return true
	}
	dl, ok := ctx.Deadline()
	return ok && time.Until(dl) < r.d.cfg.Reserve
}

func (r *release) run(ctx context.Context) error {
	cfg := r.d.cfg
	on := r.sc.String()
	var cursor map[string]types.AttributeValue
	for {
		if r.stop(ctx) {
			r.p.More = true
			break
		}
		if !r.opts.Force {
			blocked, err := cfg.Gate.Blocked(ctx, r.sc)
			if err != nil {
				r.fail(fmt.Errorf("blocked %s: %w", on, err))
				break
			}
			if blocked {
				r.p.Blocked, r.p.More = true, true
				break
			}
		}
		page := int32(pageSize)
		if r.opts.Limit > 0 {
			page = int32(min(pageSize, r.opts.Limit-r.p.Released-r.p.Waiting-len(r.batch)))
		}
		held, next, err := cfg.Store.Held(ctx, on, page, cursor)
		if err != nil {
			r.fail(fmt.Errorf("held %s: %w", on, err))
			break
		}
		for _, h := range held {
			if r.stop(ctx) {
				r.p.More = true
				break
			}
			r.p.Seen++
			r.record(ctx, h.Key)
		}
		if r.p.More || next == nil {
			break
		}
		cursor = next
	}
	r.flush(ctx)
	if len(r.errs) > 0 {
		return fmt.Errorf("drain %s: %d failure(s): %w", on, r.p.Errors, errors.Join(r.errs...))
	}
	return nil
}

// record releases one held record: read, a token of its target, the fenced
// write, then into the send batch.
func (r *release) record(ctx context.Context, key string) {
	cfg := r.d.cfg
	rec, err := cfg.Store.Get(ctx, key)
	if err != nil {
		r.fail(fmt.Errorf("read %s: %w", key, err))
		return
	}
	if rec == nil || rec.Status != webhook.StatusHeld || rec.HeldOn != r.sc.String() {
		r.p.MovedOn++ // the index lags the write that released it
		return
	}
	target := rec.Target
	if target == "" {
		target = r.sc.Name
	}
	if err := r.token(ctx, target); err != nil {
		if ctx.Err() == nil {
			r.fail(fmt.Errorf("take a token of %s: %w", target, err))
		}
		r.p.More = true
		return
	}
	ok, err := cfg.Store.Release(ctx, rec, cfg.Now().Add(cfg.Grace))
	switch {
	case err != nil:
		r.tokens[target]++ // unused
		r.fail(fmt.Errorf("release %s: %w", key, err))
		return
	case !ok:
		r.tokens[target]++
		r.p.MovedOn++
		return
	}
	if r.targetBlocked(ctx, target) {
		r.waits[key] = true
	}
	r.batch = append(r.batch, rec.Envelope())
	if len(r.batch) >= sendBatch {
		r.flush(ctx)
	}
}

// targetBlocked reports whether target (other than the drained scope) is
// blocked, read once per drain; an unreadable state counts as not blocked
// (the processor decides in any case).
func (r *release) targetBlocked(ctx context.Context, target string) bool {
	sc := targets.Scope{Kind: targets.KindTarget, Name: target}
	if r.opts.Force || sc == r.sc || sc.Validate() != nil {
		return false
	}
	b, ok := r.blocked[target]
	if !ok {
		var err error
		if b, err = r.d.cfg.Gate.Blocked(ctx, sc); err != nil {
			b = false
		}
		r.blocked[target] = b
	}
	return b
}

// token takes one token of target's bucket, waiting for the next one when
// the bucket is empty (the batch is sent before waiting).
func (r *release) token(ctx context.Context, target string) error {
	for {
		if r.tokens[target] > 0 {
			r.tokens[target]--
			return nil
		}
		granted, next, err := r.d.cfg.Gate.Take(ctx, target, sendBatch)
		if err != nil {
			return err
		}
		if granted > 0 {
			r.tokens[target] = granted
			continue
		}
		r.flush(ctx)
		wait := next.Sub(r.d.cfg.Now())
		if dl, ok := ctx.Deadline(); ok && time.Until(dl)-r.d.cfg.Reserve < wait {
			return context.DeadlineExceeded
		}
		if err := r.d.cfg.Sleep(ctx, max(wait, time.Millisecond)); err != nil {
			return err
		}
	}
}

// flush sends the batch. Records whose send failed are RETRY with a sweepAt
// the sweeper finds them by.
func (r *release) flush(ctx context.Context) {
	if len(r.batch) == 0 {
		return
	}
	if err := r.d.cfg.Queue.Send(ctx, r.batch); err != nil {
		r.fail(fmt.Errorf("send %d released event(s): %w", len(r.batch), err))
	} else {
		for _, env := range r.batch {
			switch {
			case r.sent[env.Key]:
			case r.waits[env.Key]:
				r.p.Waiting++
			default:
				r.p.Released++
			}
			r.sent[env.Key] = true
		}
	}
	clear(r.waits)
	r.batch = r.batch[:0]
	if r.opts.Progress != nil {
		r.opts.Progress(r.p)
	}
}

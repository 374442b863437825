package process

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	mrand "math/rand/v2"
	"net/http"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hookwall/hookwall/shared/obs"
	"github.com/hookwall/hookwall/shared/webhook"
)

// Metric names (EMF, PascalCase) the dispatcher records.
const (
	MetricClaimed           = "Claimed"
	MetricDuplicateDelivery = "DuplicateDelivery"
	MetricSucceeded         = "Succeeded"
	MetricRetried           = "Retried"
	MetricFailed            = "Failed"
	MetricUnhandled         = "Unhandled"
	MetricStepSkipped       = "StepSkipped"
	MetricLeaseLost         = "LeaseLost"
	MetricLeaseBusy         = "LeaseBusy"
	MetricMissing           = "webhook.AcquireMissing"
	MetricMalformed         = "Malformed"
	MetricPublishFailed     = "PublishFailed"
	MetricProcessingLatency = "ProcessingLatency"
	MetricEndToEndLatency   = "EndToEndLatency"
)

// Defaults of [Config].
const (
	DefaultLeaseDuration = 60 * time.Second
	DefaultMaxAttempts   = 5
	DefaultRetryBase     = 2 * time.Second
	DefaultRetryCap      = 15 * time.Minute
	DefaultRetention     = 7 * 24 * time.Hour
	DefaultFinishReserve = 3 * time.Second
	// MaxVisibility is the longest visibility timeout SQS accepts.
	MaxVisibility = 12 * time.Hour
	maxLastError  = 1024
)

// StepPoint is where a [StepHook] is called: after a step's function
// returned nil, before (Journaled false) and after (Journaled true) its
// journal entry is written.
type StepPoint struct {
	Key       string
	Handler   string
	Step      string
	Attempt   int
	Journaled bool
}

// StepHook is a test seam: a non-nil error it returns is returned by Step as
// if the step had failed at that point. An error wrapping [ErrCrashed]
// abandons the attempt as a process crash would: nothing more is written, the
// lease is left to run out and the message is not acknowledged.
type StepHook func(ctx context.Context, p StepPoint) error

// ErrCrashed, returned by a [StepHook], simulates a crash of the worker.
var ErrCrashed = errors.New("process: simulated crash")

// Config configures a [Dispatcher].
type Config struct {
	// Registry holds the handlers (required).
	Registry *Registry
	// Store is the events table (required).
	Store Store
	// Queue is the main queue, whose message visibility is set for retries (required).
	Queue Visibility
	// DLQ receives the events given up on (required).
	DLQ DeadLetters
	// Publisher publishes outcome events (optional; nil: publishing off).
	Publisher Publisher
	// Logger (optional; default: discard).
	Logger *slog.Logger
	// Metrics records EMF metrics (optional; nil: none).
	Metrics *obs.Metrics
	// LeaseDuration is how long a lease lasts unless extended; the heartbeat
	// extends it every third of it (optional; default 60s).
	LeaseDuration time.Duration
	// MaxAttempts is the attempt limit of handlers without their own (optional; default 5).
	// The queue's maxReceiveCount must be higher, or SQS dead-letters first.
	MaxAttempts int
	// Timeout is the per-attempt time limit of handlers without their own
	// (optional; default none: the invocation's deadline less FinishReserve).
	Timeout time.Duration
	// RetryBase and RetryCap bound the retry backoff: the visibility timeout
	// of attempt n is uniform in [0, min(RetryCap, RetryBase·2^(n-1))]
	// ("full jitter") (optional; defaults 2s and 15m; at most 12h).
	RetryBase time.Duration
	RetryCap  time.Duration
	// Retention is how long a SUCCEEDED record is kept (optional; default 7 days).
	Retention time.Duration
	// FinishReserve is the time kept back from the invocation's deadline for
	// the closing writes (optional; default 3s).
	FinishReserve time.Duration
	// UnhandledToDLQ sends events of a type without handlers to the DLQ
	// (FAILED) instead of acknowledging them (SUCCEEDED) (optional).
	UnhandledToDLQ bool
	// Transport is the base transport of [Event.HTTPClient] (optional; default http.DefaultTransport).
	Transport http.RoundTripper
	// Now is the clock (optional; default time.Now).
	Now func() time.Time
	// Jitter returns a uniform random number in [0, n) (optional; default math/rand/v2).
	Jitter func(n int64) int64
	// NewOwner returns a unique lease owner token (optional; default 128 random bits, hex).
	NewOwner func() string
	// StepHook is called at each step's crash points (optional; tests only).
	StepHook StepHook
}

// Validate reports a missing required field or an invalid value.
func (c *Config) Validate() error {
	switch {
	case c.Registry == nil:
		return errors.New("process: config: nil Registry")
	case c.Store == nil:
		return errors.New("process: config: nil Store")
	case c.Queue == nil:
		return errors.New("process: config: nil Queue")
	case c.DLQ == nil:
		return errors.New("process: config: nil DLQ")
	case c.LeaseDuration < 0, c.MaxAttempts < 0, c.Timeout < 0, c.RetryBase < 0, c.RetryCap < 0,
		c.Retention < 0, c.FinishReserve < 0:
		return errors.New("process: config: negative duration or count")
	case c.RetryCap > MaxVisibility:
		return fmt.Errorf("process: config: RetryCap %v above SQS's maximum %v", c.RetryCap, MaxVisibility)
	}
	return nil
}

func (c *Config) setDefaults() {
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewJSONHandler(io.Discard, nil))
	}
	if c.LeaseDuration == 0 {
		c.LeaseDuration = DefaultLeaseDuration
	}
	if c.MaxAttempts == 0 {
		c.MaxAttempts = DefaultMaxAttempts
	}
	if c.RetryBase == 0 {
		c.RetryBase = DefaultRetryBase
	}
	if c.RetryCap == 0 {
		c.RetryCap = DefaultRetryCap
	}
	if c.RetryCap < c.RetryBase {
		c.RetryCap = c.RetryBase
	}
	if c.Retention == 0 {
		c.Retention = DefaultRetention
	}
	if c.FinishReserve == 0 {
		c.FinishReserve = DefaultFinishReserve
	}
	if c.Transport == nil {
		c.Transport = http.DefaultTransport
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Jitter == nil {
		c.Jitter = mrand.Int64N
	}
	if c.NewOwner == nil {
		c.NewOwner = randomOwner
	}
}

func randomOwner() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand, Go ≥ 1.24)
	return hex.EncodeToString(b[:])
}

// Dispatcher processes queue deliveries. It is safe for concurrent use; one
// envelope may be delivered to it many times concurrently.
type Dispatcher struct {
	cfg       Config
	transport http.RoundTripper
}

// New returns the Dispatcher described by cfg.
func New(cfg Config) (*Dispatcher, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.setDefaults()
	return &Dispatcher{cfg: cfg, transport: cfg.Transport}, nil
}

// Message is one queue message, as the processor receives it.
type Message struct {
	// MessageID identifies the message in its batch.
	MessageID string
	// ReceiptHandle is the handle to change the message's visibility.
	ReceiptHandle string
	// Body is the message body: a JSON [webhook.Envelope].
	Body []byte
}

// Verdict is what processing one delivery came to.
type Verdict int

// Verdicts. [Result.Ack] says whether the message is to be deleted.
const (
	// Succeeded: the handlers completed; the record is SUCCEEDED. Ack.
	Succeeded Verdict = iota + 1
	// Retried: a handler failed; the record is RETRY and the message comes
	// back after the backoff. Not acked.
	Retried
	// Failed: permanent error or attempts exhausted; the record is FAILED and
	// the message went to the DLQ. Ack (not acked if the DLQ send failed).
	Failed
	// Duplicate: the record was already terminal. Ack.
	Duplicate
	// BusyElsewhere: another worker holds a live lease; the message comes back
	// after it. Not acked.
	BusyElsewhere
	// Absent: there is no live record for the key. Ack.
	Absent
	// DeadLettered: the record was already FAILED; the message went to the DLQ. Ack.
	DeadLettered
	// Unhandled: no handler serves the event type. Ack.
	Unhandled
	// LeaseLost: another worker took over; this attempt's outcome was discarded. Not acked.
	LeaseLost
	// Crashed: a [StepHook] simulated a crash; nothing was written. Not acked.
	Crashed
	// Malformed: the body is not an envelope; it went to the DLQ. Ack.
	Malformed
	// Errored: a store or queue call failed; the message comes back. Not acked.
	Errored
)

var verdictNames = [...]string{"", "succeeded", "retried", "failed", "duplicate", "busy", "absent",
	"dead-lettered", "unhandled", "lease-lost", "crashed", "malformed", "errored"}

// String returns the verdict's name.
func (v Verdict) String() string {
	if v > 0 && int(v) < len(verdictNames) {
		return verdictNames[v]
	}
	return "unknown"
}

// Result is the result of processing one delivery.
type Result struct {
	// MessageID is the delivery's message id.
	MessageID string
	// Key is the event key ("" if the body was malformed).
	Key string
	// Verdict says what happened.
	Verdict Verdict
	// Ack is true when the message is to be deleted from the queue (not
	// reported as a batch item failure).
	Ack bool
	// Attempt is the attempt number (0 when no lease was taken).
	Attempt int
	// RetryAfter is the visibility timeout set on the message, if any.
	RetryAfter time.Duration
	// Err is the handler's error, the reason given up, or the failed call.
	Err error
	// Event is the outcome event, if the delivery reached an outcome.
	Event *webhook.Outcome
}

// Process processes one delivery and publishes its outcome event.
func (d *Dispatcher) Process(ctx context.Context, dv Message) Result {
	res := d.process(ctx, dv)
	if res.Event != nil {
		d.publish(ctx, []webhook.Outcome{*res.Event})
	}
	return res
}

// ProcessBatch processes deliveries with at most concurrency at a time
// (concurrency < 1 means 1), publishes their outcome events in one call, and
// returns the results in the order of ds.
func (d *Dispatcher) ProcessBatch(ctx context.Context, ds []Message, concurrency int) []Result {
	concurrency = max(concurrency, 1)
	results := make([]Result, len(ds))
	sem := make(chan struct{}, concurrency)
	var wg sync.WaitGroup
	for i := range ds {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			results[i] = d.process(ctx, ds[i])
		}()
	}
	wg.Wait()
	var evs []webhook.Outcome
	for _, r := range results {
		if r.Event != nil {
			evs = append(evs, *r.Event)
		}
	}
	d.publish(ctx, evs)
	return results
}

func (d *Dispatcher) publish(ctx context.Context, evs []webhook.Outcome) {
	if d.cfg.Publisher == nil || len(evs) == 0 {
		return
	}
	ctx, cancel := d.finishContext(ctx)
	defer cancel()
	if err := d.cfg.Publisher.Publish(ctx, evs); err != nil {
		d.cfg.Metrics.Count(MetricPublishFailed, 1)
		d.cfg.Logger.ErrorContext(ctx, "publish outcome events", slog.Int("events", len(evs)), slog.Any("error", err))
	}
}

// finishContext returns a context for the closing writes: not cancelled with
// ctx, bounded by FinishReserve (at least one second).
func (d *Dispatcher) finishContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), max(d.cfg.FinishReserve, time.Second))
}

// leaseUntil is now + LeaseDuration, never past ctx's deadline.
func (d *Dispatcher) leaseUntil(ctx context.Context) time.Time {
	until := d.cfg.Now().Add(d.cfg.LeaseDuration)
	if dl, ok := ctx.Deadline(); ok && dl.Before(until) {
		until = dl
	}
	return until
}

func (d *Dispatcher) process(ctx context.Context, dv Message) Result {
	start := d.cfg.Now()
	res := Result{MessageID: dv.MessageID}
	var env webhook.Envelope
	if err := json.Unmarshal(dv.Body, &env); err != nil || env.Key == "" || env.Provider == "" || env.Type == "" {
		if err == nil {
			err = errors.New("missing key, provider or type")
		}
		return d.malformed(ctx, dv, res, err)
	}
	res.Key = env.Key
	log := d.cfg.Logger.With(slog.String(obs.KeyEventKey, env.Key), slog.String(obs.KeyProvider, env.Provider),
		slog.String(obs.KeyTenant, env.Tenant), slog.String(obs.KeyEventType, env.Type))
	if env.TraceID != "" {
		log = log.With(slog.String(obs.KeyTraceID, env.TraceID))
	}
	acq, err := d.cfg.Store.Acquire(ctx, env.Key, d.cfg.NewOwner(), d.leaseUntil(ctx))
	if err != nil {
		log.ErrorContext(ctx, "acquire lease", slog.Any("error", err))
		res.Verdict, res.Err = Errored, err
		return res
	}
	switch acq.Outcome {
	case webhook.Acquired:
	case webhook.AcquireDone:
		d.cfg.Metrics.Count(MetricDuplicateDelivery, 1)
		log.InfoContext(ctx, "duplicate delivery", slog.String(obs.KeyStatus, acq.Status.String()))
		res.Verdict, res.Ack = Duplicate, true
		return res
	case webhook.AcquireBusy:
		d.cfg.Metrics.Count(MetricLeaseBusy, 1)
		res.Verdict = BusyElsewhere
		res.RetryAfter = acq.RetryAfter + time.Second
		if err := d.cfg.Queue.ChangeVisibility(ctx, dv.ReceiptHandle, res.RetryAfter); err != nil {
			log.WarnContext(ctx, "change visibility", slog.Any("error", err))
		}
		log.InfoContext(ctx, "lease held by another worker", slog.Duration("retry_after", res.RetryAfter))
		return res
	case webhook.AcquireMissing:
		d.cfg.Metrics.Count(MetricMissing, 1)
		log.WarnContext(ctx, "no live record for the event; acknowledged")
		res.Verdict, res.Ack = Absent, true
		return res
	case webhook.AcquireFailedState:
		res.Err = fmt.Errorf("record %s: %s", acq.Status, acq.LastError)
		if err := d.cfg.DLQ.SendDeadLetter(ctx, env.Key, dv.Body, res.Err.Error()); err != nil {
			log.ErrorContext(ctx, "send to dead-letter queue", slog.Any("error", err))
			res.Verdict = Errored
			return res
		}
		res.Verdict, res.Ack = DeadLettered, true
		return res
	default:
		res.Verdict, res.Err = Errored, fmt.Errorf("unknown acquire outcome %d", acq.Outcome)
		return res
	}

	if env.PayloadInRecord {
		env.Payload, env.PayloadInRecord = acq.Payload, false
	}
	lease := acq.Lease
	res.Attempt = lease.Attempt
	d.cfg.Metrics.Count(MetricClaimed, 1)
	log = log.With(slog.Int(obs.KeyAttempt, lease.Attempt))
	att := &attempt{d: d, lease: lease, env: env, log: log}
	regs := d.cfg.Registry.Match(env.Provider, env.Tenant, env.Type)
	var herr error
	if len(regs) == 0 {
		d.cfg.Metrics.Count(MetricUnhandled, 1)
		log.WarnContext(ctx, "no handler for the event type")
		if d.cfg.UnhandledToDLQ {
			herr = Permanent(fmt.Errorf("no handler for %s/%s", env.Provider, env.Type))
		}
	} else {
		herr = att.run(ctx, regs)
	}
	res = d.finish(ctx, att, dv, regs, herr, res)
	if len(regs) == 0 && res.Verdict == Succeeded {
		res.Verdict, res.Event = Unhandled, nil
	}
	d.cfg.Metrics.Duration(MetricProcessingLatency, d.cfg.Now().Sub(start))
	return res
}

func (d *Dispatcher) malformed(ctx context.Context, dv Message, res Result, err error) Result {
	d.cfg.Metrics.Count(MetricMalformed, 1)
	reason := "malformed envelope: " + err.Error()
	d.cfg.Logger.ErrorContext(ctx, "malformed message", slog.String("message_id", dv.MessageID), slog.Any("error", err))
	res.Err = errors.New(reason)
	if err := d.cfg.DLQ.SendDeadLetter(ctx, "", dv.Body, reason); err != nil {
		d.cfg.Logger.ErrorContext(ctx, "send to dead-letter queue", slog.Any("error", err))
		res.Verdict = Errored
		return res
	}
	res.Verdict, res.Ack = Malformed, true
	return res
}

// finish writes the attempt's outcome, fenced on the lease.
func (d *Dispatcher) finish(ctx context.Context, att *attempt, dv Message, regs []*Registration, herr error, res Result) Result {
	log, lease, env := att.log, att.lease, att.env
	if errors.Is(herr, ErrCrashed) {
		res.Verdict, res.Err = Crashed, herr
		return res
	}
	if att.lost.Load() {
		return d.leaseLost(ctx, att, res)
	}
	fctx, cancel := d.finishContext(ctx)
	defer cancel()
	now := d.cfg.Now()
	ev := &webhook.Outcome{Key: env.Key, Provider: env.Provider, Tenant: env.Tenant, Type: env.Type,
		ReceivedAt: env.ReceivedAt, TraceID: env.TraceID, Attempts: lease.Attempt, At: now}
	res.Err = herr
	if herr == nil {
		held, err := d.cfg.Store.Complete(fctx, lease, now.Add(d.cfg.Retention))
		if err != nil {
			log.ErrorContext(ctx, "complete", slog.Any("error", err))
			res.Verdict, res.Err = Errored, err
			return res
		}
		if !held {
			return d.leaseLost(ctx, att, res)
		}
		if len(regs) > 0 {
			d.cfg.Metrics.Count(MetricSucceeded, 1)
		}
		d.endToEnd(env, now)
		log.InfoContext(ctx, "event succeeded", slog.String(obs.KeyStatus, webhook.StatusSucceeded.String()))
		ev.Status = webhook.StatusSucceeded
		res.Verdict, res.Ack, res.Event = Succeeded, true, ev
		return res
	}
	reason := lastError(herr)
	if IsPermanent(herr) || lease.Attempt >= d.maxAttempts(att.failed, regs) {
		held, err := d.cfg.Store.Fail(fctx, lease, reason)
		if err != nil {
			log.ErrorContext(ctx, "fail", slog.Any("error", err))
			res.Verdict, res.Err = Errored, err
			return res
		}
		if !held {
			return d.leaseLost(ctx, att, res)
		}
		d.cfg.Metrics.Count(MetricFailed, 1)
		d.endToEnd(env, now)
		log.ErrorContext(ctx, "event failed", slog.String(obs.KeyStatus, webhook.StatusFailed.String()),
			slog.String("handler", att.failedName()), slog.Bool("permanent", IsPermanent(herr)), slog.Any("error", herr))
		ev.Status, ev.LastError = webhook.StatusFailed, reason
		res.Verdict, res.Event = Failed, ev
		if err := d.cfg.DLQ.SendDeadLetter(fctx, env.Key, dv.Body, reason); err != nil {
			// The record is FAILED: the next delivery finds it so and dead-letters it.
			log.ErrorContext(ctx, "send to dead-letter queue", slog.Any("error", err))
			return res
		}
		res.Ack = true
		return res
	}
	held, err := d.cfg.Store.Retry(fctx, lease, reason)
	if err != nil {
		log.ErrorContext(ctx, "retry", slog.Any("error", err))
		res.Verdict, res.Err = Errored, err
		return res
	}
	if !held {
		return d.leaseLost(ctx, att, res)
	}
	d.cfg.Metrics.Count(MetricRetried, 1)
	res.Verdict = Retried
	res.RetryAfter = Backoff(lease.Attempt, d.cfg.RetryBase, d.cfg.RetryCap, d.cfg.Jitter)
	if err := d.cfg.Queue.ChangeVisibility(fctx, dv.ReceiptHandle, res.RetryAfter); err != nil {
		log.WarnContext(ctx, "change visibility", slog.Any("error", err))
	}
	log.WarnContext(ctx, "event will be retried", slog.String(obs.KeyStatus, webhook.StatusRetry.String()),
		slog.String("handler", att.failedName()), slog.Duration("retry_after", res.RetryAfter), slog.Any("error", herr))
	return res
}

func (d *Dispatcher) leaseLost(ctx context.Context, att *attempt, res Result) Result {
	d.cfg.Metrics.Count(MetricLeaseLost, 1)
	att.log.WarnContext(ctx, "lease lost; outcome discarded")
	res.Verdict, res.Event = LeaseLost, nil
	return res
}

func (d *Dispatcher) endToEnd(env webhook.Envelope, now time.Time) {
	if !env.ReceivedAt.IsZero() {
		d.cfg.Metrics.Duration(MetricEndToEndLatency, now.Sub(env.ReceivedAt))
	}
}

func (d *Dispatcher) maxAttempts(failed *Registration, regs []*Registration) int {
	if failed != nil && failed.maxAttempts > 0 {
		return failed.maxAttempts
	}
	if failed == nil && len(regs) == 0 {
		return 1
	}
	return d.cfg.MaxAttempts
}

func lastError(err error) string {
	return webhook.CleanText(err.Error(), maxLastError)
}

// Backoff returns the visibility timeout after failed attempt n (1 = first):
// uniform in [0, min(cap, base·2^(n-1))] ("full jitter"), drawn with jitter
// (which returns a uniform number in [0, k)). The result is never above cap.
func Backoff(n int, base, cap time.Duration, jitter func(k int64) int64) time.Duration {
	ceil := cap
	if n >= 1 && n < 63 {
		if b := base << (n - 1); b > 0 && b>>(n-1) == base && b < cap {
			ceil = b
		}
	}
	if ceil <= 0 {
		return 0
	}
	return time.Duration(jitter(int64(ceil) + 1))
}

// attempt is one attempt at one event: the lease, the heartbeat, the journal.
type attempt struct {
	d      *Dispatcher
	lease  webhook.Lease
	env    webhook.Envelope
	log    *slog.Logger
	lost   atomic.Bool
	cancel context.CancelCauseFunc
	failed *Registration // the handler whose error ended the attempt

	mu      sync.Mutex
	loaded  bool
	journal map[string]webhook.JournalEntry // by handler + "#" + step
}

func (a *attempt) failedName() string {
	if a.failed == nil {
		return ""
	}
	return a.failed.name
}

// markLost records that the lease is gone and cancels the handlers.
func (a *attempt) markLost() {
	if a.lost.CompareAndSwap(false, true) && a.cancel != nil {
		a.cancel(ErrLeaseLost)
	}
}

// run runs the handlers under the heartbeat and returns the first error.
func (a *attempt) run(ctx context.Context, regs []*Registration) error {
	hctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	a.cancel = cancel
	if dl, ok := ctx.Deadline(); ok {
		var c context.CancelFunc
		hctx, c = context.WithDeadline(hctx, dl.Add(-a.d.cfg.FinishReserve))
		defer c()
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		a.heartbeat(ctx, stop)
	}()
	defer func() { close(stop); wg.Wait() }()

	if a.lease.Attempt > 1 && len(regs) > 1 {
		// Completed handlers are to be skipped: read the journal now.
		if err := a.load(hctx); err != nil {
			return err
		}
	}
	for i, reg := range regs {
		if a.lost.Load() {
			return ErrLeaseLost
		}
		if a.journaled(reg.name, webhook.DoneStep) {
			a.d.cfg.Metrics.Count(MetricStepSkipped, 1)
			a.log.DebugContext(ctx, "handler already completed; skipped", slog.String("handler", reg.name))
			continue
		}
		if err := a.runHandler(hctx, reg); err != nil {
			a.failed = reg
			return err
		}
		if i < len(regs)-1 {
			// Mark the handler done so a retry caused by a later handler skips it.
			if _, err := a.save(hctx, webhook.JournalEntry{Handler: reg.name, Step: webhook.DoneStep}); err != nil {
				a.failed = reg
				return err
			}
		}
	}
	return nil
}

func (a *attempt) heartbeat(ctx context.Context, stop <-chan struct{}) {
	t := time.NewTicker(max(a.d.cfg.LeaseDuration/3, time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-ctx.Done():
			return
		case <-t.C:
		}
		held, err := a.d.cfg.Store.Heartbeat(ctx, a.lease, a.d.leaseUntil(ctx))
		switch {
		case err != nil:
			a.log.WarnContext(ctx, "heartbeat", slog.Any("error", err))
		case !held:
			a.markLost()
			return
		}
	}
}

func (a *attempt) runHandler(ctx context.Context, reg *Registration) (err error) {
	timeout := reg.timeout
	if timeout == 0 {
		timeout = a.d.cfg.Timeout
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	log := a.log.With(slog.String("handler", reg.name))
	ctx = obs.WithAttrs(ctx, slog.String(obs.KeyEventKey, a.env.Key), slog.String("handler", reg.name))
	defer func() {
		if v := recover(); v != nil {
			pe := &PanicError{Value: v, Stack: debug.Stack()}
			log.ErrorContext(ctx, "handler panicked", slog.Any("panic", v), slog.String("stack", string(pe.Stack)))
			err = pe
		}
	}()
	run := &handlerRun{att: a, handler: reg.name, used: map[string]bool{}}
	err = reg.run(ctx, eventInfo{env: a.env, attempt: a.lease.Attempt, log: log, run: run})
	if err == nil && ctx.Err() != nil && a.lost.Load() {
		err = ErrLeaseLost
	}
	return err
}

func (a *attempt) journaled(handler, step string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	_, ok := a.journal[handler+"#"+step]
	return ok
}

// load reads the journal once per attempt; the first attempt has none.
func (a *attempt) load(ctx context.Context) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.loaded || a.lease.Attempt <= 1 {
		return nil
	}
	entries, err := a.d.cfg.Store.Journal(ctx, a.lease)
	if err != nil {
		return fmt.Errorf("load journal: %w", err)
	}
	a.journal = make(map[string]webhook.JournalEntry, len(entries))
	for _, e := range entries {
		a.journal[e.Handler+"#"+e.Step] = e
	}
	a.loaded = true
	return nil
}

// save journals e; held false means the lease is lost.
func (a *attempt) save(ctx context.Context, e webhook.JournalEntry) (bool, error) {
	e.CompletedAt = a.d.cfg.Now()
	held, err := a.d.cfg.Store.SaveStep(ctx, a.lease, e)
	if err != nil {
		return false, fmt.Errorf("journal step %s/%s: %w", e.Handler, e.Step, err)
	}
	if !held {
		a.markLost()
		return false, ErrLeaseLost
	}
	a.mu.Lock()
	if a.journal == nil {
		a.journal = map[string]webhook.JournalEntry{}
	}
	a.journal[e.Handler+"#"+e.Step] = e
	a.mu.Unlock()
	return true, nil
}

// handlerRun is one handler's run within an attempt.
type handlerRun struct {
	att     *attempt
	handler string
	mu      sync.Mutex
	used    map[string]bool
}

func (h *handlerRun) step(ctx context.Context, name string, fn func(ctx context.Context, key string) ([]byte, error)) ([]byte, error) {
	a := h.att
	if err := validStepName(name); err != nil {
		return nil, err
	}
	h.mu.Lock()
	dup := h.used[name]
	h.used[name] = true
	h.mu.Unlock()
	if dup {
		return nil, Permanent(fmt.Errorf("step %q used twice in handler %s", name, h.handler))
	}
	if a.lost.Load() {
		return nil, ErrLeaseLost
	}
	if err := a.load(ctx); err != nil {
		return nil, err
	}
	a.mu.Lock()
	e, done := a.journal[h.handler+"#"+name]
	a.mu.Unlock()
	if done {
		a.d.cfg.Metrics.Count(MetricStepSkipped, 1)
		a.log.DebugContext(ctx, "step already journaled; skipped", slog.String("handler", h.handler), slog.String("step", name))
		return e.Result, nil
	}
	key := IdempotencyKey(a.env.Key, h.handler, name)
	result, err := fn(context.WithValue(ctx, idemKeyCtx{}, key), key)
	if err != nil {
		if a.lost.Load() {
			return nil, ErrLeaseLost
		}
		return nil, err
	}
	point := StepPoint{Key: a.env.Key, Handler: h.handler, Step: name, Attempt: a.lease.Attempt}
	if hook := a.d.cfg.StepHook; hook != nil {
		if err := hook(ctx, point); err != nil {
			return nil, err
		}
	}
	if _, err := a.save(ctx, webhook.JournalEntry{Handler: h.handler, Step: name, Result: result}); err != nil {
		return nil, err
	}
	if hook := a.d.cfg.StepHook; hook != nil {
		point.Journaled = true
		if err := hook(ctx, point); err != nil {
			return nil, err
		}
	}
	return result, nil
}

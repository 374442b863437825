package intake

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/hookwall/hookwall/shared/audit"
	"github.com/hookwall/hookwall/shared/handoff"
	"github.com/hookwall/hookwall/shared/internal/kernel"
	"github.com/hookwall/hookwall/shared/obs"
	"github.com/hookwall/hookwall/shared/queue"
	"github.com/hookwall/hookwall/shared/store"
	"github.com/hookwall/hookwall/shared/webhook"
)

// Store is what intake needs of the events table (store.Table satisfies it).
type Store interface {
	Claim(ctx context.Context, ev store.NewEvent, window time.Duration) (store.ClaimResult, error)
	Unclaim(ctx context.Context, rec *store.Record) (bool, error)
	TakeOverEnqueue(ctx context.Context, rec *store.Record, grace time.Duration) (bool, error)
	CountDelivery(ctx context.Context, rec *store.Record) (bool, error)
	RevertEnqueue(ctx context.Context, rec *store.Record, prev int64) error
	LoadProgress(ctx context.Context, id string) (store.Progress, error)
	SaveProgress(ctx context.Context, id string, p store.Progress) error
}

// Queue is what intake needs of the main queue (queue.Queue satisfies it).
// Send returns nil, or an error naming the envelopes not sent (*queue.SendError).
type Queue interface {
	Send(ctx context.Context, envs []webhook.Envelope) error
}

// Defaults of Config.
const (
	DefaultDedupWindow = 7 * 24 * time.Hour
	// DefaultEventAgeMargin is how much shorter than the dedup window the
	// default MaxEventAge is: room for clock skew between the platform and
	// AWS and for the claim's own delay.
	DefaultEventAgeMargin = time.Hour
	// DefaultGraceMargin is added to the budget for the default
	// ReenqueueGrace: room for clock skew between receiver instances and for
	// a send still in flight when its delivery's budget ran out. It and
	// DefaultBudget are the kernel's, which the sweeper's grace agrees with.
	DefaultGraceMargin = kernel.DefaultGraceMargin
	DefaultMaxBody     = 1 << 20
	DefaultBudget      = kernel.DefaultReceiveBudget
	DefaultUndoTimeout = time.Second
	// DefaultHandedOffMargin is how much shorter than ReenqueueGrace the
	// default HandedOffTTL is.
	DefaultHandedOffMargin = 250 * time.Millisecond
	// DefaultHandedOffBytes bounds the default hand-off cache of [Build]:
	// about 25,000 events.
	DefaultHandedOffBytes = 4 << 20
	// DefaultClaimWorkers is how many claims one delivery makes at a time
	// (measured: docs/PERFORMANCE.md, "Large deliveries").
	DefaultClaimWorkers = 32
	maxTraceIDBytes     = 128
)

// Config configures a Handler.
type Config struct {
	// Parsers resolves (provider, tenant) to a parser (required).
	Parsers *Parsers
	// Store claims events (required).
	Store Store
	// Queue receives new events (required).
	Queue Queue
	// Logger logs one line per event and per rejected request (optional; default discards).
	Logger *slog.Logger
	// Metrics receives EMF counts and latencies (optional).
	Metrics *obs.Metrics
	// DedupWindow is how long a claimed key stays a duplicate (optional; default 7 days).
	DedupWindow time.Duration
	// ReenqueueGrace is how long after a claim (or a take-over) the delivery
	// that made it may still be sending the event (optional; default Budget +
	// 1.5 s; it must exceed Budget). A duplicate that finds the record still
	// RECEIVED inside it answers 503, since it cannot know whether that send
	// succeeds; past it, the duplicate takes the enqueue over, sends the
	// event itself and answers success.
	ReenqueueGrace time.Duration
	// MaxEventAge is the oldest event accepted, by the time the provider says
	// it happened (optional; default DedupWindow less one hour; it must be
	// shorter than DedupWindow). An older event is answered 401 and nothing
	// is stored: its record may have expired already, so a replay of a
	// captured request would otherwise be a new event.
	MaxEventAge time.Duration
	// UndoTimeout bounds the undo of claims after a failure (optional;
	// default 1 s). It runs after Budget, on a context of its own.
	UndoTimeout time.Duration
	// MaxBody is the largest accepted body in bytes (optional; default 1 MiB).
	MaxBody int64
	// Budget bounds the DynamoDB and SQS work of one delivery (optional;
	// default 1.5 s), so that a slow dependency gets a 503 before the platform
	// times out (LINE waits 2 s, WeCom and WeChat 5 s) and retries on its own.
	Budget time.Duration
	// Now is the clock (optional; default time.Now).
	Now func() time.Time
	// Events reads records and steps for the events API, [EventsRoute]
	// (optional; nil: the route is not served).
	Events audit.Reader
	// HandedOff remembers the events this instance handed off to the queue,
	// so that their duplicates are answered from memory with no AWS call
	// (optional; nil: every duplicate goes to DynamoDB). See [handoff].
	HandedOff *handoff.Cache
	// ClaimWorkers is how many claims (and undos) one delivery makes at a
	// time (optional; default [DefaultClaimWorkers]).
	ClaimWorkers int
	// HandedOffTTL is how long after its claim a hand-off is remembered
	// (optional; default ReenqueueGrace less [DefaultHandedOffMargin]; it
	// must be shorter than ReenqueueGrace, so that a record still RECEIVED
	// past the grace is taken over through DynamoDB, as without the cache).
	HandedOffTTL time.Duration
}

// Handler is the receiver core. It is safe for concurrent use.
type Handler struct {
	cfg Config
	mux *http.ServeMux
	// flights are the hand-offs in progress in this instance, by event
	// key, while the hand-off cache is on (see [flights]).
	flights flights
}

// New returns a Handler for cfg.
func New(cfg Config) (*Handler, error) {
	if cfg.Parsers == nil || cfg.Store == nil || cfg.Queue == nil {
		return nil, errors.New("intake: Parsers, Store and Queue are required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	cfg.DedupWindow = kernel.OrDefault(cfg.DedupWindow, DefaultDedupWindow)
	cfg.MaxBody = kernel.OrDefault(cfg.MaxBody, DefaultMaxBody)
	cfg.Budget = kernel.OrDefault(cfg.Budget, DefaultBudget)
	cfg.ReenqueueGrace = kernel.OrDefault(cfg.ReenqueueGrace, cfg.Budget+DefaultGraceMargin)
	if cfg.ReenqueueGrace <= cfg.Budget {
		return nil, fmt.Errorf("intake: ReenqueueGrace (%s) must exceed Budget (%s)", cfg.ReenqueueGrace, cfg.Budget)
	}
	cfg.MaxEventAge = kernel.OrDefault(cfg.MaxEventAge, cfg.DedupWindow-min(DefaultEventAgeMargin, cfg.DedupWindow/2))
	if cfg.MaxEventAge >= cfg.DedupWindow {
		return nil, fmt.Errorf("intake: MaxEventAge (%s) must be shorter than DedupWindow (%s)", cfg.MaxEventAge, cfg.DedupWindow)
	}
	cfg.ClaimWorkers = kernel.OrDefault(cfg.ClaimWorkers, DefaultClaimWorkers)
	cfg.UndoTimeout = kernel.OrDefault(cfg.UndoTimeout, DefaultUndoTimeout)
	cfg.HandedOffTTL = kernel.OrDefault(cfg.HandedOffTTL, max(cfg.ReenqueueGrace-DefaultHandedOffMargin, cfg.ReenqueueGrace/2))
	if cfg.HandedOffTTL >= cfg.ReenqueueGrace {
		return nil, fmt.Errorf("intake: HandedOffTTL (%s) must be shorter than ReenqueueGrace (%s)", cfg.HandedOffTTL, cfg.ReenqueueGrace)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	h := &Handler{cfg: cfg, mux: http.NewServeMux()}
	h.mux.HandleFunc(Route, h.serveWebhook)
	if cfg.Events != nil {
		h.mux.HandleFunc(EventsRoute, h.serveEvents)
	}
	return h, nil
}

// Route is the webhook route, as an http.ServeMux pattern.
const Route = "/webhooks/{provider}/{tenant}"

// Meta carries what the transport knows of a request beyond its content.
type Meta struct {
	RequestID string
	TraceID   string
}

// errUnavailable marks failures of DynamoDB or SQS, and events another
// delivery is still handing off: the platform should retry.
var errUnavailable = errors.New("dependency unavailable")

// StatusFor maps an error of Receive to its HTTP status code.
func StatusFor(err error) int {
	switch {
	case err == nil:
		return http.StatusOK
	case errors.Is(err, webhook.ErrBadSignature), errors.Is(err, webhook.ErrStaleTimestamp):
		return http.StatusUnauthorized
	case errors.Is(err, webhook.ErrMalformed):
		return http.StatusBadRequest
	case errors.Is(err, webhook.ErrUnknownProvider), errors.Is(err, webhook.ErrUnknownTenant):
		return http.StatusNotFound
	case errors.Is(err, webhook.ErrMethodNotAllowed):
		return http.StatusMethodNotAllowed
	case errors.Is(err, webhook.ErrTooLarge):
		return http.StatusRequestEntityTooLarge
	case errors.Is(err, errUnavailable):
		return http.StatusServiceUnavailable
	default:
		return http.StatusInternalServerError
	}
}

// rejectReason names a rejection in logs and metrics.
func rejectReason(err error) string {
	switch StatusFor(err) {
	case http.StatusUnauthorized:
		if errors.Is(err, webhook.ErrStaleTimestamp) {
			return reasonStaleTimestamp
		}
		return reasonBadSignature
	case http.StatusBadRequest:
		return reasonMalformed
	case http.StatusNotFound:
		return reasonUnknownRoute
	case http.StatusMethodNotAllowed:
		return reasonMethodNotAllowed
	case http.StatusRequestEntityTooLarge:
		return reasonTooLarge
	default:
		return reasonUnavailable
	}
}

// Receive handles one delivery and returns the reply to send: the provider's
// reply, or an error reply whose status comes from StatusFor.
func (h *Handler) Receive(ctx context.Context, req *webhook.Request, meta Meta) webhook.Reply {
	start := h.cfg.Now()
	if meta.TraceID == "" || webhook.CheckID("trace id", meta.TraceID, maxTraceIDBytes) != nil {
		meta.TraceID = newID()
	}
	ctx = obs.WithAttrs(ctx,
		slog.String(obs.KeyRequestID, meta.RequestID), slog.String(obs.KeyTraceID, meta.TraceID),
		slog.String(obs.KeyProvider, req.Provider), slog.String(obs.KeyTenant, req.Tenant))
	reply, err := h.receive(ctx, req, meta)
	h.cfg.Metrics.Duration(MetricReceiverLatency, h.cfg.Now().Sub(start))
	if err != nil {
		return h.errorReply(ctx, err)
	}
	return reply
}

// errorReply logs and counts a failed delivery and returns its reply.
func (h *Handler) errorReply(ctx context.Context, err error) webhook.Reply {
	status := StatusFor(err)
	if status >= 500 {
		h.cfg.Logger.ErrorContext(ctx, "delivery failed; the platform will retry", "error", err, "status", status)
	} else {
		h.cfg.Logger.WarnContext(ctx, "delivery rejected", "error", err, "status", status)
	}
	h.cfg.Metrics.Count(MetricRejected, 1)
	h.cfg.Metrics.Count(MetricRejected+rejectReason(err), 1)
	return webhook.Reply{
		Status:      status,
		ContentType: "text/plain; charset=utf-8",
		Body:        []byte(http.StatusText(status) + "\n"),
	}
}

func (h *Handler) receive(ctx context.Context, req *webhook.Request, meta Meta) (webhook.Reply, error) {
	if int64(len(req.Body)) > h.cfg.MaxBody {
		return webhook.Reply{}, fmt.Errorf("intake: %d bytes: %w", len(req.Body), webhook.ErrTooLarge)
	}
	if req.Method != http.MethodGet && req.Method != http.MethodPost {
		return webhook.Reply{}, fmt.Errorf("intake: %s: %w", req.Method, webhook.ErrMethodNotAllowed)
	}
	parser, err := h.cfg.Parsers.Lookup(req.Provider, req.Tenant)
	if err != nil {
		return webhook.Reply{}, err
	}
	if req.Now.IsZero() {
		req.Now = h.cfg.Now()
	}
	d, err := parser.Parse(ctx, req)
	if err != nil {
		return webhook.Reply{}, err
	}
	if d.Verification || len(d.Events) == 0 {
		h.cfg.Logger.InfoContext(ctx, "url verification answered")
		return d.Reply, nil
	}
	if err := h.admit(ctx, time.Now(), req, meta, d.Events); err != nil {
		return webhook.Reply{}, err
	}
	return d.Reply, nil
}

// admitted is one event of the request and what its claim found.
type admitted struct {
	ev       *webhook.Event
	new      store.NewEvent
	cached   bool    // this instance handed it off already: a duplicate, answered from memory
	flight   *flight // this delivery's hand-off of the event, awaited by concurrent duplicates
	awaits   *flight // another delivery's hand-off of the same event in this instance
	onItsWay bool    // the event has a message sent or a record past RECEIVED
	res      store.ClaimResult
	err      error // the claim or take-over failed
	resend   bool  // a RECEIVED record past the grace that this request took over
	prevEnq  int64 // its enqueuedAt before the take-over
	inFlight bool  // a RECEIVED record another delivery may still be sending
	// fromProgress: an earlier attempt of this delivery handed it off (see
	// [store.Progress]); rank is its place in the delivery's progress.
	fromProgress bool
	rank         int
	skipped      bool // no claim started: too late in the budget
}

// needsClaim reports whether it must go to DynamoDB: not answered from the
// hand-off cache, a concurrent hand-off or the delivery's progress.
func (it *admitted) needsClaim() bool {
	return !it.cached && it.awaits == nil && !it.fromProgress
}

// prepare checks every event of the delivery before anything is claimed: a
// client's input that could never be stored or sent is refused here, with
// a 4xx and nothing written, instead of failing at DynamoDB or SQS on every
// retry. It returns the events to claim, one per key.
func (h *Handler) prepare(req *webhook.Request, meta Meta, events []webhook.Event) ([]admitted, error) {
	items := make([]admitted, 0, len(events))
	var seen map[string]bool
	if len(events) > 1 {
		seen = make(map[string]bool, len(events))
	}
	oldest := req.Now.Add(-h.cfg.MaxEventAge)
	for i := range events {
		ev := &events[i]
		if err := webhook.CheckID("event id", ev.DedupKey, webhook.MaxDedupKeyBytes); err != nil {
			return nil, fmt.Errorf("intake: event %d: %w", i, err)
		}
		if ev.Type != "" {
			if err := webhook.CheckID("event type", ev.Type, webhook.MaxTypeBytes); err != nil {
				return nil, fmt.Errorf("intake: event %d: %w", i, err)
			}
		}
		if !utf8.Valid(ev.JSON) {
			return nil, fmt.Errorf("intake: event %d: payload is not valid UTF-8: %w", i, webhook.ErrMalformed)
		}
		if !ev.OccurredAt.IsZero() && ev.OccurredAt.Before(oldest) {
			return nil, fmt.Errorf("intake: event %d happened %s ago, over the %s accepted: %w",
				i, req.Now.Sub(ev.OccurredAt).Round(time.Second), h.cfg.MaxEventAge, webhook.ErrStaleTimestamp)
		}
		key := webhook.Key(req.Provider, req.Tenant, ev.DedupKey)
		if seen != nil {
			if seen[key] { // the same event twice in one body: one claim.
				continue
			}
			seen[key] = true
		}
		it := admitted{ev: ev, new: store.NewEvent{
			Key: key, Provider: req.Provider, Tenant: req.Tenant, EventType: ev.Type,
			OccurredAt: ev.OccurredAt, PayloadHash: ev.PayloadHash, Payload: ev.JSON,
			TraceID: meta.TraceID,
		}}
		if err := it.new.Prepare(); err != nil {
			return nil, fmt.Errorf("intake: event %d: %w", i, err)
		}
		items = append(items, it)
	}
	return items, nil
}

// admit claims every event concurrently, enqueues the new ones (and those
// it took over) in batches, and undoes the claims it could not enqueue or
// whose outcome it does not know.
//
// The promise it keeps: it returns nil (a 2xx) only when every event of the
// delivery has a message sent for it, by this delivery or an earlier one, or
// a record already past RECEIVED. A duplicate that finds the record RECEIVED
// inside the re-enqueue grace cannot know that yet, so it fails the delivery
// with 503; past the grace it takes the enqueue over. Any failure leaves the
// events so that a later retry of the same delivery enqueues them: a claim
// whose write may have been applied is undone by its claim id, and if the
// undo fails too, the retry takes the enqueue over once the grace has passed.
//
// A delivery of more than [waveEvents] events is admitted in waves, each
// claimed and sent before the next starts, and no wave starts that would
// not end within the budget: what one attempt hands off is on its way even
// when the budget cannot cover the whole delivery. Its progress is saved
// (see [store.Progress]) before a 503 answers it, so the platform's retry
// claims only what no attempt handed off yet: every retry does less than
// the one before, and a delivery of any size under the body limit is
// answered 200 in the end.
//
// The budget runs from budgetStart (the events parsed), but the first wave
// has a budget of its own from its start (see [Handler.firstWave]): an
// attempt whose preparation (the events checked, the delivery's progress
// read) took the claims' share of the budget on a starved CPU still claims
// and sends one wave, so every attempt makes progress.
func (h *Handler) admit(ctx context.Context, budgetStart time.Time, req *webhook.Request, meta Meta, events []webhook.Event) error {
	outer := ctx
	ctx, cancel := context.WithDeadline(ctx, budgetStart.Add(h.cfg.Budget))
	defer cancel()
	items, err := h.prepare(req, meta, events)
	if err != nil {
		return err
	}
	h.cfg.Metrics.Count(MetricReceived, len(items))

	start := h.cfg.Now()
	if h.cfg.HandedOff != nil {
		hits := 0
		for i := range items {
			it := &items[i]
			it.cached = h.cfg.HandedOff.HandedOff(it.new.Key, it.new.PayloadHash, start)
			if it.cached {
				hits++
			}
		}
		h.cfg.Metrics.Count(MetricHandedOffHit, hits)
		h.cfg.Metrics.Count(MetricHandedOffMiss, len(items)-hits)
		h.flights.join(items)
	}
	var prog *progress
	if len(items) > waveEvents {
		// The progress read is bounded by the budget or, when less of it is
		// left, by a budget of its own: on a starved CPU, a read given up
		// would have the first wave claim again what earlier attempts
		// handed off, and make no progress.
		pctx, pcancel := context.WithDeadline(outer, later(budgetStart.Add(h.cfg.Budget), time.Now().Add(h.cfg.Budget)))
		prog = h.loadProgress(pctx, req, items)
		pcancel()
	}
	var out waveOutcome
	// No claim starts in the budget's last quarter, kept for sending what
	// was claimed; no wave starts that would not end by then. (The budget
	// is wall-clock time, as ctx's deadline, whatever Config.Now says.)
	claimBy := h.claimBy(ctx)
	wctx := ctx // the context of the waves after the first
	// Waves after the first start only while the budget lasts, each sized
	// to end by claimBy at 1.5 × the slowest claim rate seen so far (a wave
	// of fewer than minWave events is not worth starting).
	var perEvent time.Duration
	ran := 0
	for from := 0; from < len(items); ran++ {
		n := waveEvents
		if ran > 0 {
			if out.failed() || perEvent <= 0 {
				break
			}
			n = min(n, int(time.Until(claimBy)/(perEvent*3/2)))
			if n < minWave {
				break
			}
		}
		to, claims := nextWave(items, from, n)
		t0 := time.Now()
		if ran == 0 {
			// The preparation does not count against the waves: those
			// after the first may start until three quarters of Budget
			// from the first wave's start (the invocation's deadline, less
			// an UndoTimeout, still bounds them).
			claimBy = later(claimBy, t0.Add(h.cfg.Budget-h.cfg.Budget/4))
			if d, ok := outer.Deadline(); ok && d.Add(-h.cfg.UndoTimeout).Before(claimBy) {
				claimBy = later(h.claimBy(ctx), d.Add(-h.cfg.UndoTimeout))
			}
			if d, _ := ctx.Deadline(); claimBy.Add(h.cfg.Budget / 4).After(d) {
				var cancel context.CancelFunc
				wctx, cancel = context.WithDeadline(outer, claimBy.Add(h.cfg.Budget/4))
				defer cancel()
			}
			h.firstWave(outer, ctx, items[from:to], start, &out)
		} else {
			h.admitWave(wctx, items[from:to], start, claimBy, &out)
		}
		if claims > 0 {
			perEvent = max(perEvent, time.Since(t0)/time.Duration(claims))
		}
		from = to
	}
	// This delivery's own hand-offs are settled (those of the waves it did
	// not run are not on their way): tell the duplicates that wait for
	// them, before waiting for others (so two deliveries that wait for each
	// other's events cannot wait forever).
	h.flights.land(items)
	out.inFlight += h.awaitFlights(ctx, items)
	left := 0
	for i := range items {
		if !items[i].onItsWay {
			left++
		}
	}
	if prog != nil && left > 0 {
		h.saveProgress(ctx, prog, items)
	}
	switch {
	case out.sendErr != nil:
		return out.sendErr
	case len(out.errs) > 0:
		err := errors.Join(out.errs...)
		if isClientError(err) {
			return fmt.Errorf("intake: claim: %w", err)
		}
		return fmt.Errorf("intake: claim: %w: %w", errUnavailable, err)
	case out.inFlight > 0:
		return fmt.Errorf("intake: %d event(s) still being handed off by another delivery: %w", out.inFlight, errUnavailable)
	case left > 0:
		h.cfg.Metrics.Count(MetricLeftForRetry, left)
		return fmt.Errorf("intake: %d of %d events left for a retry: the budget ran out after %d wave(s): %w",
			left, len(items), ran, errUnavailable)
	}
	return nil
}

// later returns the later of a and b.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// claimBy is when claims stop under ctx's deadline: no claim starts in
// the budget's last quarter, kept for sending what was claimed. (The
// budget is wall-clock time, as ctx's deadline, whatever Config.Now says.)
func (h *Handler) claimBy(ctx context.Context) time.Time {
	claimBy := time.Now().Add(h.cfg.Budget - h.cfg.Budget/4)
	if d, ok := ctx.Deadline(); ok && d.Before(claimBy.Add(h.cfg.Budget/4)) {
		claimBy = d.Add(-h.cfg.Budget / 4)
	}
	return claimBy
}

// firstWave admits the delivery's first wave on a budget of its own: twice
// Budget from the wave's start (its claims until a quarter of Budget before
// its end), capped by the invocation's deadline (the function's Timeout, 4 s
// on AWS) less an UndoTimeout kept for saving the progress after it, and
// never less than what is left of the delivery's budget. So an attempt
// claims and sends a wave whatever its preparation cost and however slow
// its claims: a 256 MB Lambda has a fraction of a core, and on a loaded CPU
// checking thousands of events and reading the delivery's progress could
// use up the claims' three quarters of the budget, leaving every claim
// skipped and the platform's retries, each as slow, with no progress.
//
// The price is the answer's time, not its correctness: the wave may end
// after the platform's timeout (LINE's 2 s), which then retries, and what
// the wave handed off is on its way and in the saved progress, so the
// retry does less. Claims cut by the wave's deadline are undone, as any
// claim whose context ended.
func (h *Handler) firstWave(outer, budgeted context.Context, items []admitted, start time.Time, out *waveOutcome) {
	own := time.Now().Add(2 * h.cfg.Budget)
	if d, ok := outer.Deadline(); ok && d.Add(-h.cfg.UndoTimeout).Before(own) {
		own = d.Add(-h.cfg.UndoTimeout)
	}
	if d, ok := budgeted.Deadline(); ok && !own.After(d) {
		h.admitWave(budgeted, items, start, h.claimBy(budgeted), out)
		return
	}
	ctx, cancel := context.WithDeadline(outer, own)
	defer cancel()
	h.admitWave(ctx, items, start, later(own.Add(-h.cfg.Budget/4), h.claimBy(budgeted)), out)
}

// waveOutcome gathers what went wrong in the waves of one delivery.
type waveOutcome struct {
	sendErr  error   // an SQS send failed
	errs     []error // claims or take-overs that failed
	inFlight int     // events another delivery may still be sending
}

// failed reports whether a dependency failed: no further wave starts.
func (o *waveOutcome) failed() bool { return o.sendErr != nil || len(o.errs) > 0 }

// admitWave claims items concurrently (none after claimBy: those are left
// for a retry), sends the new ones (and those it took over), and undoes the
// claims it could not send or whose outcome it does not know; it adds what
// went wrong to out.
func (h *Handler) admitWave(ctx context.Context, items []admitted, start, claimBy time.Time, out *waveOutcome) {
	h.forEach(len(items), func(i int) {
		it := &items[i]
		if !it.needsClaim() {
			return
		}
		if ctx.Err() != nil || time.Now().After(claimBy) {
			it.skipped = true // left for the platform's retry: nothing was written.
			return
		}
		it.res, it.err = h.cfg.Store.Claim(ctx, it.new, h.cfg.DedupWindow)
		if it.err != nil || it.res.Outcome == store.Claimed {
			return
		}
		rec := it.res.Record
		if it.res.Outcome == store.Duplicate && !it.res.Counted {
			h.countDelivery(ctx, it, claimBy) // the claim could not count it
		}
		if rec.Status != webhook.StatusReceived {
			return // past RECEIVED: on its way.
		}
		if h.cfg.Now().Sub(time.UnixMilli(rec.EnqueuedAt)) < h.cfg.ReenqueueGrace {
			it.inFlight = true
			return
		}
		it.prevEnq = rec.EnqueuedAt
		it.resend, it.err = h.cfg.Store.TakeOverEnqueue(ctx, rec, h.cfg.ReenqueueGrace)
		if it.err == nil && !it.resend && (rec.Status == webhook.StatusReceived || rec.Status == "") {
			it.inFlight = true // another duplicate took it over, or its claim was undone.
		}
	})

	envs := make([]webhook.Envelope, 0, len(items))
	sendIdx := make([]int, 0, len(items))
	var undo []int
	fromProgress := 0
	for i := range items {
		it := &items[i]
		switch {
		case it.awaits != nil:
			// Its outcome is the other delivery's: see admit.
		case it.skipped:
			// Not claimed: the retry claims it.
		case it.fromProgress:
			it.onItsWay = true
			fromProgress++
		case it.cached:
			it.onItsWay = true
			h.cfg.Metrics.Count(MetricDuplicate, 1)
			h.logEvent(ctx, slog.LevelInfo, it, "duplicate delivery acknowledged",
				slog.String("answered_from", "hand-off cache"))
		case it.err != nil:
			h.logEvent(ctx, slog.LevelError, it, "claim failed", slog.Any("error", it.err))
			out.errs = append(out.errs, it.err)
			if it.res.Record != nil && it.res.Outcome == 0 { // the write may have been applied.
				undo = append(undo, i)
			}
		case it.res.Outcome == store.Claimed:
			it.onItsWay = true // unless its send fails
			h.logEvent(ctx, slog.LevelInfo, it, "event claimed")
			envs = append(envs, it.res.Record.Envelope())
			sendIdx = append(sendIdx, i)
		case it.resend:
			it.onItsWay = true // unless its send fails
			h.cfg.Metrics.Count(outcomeMetric(it.res.Outcome), 1)
			h.cfg.Metrics.Count(MetricReenqueued, 1)
			h.logEvent(ctx, slog.LevelWarn, it, "record still RECEIVED past the grace period: this delivery re-enqueues it",
				slog.String("claim", it.res.Outcome.String()))
			envs = append(envs, it.res.Record.Envelope())
			sendIdx = append(sendIdx, i)
		case it.inFlight:
			out.inFlight++
			h.cfg.Metrics.Count(MetricInFlight, 1)
			h.logEvent(ctx, slog.LevelInfo, it, "record RECEIVED and maybe still being sent by another delivery: answering 503 so the platform retries",
				slog.String("claim", it.res.Outcome.String()))
		case it.res.Outcome == store.Conflict:
			it.onItsWay = true
			h.cfg.Metrics.Count(MetricConflict, 1)
			h.logEvent(ctx, slog.LevelWarn, it, "same key, different payload: not processed again",
				slog.String("stored_payload_hash", it.res.Record.PayloadHash), slog.String("payload_hash", it.ev.PayloadHash))
		default:
			it.onItsWay = true
			h.cfg.Metrics.Count(MetricDuplicate, 1)
			h.logEvent(ctx, slog.LevelInfo, it, "duplicate delivery acknowledged",
				slog.String(obs.KeyStatus, string(it.res.Record.Status)))
		}
	}
	if fromProgress > 0 {
		h.cfg.Metrics.Count(MetricDuplicate, fromProgress)
		h.cfg.Logger.InfoContext(ctx, "events an earlier attempt of this delivery handed off acknowledged",
			slog.Int("events", fromProgress), slog.String("answered_from", "delivery progress"))
	}
	if len(envs) > 0 {
		if err := h.cfg.Queue.Send(ctx, envs); err != nil {
			failed := allOf(len(envs))
			var se *queue.SendError
			if errors.As(err, &se) {
				failed = se.Failed
			}
			h.cfg.Metrics.Count(MetricEnqueued, len(envs)-len(failed))
			for _, f := range failed {
				undo = append(undo, sendIdx[f])
				items[sendIdx[f]].onItsWay = false
			}
			out.sendErr = fmt.Errorf("intake: enqueue: %w: %w", errUnavailable, err)
		} else {
			h.cfg.Metrics.Count(MetricEnqueued, len(envs))
		}
		h.rememberHandedOff(items, sendIdx, start)
	}
	if len(undo) > 0 {
		h.undo(ctx, items, undo)
	}
	h.flights.land(items)
}

// countDelivery records on the record a duplicate delivery that reached
// the table and that its claim did not count (see [store.Table.Claim] and
// [store.Table.CountDelivery]): one more write, made only while the
// claims' part of the budget lasts. It is what operators see,
// not what the answer depends on: a failure is logged and counted
// (MetricDeliveryNotCounted), never answered with an error.
func (h *Handler) countDelivery(ctx context.Context, it *admitted, claimBy time.Time) {
	if time.Now().After(claimBy) {
		h.cfg.Metrics.Count(MetricDeliveryNotCounted, 1)
		return
	}
	if _, err := h.cfg.Store.CountDelivery(ctx, it.res.Record); err != nil {
		h.cfg.Metrics.Count(MetricDeliveryNotCounted, 1)
		h.logEvent(ctx, slog.LevelWarn, it, "duplicate delivery not counted on the record", slog.Any("error", err))
	}
}

// awaitFlights waits for the hand-offs in this instance that items await
// and returns how many did not end on their way (or did not end within
// ctx): those get the 503 a duplicate inside the grace gets.
func (h *Handler) awaitFlights(ctx context.Context, items []admitted) int {
	failed := 0
	for i := range items {
		it := &items[i]
		if it.awaits == nil {
			continue
		}
		select {
		case <-it.awaits.done:
			it.onItsWay = it.awaits.onItsWay
		case <-ctx.Done():
		}
		h.flights.waiters.Add(-1)
		if it.onItsWay {
			h.cfg.Metrics.Count(MetricDuplicate, 1)
			h.cfg.Metrics.Count(MetricCoalesced, 1)
			h.logEvent(ctx, slog.LevelInfo, it, "duplicate delivery acknowledged",
				slog.String("answered_from", "a concurrent hand-off in this instance"))
			continue
		}
		failed++
		h.cfg.Metrics.Count(MetricInFlight, 1)
		h.logEvent(ctx, slog.LevelInfo, it, "a concurrent delivery to this instance could not hand the event off: answering 503 so the platform retries")
	}
	return failed
}

// rememberHandedOff adds the sent events whose message the queue accepted
// (items[i] for i in sendIdx, still onItsWay) to the hand-off cache, until
// HandedOffTTL after start, a time before their claim or take-over set the
// record's enqueuedAt: the entries expire before the re-enqueue grace does.
func (h *Handler) rememberHandedOff(items []admitted, sendIdx []int, start time.Time) {
	if h.cfg.HandedOff == nil {
		return
	}
	now, expires := h.cfg.Now(), start.Add(h.cfg.HandedOffTTL)
	for _, i := range sendIdx {
		if items[i].onItsWay {
			h.cfg.HandedOff.Add(items[i].new.Key, items[i].new.PayloadHash, now, expires)
		}
	}
}

// isClientError reports whether every error in err's tree that decides the
// status is the client's (DynamoDB refused the event itself), and none is
// an unavailable dependency.
func isClientError(err error) bool {
	var joined interface{ Unwrap() []error }
	if errors.As(err, &joined) {
		for _, e := range joined.Unwrap() {
			if !isClientError(e) {
				return false
			}
		}
		return true
	}
	return errors.Is(err, webhook.ErrMalformed) || errors.Is(err, webhook.ErrTooLarge)
}

// outcomeMetric names the metric of a claim outcome that was not new.
func outcomeMetric(o store.ClaimOutcome) string {
	if o == store.Conflict {
		return MetricConflict
	}
	return MetricDuplicate
}

// logEvent logs one line about one event, with its key and type. It costs
// nothing when the level is disabled.
func (h *Handler) logEvent(ctx context.Context, level slog.Level, it *admitted, msg string, attrs ...slog.Attr) {
	if !h.cfg.Logger.Enabled(ctx, level) {
		return
	}
	attrs = append(attrs, slog.String(obs.KeyEventKey, it.new.Key), slog.String(obs.KeyEventType, it.ev.Type))
	h.cfg.Logger.LogAttrs(ctx, level, msg, attrs...)
}

// undo releases, concurrently, the claims (or take-overs) of items[idx]:
// those whose envelopes were not sent, and those whose claim failed with an
// unknown outcome. It runs on a context that survives the request's budget
// running out, for at most UndoTimeout. A claim it cannot undo stays
// RECEIVED, and the platform's retry takes the enqueue over once the grace
// has passed (or the sweeper re-enqueues it).
func (h *Handler) undo(ctx context.Context, items []admitted, idx []int) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), h.cfg.UndoTimeout)
	defer cancel()
	h.forEach(len(idx), func(j int) {
		it := &items[idx[j]]
		if it.resend {
			if err := h.cfg.Store.RevertEnqueue(ctx, it.res.Record, it.prevEnq); err != nil {
				h.logEvent(ctx, slog.LevelError, it, "could not revert re-enqueue take-over", slog.Any("error", err))
			}
			return
		}
		deleted, err := h.cfg.Store.Unclaim(ctx, it.res.Record)
		switch {
		case err != nil:
			h.logEvent(ctx, slog.LevelError, it, "could not undo claim; a retry after the grace period or the sweeper will enqueue it", slog.Any("error", err))
		case !deleted:
			h.logEvent(ctx, slog.LevelInfo, it, "claim absent or moved on before undo; left in place")
		default:
			h.logEvent(ctx, slog.LevelInfo, it, "claim undone")
		}
	})
}

// forEach runs fn(0..n-1) on up to ClaimWorkers goroutines.
func (h *Handler) forEach(n int, fn func(int)) {
	if n == 1 {
		fn(0)
		return
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, h.cfg.ClaimWorkers)
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			fn(i)
		})
	}
	wg.Wait()
}

func allOf(n int) []int {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	return idx
}

// newID returns a random trace ID: 26 base32 characters (crypto/rand.Text).
func newID() string {
	return rand.Text()
}

// ServeHTTP serves Route (and EventsRoute with Config.Events); anything else is 404.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mux.ServeHTTP(w, r)
}

func (h *Handler) serveWebhook(w http.ResponseWriter, r *http.Request) {
	defer func() { _ = h.cfg.Metrics.Flush() }()
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.cfg.MaxBody))
	req := &webhook.Request{
		Method:   r.Method,
		Provider: r.PathValue("provider"),
		Tenant:   r.PathValue("tenant"),
		Query:    r.URL.Query(),
		Header:   r.Header,
		Body:     body,
	}
	meta := Meta{RequestID: r.Header.Get("X-Request-Id"), TraceID: r.Header.Get("X-Amzn-Trace-Id")}
	if meta.RequestID == "" {
		meta.RequestID = newID()
	}
	if err != nil {
		var mbe *http.MaxBytesError
		if !errors.As(err, &mbe) {
			http.Error(w, "Bad Request", http.StatusBadRequest)
			return
		}
		writeReply(w, h.errorReply(r.Context(), fmt.Errorf("intake: over %d bytes: %w", mbe.Limit, webhook.ErrTooLarge)))
		return
	}
	writeReply(w, h.Receive(r.Context(), req, meta))
}

func writeReply(w http.ResponseWriter, reply webhook.Reply) {
	if reply.ContentType != "" {
		w.Header().Set("Content-Type", reply.ContentType)
	}
	status := reply.Status
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	_, _ = w.Write(reply.Body)
}

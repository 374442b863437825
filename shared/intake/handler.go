package intake

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

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
	RevertEnqueue(ctx context.Context, rec *store.Record, prev int64) error
}

// Queue is what intake needs of the main queue (queue.Queue satisfies it).
// Send returns nil, or an error naming the envelopes not sent (*queue.SendError).
type Queue interface {
	Send(ctx context.Context, envs []webhook.Envelope) error
}

// Defaults of Config.
const (
	DefaultDedupWindow    = 7 * 24 * time.Hour
	DefaultReenqueueGrace = 30 * time.Second
	DefaultMaxBody        = 1 << 20
	DefaultBudget         = 1500 * time.Millisecond
	undoTimeout           = time.Second
	defaultClaimWorkers   = 16
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
	// ReenqueueGrace is how long a record may stay RECEIVED before a duplicate
	// delivery re-enqueues it (optional; default 30 s; keep it above the
	// receiver's timeout).
	ReenqueueGrace time.Duration
	// MaxBody is the largest accepted body in bytes (optional; default 1 MiB).
	MaxBody int64
	// Budget bounds the DynamoDB and SQS work of one delivery (optional;
	// default 1.5 s), so that a slow dependency gets a 503 before the platform
	// times out (LINE waits 2 s, WeCom and WeChat 5 s) and retries on its own.
	Budget time.Duration
	// Now is the clock (optional; default time.Now).
	Now func() time.Time
}

// Handler is the receiver core. It is safe for concurrent use.
type Handler struct {
	cfg Config
	mux *http.ServeMux
}

// New returns a Handler for cfg.
func New(cfg Config) (*Handler, error) {
	if cfg.Parsers == nil || cfg.Store == nil || cfg.Queue == nil {
		return nil, errors.New("intake: Parsers, Store and Queue are required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.DedupWindow <= 0 {
		cfg.DedupWindow = DefaultDedupWindow
	}
	if cfg.ReenqueueGrace <= 0 {
		cfg.ReenqueueGrace = DefaultReenqueueGrace
	}
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = DefaultMaxBody
	}
	if cfg.Budget <= 0 {
		cfg.Budget = DefaultBudget
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	h := &Handler{cfg: cfg, mux: http.NewServeMux()}
	h.mux.HandleFunc(Route, h.serveWebhook)
	return h, nil
}

// Route is the webhook route, as an http.ServeMux pattern.
const Route = "/webhooks/{provider}/{tenant}"

// Meta carries what the transport knows of a request beyond its content.
type Meta struct {
	RequestID string
	TraceID   string
}

// errUnavailable marks failures of DynamoDB or SQS: the platform should retry.
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
			return "StaleTimestamp"
		}
		return "BadSignature"
	case http.StatusBadRequest:
		return "Malformed"
	case http.StatusNotFound:
		return "UnknownRoute"
	case http.StatusMethodNotAllowed:
		return "MethodNotAllowed"
	case http.StatusRequestEntityTooLarge:
		return "TooLarge"
	default:
		return "Unavailable"
	}
}

// Receive handles one delivery and returns the reply to send: the provider's
// reply, or an error reply whose status comes from StatusFor.
func (h *Handler) Receive(ctx context.Context, req *webhook.Request, meta Meta) webhook.Reply {
	start := h.cfg.Now()
	if meta.TraceID == "" {
		meta.TraceID = newID()
	}
	ctx = obs.WithAttrs(ctx,
		slog.String(obs.KeyRequestID, meta.RequestID), slog.String(obs.KeyTraceID, meta.TraceID),
		slog.String(obs.KeyProvider, req.Provider), slog.String(obs.KeyTenant, req.Tenant))
	reply, err := h.receive(ctx, req, meta)
	h.cfg.Metrics.Duration("ReceiverLatency", h.cfg.Now().Sub(start))
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
	h.cfg.Metrics.Count("Rejected", 1)
	h.cfg.Metrics.Count("Rejected"+rejectReason(err), 1)
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
	actx, cancel := context.WithTimeout(ctx, h.cfg.Budget)
	defer cancel()
	if err := h.admit(actx, req, meta, d.Events); err != nil {
		return webhook.Reply{}, err
	}
	return d.Reply, nil
}

// admitted is one event of the request and what its claim found.
type admitted struct {
	ev      *webhook.Event
	key     string
	res     store.ClaimResult
	err     error
	resend  bool  // a stale RECEIVED record this request took over
	prevEnq int64 // its enqueuedAt before the take-over
}

// admit claims every event concurrently, enqueues the new ones (and stale
// ones it took over) in batches, and undoes the claims it could not enqueue.
func (h *Handler) admit(ctx context.Context, req *webhook.Request, meta Meta, events []webhook.Event) error {
	items := make([]admitted, 0, len(events))
	var seen map[string]bool
	if len(events) > 1 {
		seen = make(map[string]bool, len(events))
	}
	for i := range events {
		key := webhook.Key(req.Provider, req.Tenant, events[i].DedupKey)
		if seen != nil {
			if seen[key] { // the same event twice in one body: one claim.
				continue
			}
			seen[key] = true
		}
		items = append(items, admitted{ev: &events[i], key: key})
	}
	h.cfg.Metrics.Count("Received", len(items))

	h.forEach(len(items), func(i int) {
		it := &items[i]
		it.res, it.err = h.cfg.Store.Claim(ctx, store.NewEvent{
			Key: it.key, Provider: req.Provider, Tenant: req.Tenant, EventType: it.ev.Type,
			OccurredAt: it.ev.OccurredAt, PayloadHash: it.ev.PayloadHash, Payload: it.ev.JSON,
			TraceID: meta.TraceID,
		}, h.cfg.DedupWindow)
		if it.err != nil || it.res.Outcome != store.Duplicate {
			return
		}
		rec := it.res.Record
		it.prevEnq = rec.EnqueuedAt
		it.resend, it.err = h.cfg.Store.TakeOverEnqueue(ctx, rec, h.cfg.ReenqueueGrace)
	})

	envs := make([]webhook.Envelope, 0, len(items))
	sendIdx := make([]int, 0, len(items))
	var errs []error
	for i := range items {
		it := &items[i]
		switch {
		case it.err != nil:
			h.logEvent(ctx, slog.LevelError, it, "claim failed", slog.Any("error", it.err))
			errs = append(errs, it.err)
		case it.res.Outcome == store.Claimed:
			h.logEvent(ctx, slog.LevelInfo, it, "event claimed")
			envs = append(envs, it.res.Record.Envelope())
			sendIdx = append(sendIdx, i)
		case it.res.Outcome == store.Conflict:
			h.cfg.Metrics.Count("Conflict", 1)
			h.logEvent(ctx, slog.LevelWarn, it, "same key, different payload: not processed again",
				slog.String("stored_payload_hash", it.res.Record.PayloadHash), slog.String("payload_hash", it.ev.PayloadHash))
		case it.resend:
			h.cfg.Metrics.Count("Duplicate", 1)
			h.cfg.Metrics.Count("Reenqueued", 1)
			h.logEvent(ctx, slog.LevelWarn, it, "duplicate found its record still RECEIVED past the grace period: re-enqueued")
			envs = append(envs, it.res.Record.Envelope())
			sendIdx = append(sendIdx, i)
		default:
			h.cfg.Metrics.Count("Duplicate", 1)
			h.logEvent(ctx, slog.LevelInfo, it, "duplicate delivery acknowledged",
				slog.String(obs.KeyStatus, string(it.res.Record.Status)))
		}
	}
	if len(envs) > 0 {
		if err := h.cfg.Queue.Send(ctx, envs); err != nil {
			failed := allOf(len(envs))
			var se *queue.SendError
			if errors.As(err, &se) {
				failed = se.Failed
			}
			h.cfg.Metrics.Count("Enqueued", len(envs)-len(failed))
			h.undo(ctx, items, sendIdx, failed)
			return fmt.Errorf("intake: enqueue: %w: %w", errUnavailable, err)
		}
		h.cfg.Metrics.Count("Enqueued", len(envs))
	}
	if len(errs) > 0 {
		return fmt.Errorf("intake: claim: %w: %w", errUnavailable, errors.Join(errs...))
	}
	return nil
}

// logEvent logs one line about one event, with its key and type. It costs
// nothing when the level is disabled.
func (h *Handler) logEvent(ctx context.Context, level slog.Level, it *admitted, msg string, attrs ...slog.Attr) {
	if !h.cfg.Logger.Enabled(ctx, level) {
		return
	}
	attrs = append(attrs, slog.String(obs.KeyEventKey, it.key), slog.String(obs.KeyEventType, it.ev.Type))
	h.cfg.Logger.LogAttrs(ctx, level, msg, attrs...)
}

// undo releases the claims (or take-overs) whose envelopes were not sent.
// It runs on a context that survives the request's budget running out, for
// at most undoTimeout: a claim it cannot undo is re-enqueued by the next
// duplicate after the grace period, or by the sweeper.
func (h *Handler) undo(ctx context.Context, items []admitted, sendIdx, failed []int) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), undoTimeout)
	defer cancel()
	for _, f := range failed {
		it := &items[sendIdx[f]]
		if it.resend {
			if err := h.cfg.Store.RevertEnqueue(ctx, it.res.Record, it.prevEnq); err != nil {
				h.logEvent(ctx, slog.LevelError, it, "could not revert re-enqueue take-over", slog.Any("error", err))
			}
			continue
		}
		deleted, err := h.cfg.Store.Unclaim(ctx, it.res.Record)
		switch {
		case err != nil:
			h.logEvent(ctx, slog.LevelError, it, "could not undo claim; a duplicate or the sweeper will re-enqueue it", slog.Any("error", err))
		case !deleted:
			h.logEvent(ctx, slog.LevelWarn, it, "claim moved on before undo; left in place")
		default:
			h.logEvent(ctx, slog.LevelInfo, it, "claim undone after enqueue failure")
		}
	}
}

// forEach runs fn(0..n-1) on up to defaultClaimWorkers goroutines.
func (h *Handler) forEach(n int, fn func(int)) {
	if n == 1 {
		fn(0)
		return
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, defaultClaimWorkers)
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

func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// ServeHTTP serves Route; anything else is 404.
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

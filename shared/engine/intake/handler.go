package intake

// The receiver core: what it needs of the table and the queue, its
// configuration and its construction. A request walks the stages in the
// files named after them: serve.go or apigateway.go (the transport),
// receive.go (route, tenant, verification), prepare.go (checks and
// canonical keys), admit.go (waves within the budget), claim.go
// (conditional writes), answer.go (each event's outcome), enqueue.go (the
// queue), undo.go (after a failure), handoff.go (answers from memory) and
// status.go (the reply's status).

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/hookwall/hookwall/shared/base/obs"
	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/engine/handoff"
	"github.com/hookwall/hookwall/shared/internal/kernel"
	"github.com/hookwall/hookwall/shared/state/audit"
	"github.com/hookwall/hookwall/shared/state/store"
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

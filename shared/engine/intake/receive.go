package intake

// The first stage: one delivery received, its size and method checked,
// its (provider, tenant) route resolved to a parser, which verifies and
// decrypts it; what it admits goes on to [Handler.admit].

import (
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/hookwall/hookwall/shared/base/obs"
	"github.com/hookwall/hookwall/shared/base/webhook"
)

// Meta carries what the transport knows of a request beyond its content.
type Meta struct {
	RequestID string
	TraceID   string
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

// newID returns a random trace ID: 26 base32 characters (crypto/rand.Text).
func newID() string {
	return rand.Text()
}

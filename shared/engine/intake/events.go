package intake

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"

	"github.com/aws/aws-lambda-go/events"

	"github.com/hookwall/hookwall/shared/base/obs"
	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/state/audit"
)

// EventsRoute is the events API route, as an http.ServeMux pattern and as
// API Gateway's route key: the audit view of one event ([audit.View]) as
// JSON. {key} is the event's own id, the last part of its key
// provider#tenant#id, percent-encoded. The template protects it with IAM
// authorization; it is never public.
const EventsRoute = "GET /events/{provider}/{tenant}/{key}"

// serveEvents serves EventsRoute over HTTP.
func (h *Handler) serveEvents(w http.ResponseWriter, r *http.Request) {
	writeReply(w, h.eventView(r.Context(), r.PathValue("provider"), r.PathValue("tenant"), r.PathValue("key"),
		r.Header.Get("X-Request-Id")))
}

// handleEventsAPIGateway serves EventsRoute behind API Gateway.
func (h *Handler) handleEventsAPIGateway(ctx context.Context, e events.APIGatewayV2HTTPRequest) events.APIGatewayV2HTTPResponse {
	var reply webhook.Reply
	if e.RequestContext.HTTP.Method != http.MethodGet {
		reply = jsonError(http.StatusMethodNotAllowed, "only GET")
	} else {
		// HTTP APIs deliver path parameters percent-decoded.
		p := e.PathParameters
		reply = h.eventView(ctx, p["provider"], p["tenant"], p["key"], e.RequestContext.RequestID)
	}
	return events.APIGatewayV2HTTPResponse{StatusCode: reply.Status, Body: string(reply.Body),
		Headers: map[string]string{"Content-Type": reply.ContentType}}
}

// eventView answers the audit view of provider#tenant#key: 200 with the
// view, 400 for a key that no event can have, 404 when there is no record
// (or it has expired), 503 when the table cannot be read.
func (h *Handler) eventView(ctx context.Context, provider, tenant, id, requestID string) webhook.Reply {
	if err := audit.CheckKey(provider, tenant, id); err != nil {
		return jsonError(http.StatusBadRequest, err.Error())
	}
	key := webhook.Key(provider, tenant, id)
	ctx = obs.WithAttrs(ctx, slog.String(obs.KeyRequestID, requestID), slog.String(obs.KeyEventKey, key))
	v, err := audit.Read(ctx, h.cfg.Events, key)
	switch {
	case err != nil:
		h.cfg.Logger.ErrorContext(ctx, "events API: read failed", slog.Any("error", err))
		return jsonError(http.StatusServiceUnavailable, "the events table could not be read; retry")
	case v == nil:
		return jsonError(http.StatusNotFound, "no event "+key+" (never received, or expired)")
	}
	body, err := json.Marshal(v)
	if err != nil {
		h.cfg.Logger.ErrorContext(ctx, "events API: encode failed", slog.Any("error", err))
		return jsonError(http.StatusInternalServerError, "the event could not be encoded")
	}
	h.cfg.Logger.InfoContext(ctx, "events API: event read", slog.String(obs.KeyStatus, string(v.Record.Status)))
	return webhook.Reply{Status: http.StatusOK, ContentType: "application/json", Body: body}
}

// jsonError is an events API error reply: {"error": msg}.
func jsonError(status int, msg string) webhook.Reply {
	body, _ := json.Marshal(map[string]string{"error": msg})
	return webhook.Reply{Status: status, ContentType: "application/json", Body: body}
}

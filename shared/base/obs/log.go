package obs

import (
	"context"
	"io"
	"log/slog"
	"strings"
)

// Log attribute keys shared by every function (snake_case, style.md §2.3).
const (
	KeyEventKey  = "event_key"
	KeyProvider  = "provider"
	KeyTenant    = "tenant"
	KeyEventType = "event_type"
	KeyTraceID   = "trace_id"
	KeyRequestID = "request_id"
	KeyStatus    = "status"
	KeyAttempt   = "attempt"
)

// ParseLevel maps LOG_LEVEL values (debug, info, warn, error; any case) to a
// slog level; anything else is info.
func ParseLevel(s string) slog.Level {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "debug":
		return slog.LevelDebug
	case "warn", "warning":
		return slog.LevelWarn
	case "error":
		return slog.LevelError
	default:
		return slog.LevelInfo
	}
}

// NewLogger returns a JSON logger writing to w at level, which adds the
// attributes stored in the context by WithAttrs to every record.
func NewLogger(w io.Writer, level slog.Level) *slog.Logger {
	return slog.New(contextHandler{slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level})})
}

type ctxAttrsKey struct{}

// WithAttrs returns a context whose log records (written with the *Context
// methods of a logger from NewLogger) carry attrs, after any already there.
func WithAttrs(ctx context.Context, attrs ...slog.Attr) context.Context {
	prev, _ := ctx.Value(ctxAttrsKey{}).([]slog.Attr)
	all := make([]slog.Attr, 0, len(prev)+len(attrs))
	all = append(append(all, prev...), attrs...)
	return context.WithValue(ctx, ctxAttrsKey{}, all)
}

type contextHandler struct{ slog.Handler }

func (h contextHandler) Handle(ctx context.Context, r slog.Record) error {
	if attrs, ok := ctx.Value(ctxAttrsKey{}).([]slog.Attr); ok {
		r.AddAttrs(attrs...)
	}
	return h.Handler.Handle(ctx, r)
}

func (h contextHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return contextHandler{h.Handler.WithAttrs(attrs)}
}

func (h contextHandler) WithGroup(name string) slog.Handler {
	return contextHandler{h.Handler.WithGroup(name)}
}

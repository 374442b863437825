package intake

// The HTTP transport: the route served as an http.Handler, a request
// turned into a webhook.Request and the reply written back.

import (
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/hookwall/hookwall/shared/base/webhook"
)

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

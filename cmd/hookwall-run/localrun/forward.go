package localrun

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hookwall/hookwall/shared/process"
	"github.com/hookwall/hookwall/shared/provider/standard"
)

// Forwarded is one request the forward target received: a line of the
// forwarded file.
type Forwarded struct {
	At             time.Time       `json:"at"`
	Method         string          `json:"method"`
	Path           string          `json:"path"`
	Key            string          `json:"key,omitempty"`
	IdempotencyKey string          `json:"idempotencyKey,omitempty"`
	WebhookID      string          `json:"webhookId,omitempty"`
	Signature      string          `json:"signature"` // ok, bad, none (no secret to check with)
	Body           json.RawMessage `json:"body"`
}

// ForwardTarget stands for "the business": it answers 200 to every request,
// checks the Standard Webhooks signature the forwarding handler puts on it
// (when Secret is set), logs a forwarded line and appends the request to a
// JSON-lines file.
type ForwardTarget struct {
	// Path is the forwarded file (appended to).
	Path string
	// Secret is the tenants' forward.secret, to check signatures with (optional).
	Secret string
	// Log receives one forwarded line per request (required).
	Log *slog.Logger

	mu sync.Mutex
}

// ServeHTTP records one forwarded request and answers 200.
func (f *ForwardTarget) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 8<<20))
	if err != nil {
		http.Error(w, "read body", http.StatusBadRequest)
		return
	}
	rec := Forwarded{At: time.Now().UTC(), Method: r.Method, Path: r.URL.Path,
		IdempotencyKey: r.Header.Get(process.HeaderIdempotencyKey), WebhookID: r.Header.Get(standard.IDHeader), Signature: "none"}
	var env struct {
		Key string `json:"key"`
	}
	if json.Unmarshal(body, &env) == nil {
		rec.Key = env.Key
	}
	rec.Body = rawJSON(body)
	if f.Secret != "" {
		rec.Signature = "bad"
		ts, _ := strconv.ParseInt(r.Header.Get(standard.TimestampHeader), 10, 64)
		if want, err := standard.Sign(f.Secret, rec.WebhookID, ts, body); err == nil {
			for _, got := range strings.Fields(r.Header.Get(standard.SignatureHeader)) {
				if got == want {
					rec.Signature = "ok"
				}
			}
		}
	}
	if err := appendJSONLines(&f.mu, f.Path, rec); err != nil {
		f.Log.ErrorContext(r.Context(), "forward target: record the request", slog.Any("error", err))
	}
	f.Log.LogAttrs(r.Context(), slog.LevelInfo, StageForwarded, slog.String(AttrStage, StageForwarded),
		slog.String("event_key", rec.Key), slog.String("idempotency_key", rec.IdempotencyKey),
		slog.String("signature", rec.Signature),
		slog.String(AttrDetail, fmt.Sprintf("%s %s reached the forward target (signature %s, Idempotency-Key %s) → 200",
			r.Method, r.URL.Path, rec.Signature, rec.IdempotencyKey)))
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"ok":true}`)
}

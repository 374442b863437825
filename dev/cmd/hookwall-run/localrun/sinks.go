package localrun

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hookwall/hookwall/shared/engine/process"
	"github.com/hookwall/hookwall/shared/protocol/provider/standard"
)

// The runner's two sinks stand for what AWS and the business would be: the
// local EventBridge endpoint, where the processor and the compensator
// publish outcomes, and the forward target, where the forwarding handler
// sends events. Each appends what it receives to a JSON-lines file.

// Outcome is one line of the outcomes file: an entry of a PutEvents call.
type Outcome struct {
	// ID is the event id the endpoint answered.
	ID string `json:"id"`
	// ReceivedAt is when the endpoint received it.
	ReceivedAt time.Time `json:"receivedAt"`
	// Time is the entry's own Time, if set.
	Time       *time.Time      `json:"time,omitempty"`
	Bus        string          `json:"bus"`
	Source     string          `json:"source"`
	DetailType string          `json:"detailType"`
	Resources  []string        `json:"resources,omitempty"`
	Detail     json.RawMessage `json:"detail"`
}

// EventBridge is a PutEvents endpoint (AWS JSON 1.1, X-Amz-Target
// AWSEvents.PutEvents) for the real EventBridge client: it appends every
// entry to a JSON-lines file and answers FailedEntryCount 0 with an event id
// per entry. Any other operation answers 400 UnknownOperationException.
type EventBridge struct {
	// Path is the outcomes file (appended to).
	Path string
	// Log receives one "outcome" line per entry (optional).
	Log *slog.Logger

	mu sync.Mutex
}

// putEventsRequest is the part of the PutEvents input the endpoint reads.
type putEventsRequest struct {
	Entries []struct {
		EventBusName string
		Source       string
		DetailType   string
		Detail       string
		Resources    []string
		Time         *float64 // epoch seconds on the wire
	}
}

// ServeHTTP answers one PutEvents call.
func (e *EventBridge) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	target := r.Header.Get("X-Amz-Target")
	if r.Method != http.MethodPost || target != "AWSEvents.PutEvents" {
		awsJSONError(w, http.StatusBadRequest, "UnknownOperationException", "only AWSEvents.PutEvents is served here, got "+target)
		return
	}
	var in putEventsRequest
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&in); err != nil {
		awsJSONError(w, http.StatusBadRequest, "SerializationException", err.Error())
		return
	}
	now := time.Now().UTC()
	lines := make([]Outcome, len(in.Entries))
	ids := make([]map[string]string, len(in.Entries))
	for i, en := range in.Entries {
		o := Outcome{ID: newEventID(), ReceivedAt: now, Bus: en.EventBusName, Source: en.Source,
			DetailType: en.DetailType, Resources: en.Resources}
		if en.Time != nil {
			t := time.Unix(0, int64(*en.Time*1e9)).UTC()
			o.Time = &t
		}
		o.Detail = rawJSON([]byte(en.Detail))
		lines[i] = o
		ids[i] = map[string]string{"EventId": o.ID}
	}
	if err := appendJSONLines(&e.mu, e.Path, lines...); err != nil {
		awsJSONError(w, http.StatusInternalServerError, "InternalException", "outcomes file: "+err.Error())
		return
	}
	for _, o := range lines {
		e.logOutcome(r.Context(), o)
	}
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	_ = json.NewEncoder(w).Encode(map[string]any{"FailedEntryCount": 0, "Entries": ids})
}

func (e *EventBridge) logOutcome(ctx context.Context, o Outcome) {
	if e.Log == nil {
		return
	}
	var d struct {
		Key    string `json:"key"`
		Status string `json:"status"`
	}
	_ = json.Unmarshal(o.Detail, &d)
	e.Log.LogAttrs(ctx, slog.LevelInfo, "outcome", slog.String(AttrStage, StageOutcome),
		slog.String("event_key", d.Key), slog.String("status", d.Status),
		slog.String("detail_type", o.DetailType), slog.String("bus", o.Bus),
		slog.String(AttrDetail, o.DetailType+" on bus "+o.Bus+" → "+e.Path))
}

func awsJSONError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	w.Header().Set("X-Amzn-ErrorType", code)
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"__type": code, "message": msg})
}

// newEventID returns a random id shaped like EventBridge's (a UUID).
func newEventID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

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

// appendJSONLines appends values, one JSON line each (HTML characters as
// they are), to the file at path (created if absent) in one write, under mu:
// the writers of one file share it.
func appendJSONLines[T any](mu *sync.Mutex, path string, values ...T) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	for _, v := range values {
		if err := enc.Encode(v); err != nil {
			return err
		}
	}
	mu.Lock()
	defer mu.Unlock()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(b.Bytes())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// rawJSON returns b when it is valid JSON, else b as a JSON string, so that
// a line always holds what was received.
func rawJSON(b []byte) json.RawMessage {
	if json.Valid(b) {
		return b
	}
	s, _ := json.Marshal(string(b)) // a string always encodes
	return s
}

package localrun

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"
)

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

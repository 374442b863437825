package audit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/protocol/providers"
	"github.com/hookwall/hookwall/shared/state/store"
)

// Reader reads what a View shows (store.Table and memstore.Store satisfy it).
type Reader interface {
	// Get returns the record of key, nil if there is none or it has expired.
	Get(ctx context.Context, key string) (*store.Record, error)
	// Steps returns the journal entries of key written under claimID.
	Steps(ctx context.Context, key, claimID string) ([]webhook.JournalEntry, error)
}

// View is one event as operators see it. Its JSON is the events API's body.
type View struct {
	Record  Record    `json:"record"`
	Steps   []Step    `json:"steps"`
	History []History `json:"history"`
	// Calls are the newest outside calls its handlers made, oldest first
	// (the record keeps [webhook.MaxCalls]); CallCount counts them all.
	Calls     []Call `json:"calls"`
	CallCount int64  `json:"callCount"`
	// HistoryDropped counts the oldest transitions no longer in History
	// (the record keeps only the newest).
	HistoryDropped int `json:"historyDropped"`
}

// Record is the event record. Times are RFC 3339 in UTC; absent ones are omitted.
type Record struct {
	Key           string         `json:"key"`
	Provider      string         `json:"provider"`
	Tenant        string         `json:"tenant"`
	EventType     string         `json:"eventType"`
	Status        webhook.Status `json:"status"`
	Version       int64          `json:"version"`
	Attempts      int64          `json:"attempts"`
	Compensations int64          `json:"compensations,omitempty"`
	// GivenBack counts the attempts given back for a call that opened its
	// target's breaker (at most 1: docs/OPERATIONS.md, "A poison event is
	// not an outage").
	GivenBack   int64           `json:"givenBack,omitempty"`
	OccurredAt  *time.Time      `json:"occurredAt,omitempty"`
	ReceivedAt  *time.Time      `json:"receivedAt,omitempty"`
	EnqueuedAt  *time.Time      `json:"enqueuedAt,omitempty"`
	UpdatedAt   *time.Time      `json:"updatedAt,omitempty"`
	ExpiresAt   *time.Time      `json:"expiresAt,omitempty"`
	LeaseOwner  string          `json:"leaseOwner,omitempty"`
	LeaseUntil  *time.Time      `json:"leaseUntil,omitempty"`
	LastError   string          `json:"lastError,omitempty"`
	TraceID     string          `json:"traceId,omitempty"`
	ClaimID     string          `json:"claimId"`
	PayloadHash string          `json:"payloadHash"`
	Payload     json.RawMessage `json:"payload"`
	// PayloadMissing says the record's payload item is gone (Payload is
	// null): the event could never be processed, and the sweeper ends it
	// DEAD.
	PayloadMissing bool `json:"payloadMissing,omitempty"`
	// Deliveries counts the deliveries of the event that reached the table,
	// the first included; LastDeliveryAt is the latest one's time.
	// Duplicates a receiver answered from its hand-off cache (no AWS call)
	// are not in it: the receiver's Duplicate and HandedOffCacheHit metrics
	// count them.
	Deliveries     int64      `json:"deliveries"`
	LastDeliveryAt *time.Time `json:"lastDeliveryAt,omitempty"`
}

// Call is one outside HTTP call a handler made for the event.
type Call struct {
	At     time.Time `json:"at"`
	Target string    `json:"target"`
	// Status is the HTTP status answered, 0 when no answer came (see Error).
	Status    int    `json:"status"`
	LatencyMs int64  `json:"latencyMs"`
	Error     string `json:"error,omitempty"`
	// Snippet is the start of the body of an answer other than 2xx.
	Snippet string `json:"snippet,omitempty"`
}

// Step is one journal entry of the current claim.
type Step struct {
	Handler string `json:"handler"`
	Step    string `json:"step"`
	// Undo is true for a compensation step ("$undo:<forward step>").
	Undo        bool            `json:"undo,omitempty"`
	CompletedAt time.Time       `json:"completedAt"`
	Result      json.RawMessage `json:"result,omitempty"`
	// Run is the step's run (an undo's: the run it undid), absent for 0:
	// a step undone by a compensation runs again as run 1, 2, … when its
	// event is replayed (webhook.JournalEntry.Run).
	Run int `json:"run,omitempty"`
}

// UndoPrefix starts the step name of a compensation step.
const UndoPrefix = "$undo:"

// History is one transition of the record, oldest first.
type History struct {
	Version  int64          `json:"version"`
	At       time.Time      `json:"at"`
	From     webhook.Status `json:"from,omitempty"`
	To       webhook.Status `json:"to"`
	Attempt  int            `json:"attempt"`
	Owner    string         `json:"owner,omitempty"`
	Error    string         `json:"error,omitempty"`
	Function string         `json:"fn,omitempty"`
}

// Read returns the view of key: one strongly consistent read of the record,
// then one query of its current claim's steps. It returns nil, nil when
// there is no record (or it has expired). A record whose payload item is
// gone is shown without it (PayloadMissing).
func Read(ctx context.Context, r Reader, key string) (*View, error) {
	rec, err := r.Get(ctx, key)
	missing := errors.Is(err, store.ErrPayloadMissing) && rec != nil
	if (err != nil && !missing) || rec == nil {
		return nil, err
	}
	var steps []webhook.JournalEntry
	if rec.ClaimID != "" {
		if steps, err = r.Steps(ctx, key, rec.ClaimID); err != nil {
			return nil, err
		}
	}
	v := New(rec, steps)
	v.Record.PayloadMissing = missing
	return v, nil
}

// New returns the view of rec and the journal entries of its claim.
func New(rec *store.Record, steps []webhook.JournalEntry) *View {
	v := &View{
		Record: Record{
			Key: rec.Key, Provider: rec.Provider, Tenant: rec.Tenant, EventType: rec.EventType,
			Status: rec.Status, Version: rec.Version, Attempts: rec.Attempts, Compensations: rec.Compensations, GivenBack: rec.GivenBack,
			OccurredAt: millis(rec.OccurredAt), ReceivedAt: millis(rec.ReceivedAt), EnqueuedAt: millis(rec.EnqueuedAt),
			UpdatedAt: millis(rec.UpdatedAt), LeaseOwner: rec.LeaseOwner, LeaseUntil: millis(rec.LeaseUntil),
			LastError: rec.LastError, TraceID: rec.TraceID, ClaimID: rec.ClaimID, PayloadHash: rec.PayloadHash,
			Payload: asJSON(rec.Payload), Deliveries: rec.DeliveryCount(), LastDeliveryAt: millis(rec.LastDelivery()),
		},
		Calls:          make([]Call, 0, len(rec.Calls)),
		CallCount:      rec.CallCount,
		Steps:          make([]Step, 0, len(steps)),
		History:        make([]History, 0, len(rec.History)),
		HistoryDropped: rec.HistoryDropped(),
	}
	if rec.ExpiresAt > 0 {
		t := time.Unix(rec.ExpiresAt, 0).UTC()
		v.Record.ExpiresAt = &t
	}
	for _, s := range steps {
		v.Steps = append(v.Steps, Step{Handler: s.Handler, Step: s.Step, Undo: strings.HasPrefix(s.Step, UndoPrefix),
			CompletedAt: s.CompletedAt.UTC(), Result: asJSON(s.Result), Run: s.Run})
	}
	slices.SortStableFunc(v.Steps, func(a, b Step) int { return a.CompletedAt.Compare(b.CompletedAt) })
	for _, c := range rec.Calls {
		v.Calls = append(v.Calls, Call{At: c.At.UTC(), Target: c.Target, Status: c.Status, LatencyMs: c.Latency.Milliseconds(),
			Error: c.Error, Snippet: c.Snippet})
	}
	for _, h := range rec.History {
		v.History = append(v.History, History{Version: h.Version, At: h.At.UTC(), From: h.From, To: h.To,
			Attempt: h.Attempt, Owner: h.Owner, Error: h.Error, Function: h.Function})
	}
	return v
}

// millis converts epoch milliseconds to a UTC time, nil for 0.
func millis(ms int64) *time.Time {
	if ms == 0 {
		return nil
	}
	t := time.UnixMilli(ms).UTC()
	return &t
}

// asJSON returns b when it is JSON, else b as a JSON string; nil for empty.
func asJSON(b []byte) json.RawMessage {
	if len(b) == 0 {
		return nil
	}
	if json.Valid(b) {
		return json.RawMessage(b)
	}
	s, _ := json.Marshal(string(b))
	return s
}

// CheckKey reports whether provider, tenant and dedupKey can make the key of
// an event the receiver stored: provider is a registered provider (a route
// of the receiver). The error wraps [webhook.ErrMalformed] and says what to
// fix.
func CheckKey(provider, tenant, dedupKey string) error {
	if _, ok := providers.Lookup(provider); !ok {
		return fmt.Errorf("provider %q: want one of %s: %w", provider, strings.Join(providers.Names(), ", "), webhook.ErrMalformed)
	}
	if !webhook.ValidTenant(tenant) {
		return fmt.Errorf("tenant %q: want %s: %w", tenant, webhook.TenantNameRule, webhook.ErrMalformed)
	}
	return webhook.CheckID("event id", dedupKey, webhook.MaxDedupKeyBytes)
}

// ParseKey splits and checks an event key, provider#tenant#id (see
// [CheckKey]).
func ParseKey(key string) (provider, tenant, dedupKey string, err error) {
	provider, tenant, dedupKey, ok := webhook.SplitKey(key)
	if !ok {
		return "", "", "", fmt.Errorf("key %q: want provider#tenant#id, e.g. line#demo#01JDEMO0000000000000000001: %w", key, webhook.ErrMalformed)
	}
	if err := CheckKey(provider, tenant, dedupKey); err != nil {
		return "", "", "", fmt.Errorf("key %q: %w", key, err)
	}
	return provider, tenant, dedupKey, nil
}

package audit_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/protocol/providers"
	"github.com/hookwall/hookwall/shared/state/audit"
	"github.com/hookwall/hookwall/shared/state/store"
)

type reader struct {
	rec    *store.Record
	getErr error // what Get returns with rec
	steps  []webhook.JournalEntry
	claim  string // the claim id Steps was asked for
}

func (r *reader) Get(context.Context, string) (*store.Record, error) { return r.rec, r.getErr }
func (r *reader) Steps(_ context.Context, _, claimID string) ([]webhook.JournalEntry, error) {
	r.claim = claimID
	return r.steps, nil
}

func TestReadShowsRecordStepsAndHistory(t *testing.T) {
	at := time.UnixMilli(1767312100123)
	r := &reader{
		rec: &store.Record{Key: "line#acme#E1", Provider: "line", Tenant: "acme", EventType: "follow",
			Status: webhook.StatusFailed, Version: 20, Attempts: 3, ReceivedAt: at.UnixMilli(), UpdatedAt: at.UnixMilli(),
			ExpiresAt: at.Unix() + 3600, ClaimID: "c1", PayloadHash: "h", Payload: store.Payload(`{"a":1}`),
			LastError: "boom",
			History: []webhook.HistoryEntry{
				{Version: 19, At: at, From: webhook.StatusProcessing, To: webhook.StatusRetry, Attempt: 2, Owner: "o", Error: "x", Function: "processor"},
				{Version: 20, At: at, From: webhook.StatusProcessing, To: webhook.StatusFailed, Attempt: 3, Function: "processor"},
			}},
		steps: []webhook.JournalEntry{
			{Handler: "crm", Step: "$undo:create", CompletedAt: at.Add(time.Second)},
			{Handler: "crm", Step: "create", Result: []byte(`{"id":7}`), CompletedAt: at},
			{Handler: "crm", Step: "raw", Result: []byte("not json"), CompletedAt: at},
		},
	}
	v, err := audit.Read(context.Background(), r, "line#acme#E1")
	if err != nil || v == nil {
		t.Fatalf("Read: %v, %v", v, err)
	}
	if r.claim != "c1" {
		t.Errorf("steps read for claim %q, want the record's c1", r.claim)
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`"payload":{"a":1}`, `"status":"FAILED"`, `"historyDropped":18`, `"receivedAt":"2026-01-02T00:01:40.123Z"`,
		`{"handler":"crm","step":"create","completedAt":"2026-01-02T00:01:40.123Z","result":{"id":7}}`,
		`"result":"not json"`, `"step":"$undo:create","undo":true`,
		`{"version":19,"at":"2026-01-02T00:01:40.123Z","from":"PROCESSING","to":"RETRY","attempt":2,"owner":"o","error":"x","fn":"processor"}`,
	} {
		if !strings.Contains(string(b), want) {
			t.Errorf("view JSON lacks %s:\n%s", want, b)
		}
	}
	if strings.Contains(string(b), "leaseUntil") || strings.Contains(string(b), "occurredAt") {
		t.Errorf("absent times are shown: %s", b)
	}
	if last := v.Steps[len(v.Steps)-1]; last.Step != "$undo:create" {
		t.Errorf("steps not in completion order: last is %s", last.Step)
	}
}

// A record whose payload item is gone is shown, payload null, marked so:
// the events API does not fail on it.
func TestReadShowsARecordWithoutItsPayload(t *testing.T) {
	r := &reader{rec: &store.Record{Key: "line#acme#E1", Status: webhook.StatusDead, ClaimID: "c1", PayloadRef: "PAYLOAD#ab",
		LastError: "payload item missing"}, getErr: fmt.Errorf("store: payload of line#acme#E1: %w", store.ErrPayloadMissing)}
	v, err := audit.Read(context.Background(), r, "line#acme#E1")
	if err != nil || v == nil {
		t.Fatalf("Read: %v, %v", v, err)
	}
	b, _ := json.Marshal(v)
	if !strings.Contains(string(b), `"payload":null`) || !strings.Contains(string(b), `"payloadMissing":true`) {
		t.Errorf("view: %s", b)
	}
	r.getErr = errors.New("throttled")
	if v, err := audit.Read(context.Background(), r, "line#acme#E1"); err == nil || v != nil {
		t.Errorf("Read on another error: %v, %v; want the error", v, err)
	}
}

func TestReadAbsent(t *testing.T) {
	v, err := audit.Read(context.Background(), &reader{}, "line#acme#E1")
	if v != nil || err != nil {
		t.Errorf("Read of an absent record = %v, %v; want nil, nil", v, err)
	}
}

func TestParseKey(t *testing.T) {
	p, tn, id, err := audit.ParseKey("wecom#acme#msg:1000002:745#x")
	if err != nil || p != "wecom" || tn != "acme" || id != "msg:1000002:745#x" {
		t.Errorf("ParseKey = %q %q %q %v", p, tn, id, err)
	}
	for key, mention := range map[string]string{
		"line#acme":                             "want provider#tenant#id",
		"myspace#acme#1":                        "want one of " + strings.Join(providers.Names(), ", "),
		"line#ac me#1":                          "tenant",
		"line#acme#a\x01b":                      "control character",
		"line#acme#" + strings.Repeat("x", 257): "over 256",
	} {
		_, _, _, err := audit.ParseKey(key)
		if !errors.Is(err, webhook.ErrMalformed) || !strings.Contains(err.Error(), mention) {
			t.Errorf("ParseKey(%q) = %v, want ErrMalformed mentioning %q", key, err, mention)
		}
	}
}

func TestViewShowsCallsAndDeliveries(t *testing.T) {
	at := time.UnixMilli(1767312100123)
	rec := &store.Record{Key: "line#acme#E1", Status: webhook.StatusSucceeded, ReceivedAt: at.UnixMilli(), ClaimID: "c1",
		Calls: []webhook.Call{
			{At: at, Target: "crm/acme", Status: 503, Latency: 1200 * time.Millisecond, Snippet: `{"error":"down"}`},
			{At: at.Add(time.Second), Target: "crm/acme", Error: "context deadline exceeded", Latency: 5 * time.Second},
			{At: at.Add(2 * time.Second), Target: "crm/acme", Status: 200, Latency: 87 * time.Millisecond},
		},
		CallCount: 11, Deliveries: 3, LastDeliveryAt: at.Add(time.Minute).UnixMilli()}
	b, err := json.Marshal(audit.New(rec, nil))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`"deliveries":3`, `"lastDeliveryAt":"2026-01-02T00:02:40.123Z"`, `"callCount":11`,
		`{"at":"2026-01-02T00:01:40.123Z","target":"crm/acme","status":503,"latencyMs":1200,"snippet":"{\"error\":\"down\"}"}`,
		`{"at":"2026-01-02T00:01:41.123Z","target":"crm/acme","status":0,"latencyMs":5000,"error":"context deadline exceeded"}`,
		`{"at":"2026-01-02T00:01:42.123Z","target":"crm/acme","status":200,"latencyMs":87}`,
	} {
		if !strings.Contains(string(b), want) {
			t.Errorf("view JSON lacks %s:\n%s", want, b)
		}
	}
	// A record no duplicate reached: one delivery, at its receipt; no calls.
	b, err = json.Marshal(audit.New(&store.Record{Key: "line#acme#E2", ReceivedAt: at.UnixMilli()}, nil))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"deliveries":1`, `"lastDeliveryAt":"2026-01-02T00:01:40.123Z"`, `"calls":[]`, `"callCount":0`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("view JSON lacks %s:\n%s", want, b)
		}
	}
}

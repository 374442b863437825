package intake

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/protocol/providers"
	"github.com/hookwall/hookwall/shared/state/audit"
	"github.com/hookwall/hookwall/shared/state/store"
)

// eventsReader is a fake audit.Reader holding records by key.
type eventsReader struct {
	recs  map[string]*store.Record
	steps []webhook.JournalEntry
	err   error
}

func (r *eventsReader) Get(_ context.Context, key string) (*store.Record, error) {
	return r.recs[key], r.err
}

func (r *eventsReader) Steps(context.Context, string, string) ([]webhook.JournalEntry, error) {
	return r.steps, nil
}

func newEventsHandler(t *testing.T, r audit.Reader) *Handler {
	return newTestHandler(t, newMemStore(), &memQueue{}, func(c *Config) { c.Events = r })
}

func TestEventsAPI(t *testing.T) {
	key := "wecom#acme#msg:1000002:745"
	r := &eventsReader{recs: map[string]*store.Record{key: {Key: key, Provider: "wecom", Tenant: "acme", EventType: "text",
		Status: webhook.StatusFailed, Version: 3, ClaimID: "c1", Payload: store.Payload(`{"Content":"hi"}`),
		History: []webhook.HistoryEntry{{Version: 3, From: webhook.StatusProcessing, To: webhook.StatusFailed, Function: "processor"}}}},
		steps: []webhook.JournalEntry{{Handler: "crm", Step: "create"}}}
	h := newEventsHandler(t, r)
	cases := []struct {
		name, method, path string
		status             int
		want               string
	}{
		{"found", "GET", "/events/wecom/acme/msg:1000002:745", 200, `"payload":{"Content":"hi"}`},
		{"found, key percent-encoded", "GET", "/events/wecom/acme/msg%3A1000002%3A745", 200, `"status":"FAILED"`},
		{"absent", "GET", "/events/wecom/acme/msg:1:2", 404, `"error":"no event wecom#acme#msg:1:2`},
		{"unknown provider", "GET", "/events/myspace/acme/E1", 400, "want one of " + strings.Join(providers.Names(), ", ")},
		{"bad tenant", "GET", "/events/line/-x/E1", 400, `tenant`},
		{"control character", "GET", "/events/line/acme/a%01b", 400, `control character`},
		{"not GET", "POST", "/events/wecom/acme/msg:1000002:745", 405, ``},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest(c.method, c.path, nil))
			if w.Code != c.status || !strings.Contains(w.Body.String(), c.want) {
				t.Fatalf("%s %s: %d %s, want %d with %s", c.method, c.path, w.Code, w.Body, c.status, c.want)
			}
			if c.status != 405 && w.Header().Get("Content-Type") != "application/json" {
				t.Errorf("Content-Type %q, want application/json", w.Header().Get("Content-Type"))
			}
		})
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/events/wecom/acme/msg:1000002:745", nil))
	var v audit.View
	if err := json.Unmarshal(w.Body.Bytes(), &v); err != nil {
		t.Fatal(err)
	}
	if v.Record.Key != key || len(v.Steps) != 1 || len(v.History) != 1 || v.HistoryDropped != 2 {
		t.Errorf("view %+v: want the record, its step and its history", v)
	}
}

func TestEventsAPIOnlyWithAReader(t *testing.T) {
	h := newTestHandler(t, newMemStore(), &memQueue{})
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/events/line/acme/E1", nil))
	if w.Code != http.StatusNotFound {
		t.Errorf("without Config.Events: %d, want 404", w.Code)
	}
	resp, _ := h.HandleAPIGateway(context.Background(), apiEvent("GET", "line", "acme", "E1"))
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("API Gateway without Config.Events: %d, want 404", resp.StatusCode)
	}
}

func apiEvent(method, provider, tenant, key string) events.APIGatewayV2HTTPRequest {
	e := events.APIGatewayV2HTTPRequest{RouteKey: EventsRoute, RawPath: "/events/" + provider + "/" + tenant + "/" + key,
		PathParameters: map[string]string{"provider": provider, "tenant": tenant, "key": key}}
	e.RequestContext.HTTP.Method = method
	return e
}

func TestEventsAPIGateway(t *testing.T) {
	key := "line#acme#E1"
	r := &eventsReader{recs: map[string]*store.Record{key: {Key: key, Status: webhook.StatusSucceeded, Payload: store.Payload(`{}`)}}}
	h := newEventsHandler(t, r)
	for _, c := range []struct {
		e      events.APIGatewayV2HTTPRequest
		status int
		want   string
	}{
		{apiEvent("GET", "line", "acme", "E1"), 200, `"status":"SUCCEEDED"`},
		{apiEvent("GET", "line", "acme", "E2"), 404, `no event line#acme#E2`},
		{apiEvent("GET", "line", "acme", ""), 400, `event id is empty`},
		{apiEvent("DELETE", "line", "acme", "E1"), 405, `only GET`},
	} {
		resp, err := h.HandleAPIGateway(context.Background(), c.e)
		if err != nil || resp.StatusCode != c.status || !strings.Contains(resp.Body, c.want) {
			t.Errorf("%s %s: %d %s %v, want %d with %s", c.e.RequestContext.HTTP.Method, c.e.RawPath, resp.StatusCode, resp.Body, err, c.status, c.want)
		}
	}
	r.err = errors.New("dynamodb down")
	resp, _ := h.HandleAPIGateway(context.Background(), apiEvent("GET", "line", "acme", "E1"))
	if resp.StatusCode != http.StatusServiceUnavailable || strings.Contains(resp.Body, "dynamodb down") {
		t.Errorf("table unreadable: %d %s, want 503 without the cause", resp.StatusCode, resp.Body)
	}
}

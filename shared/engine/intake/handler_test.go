package intake

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/hookwall/hookwall/shared/base/obs"
	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/state/store"
)

func TestStatusFor(t *testing.T) {
	cases := []struct {
		err  error
		want int
	}{
		{nil, 200},
		{fmt.Errorf("x: %w", webhook.ErrBadSignature), 401},
		{fmt.Errorf("x: %w", webhook.ErrStaleTimestamp), 401},
		{fmt.Errorf("x: %w", webhook.ErrMalformed), 400},
		{fmt.Errorf("x: %w", webhook.ErrUnknownProvider), 404},
		{fmt.Errorf("x: %w", webhook.ErrUnknownTenant), 404},
		{fmt.Errorf("x: %w", webhook.ErrMethodNotAllowed), 405},
		{fmt.Errorf("x: %w", webhook.ErrTooLarge), 413},
		{fmt.Errorf("x: %w: boom", errUnavailable), 503},
		{errors.New("surprise"), 500},
	}
	for _, c := range cases {
		if got := StatusFor(c.err); got != c.want {
			t.Errorf("StatusFor(%v) = %d, want %d", c.err, got, c.want)
		}
	}
}

func TestReceiveClaimsAndEnqueuesEachEventOnce(t *testing.T) {
	st, q := newMemStore(), &memQueue{}
	metrics := obs.NewMetrics(io.Discard, "test", nil)
	h := newTestHandler(t, st, q, func(c *Config) { c.Metrics = metrics })
	body := lineBody("E1", "E2", "E3")
	reply := h.Receive(context.Background(), lineRequest(body, lineSign(body)), Meta{TraceID: "trace-1"})
	if reply.Status != 200 {
		t.Fatalf("status = %d, want 200 (%s)", reply.Status, reply.Body)
	}
	if st.len() != 3 || q.count() != 3 {
		t.Fatalf("records = %d, messages = %d; want 3 and 3", st.len(), q.count())
	}
	env := q.sent[0]
	if env.Key != "line#acme#E1" || env.Provider != "line" || env.Tenant != "acme" || env.Type != "message" || env.TraceID != "trace-1" {
		t.Errorf("envelope = %+v", env)
	}
	if !bytes.Contains(env.Payload, []byte(`"webhookEventId":"E1"`)) {
		t.Errorf("payload = %s, want the event object", env.Payload)
	}
	// The same request again while the records are still RECEIVED inside
	// the grace: it cannot know the first delivery's send succeeded, so 503.
	reply = h.Receive(context.Background(), lineRequest(body, lineSign(body)), Meta{})
	if reply.Status != 503 || q.count() != 3 {
		t.Fatalf("redelivery in flight: status %d, messages %d; want 503 and 3", reply.Status, q.count())
	}
	// Once processing has begun: all duplicates, nothing new enqueued.
	st.processAll()
	reply = h.Receive(context.Background(), lineRequest(body, lineSign(body)), Meta{})
	if reply.Status != 200 || q.count() != 3 {
		t.Fatalf("redelivery: status %d, messages %d; want 200 and 3", reply.Status, q.count())
	}
	c := metrics.Counts()
	if c["Received"] != 9 || c["Duplicate"] != 3 || c["InFlight"] != 3 || c["Enqueued"] != 3 {
		t.Errorf("metrics = %v", c)
	}
}

func TestReceiveSameEventTwiceInOneBodyClaimsOnce(t *testing.T) {
	st, q := newMemStore(), &memQueue{}
	h := newTestHandler(t, st, q)
	body := lineBody("E1", "E1")
	if r := h.Receive(context.Background(), lineRequest(body, lineSign(body)), Meta{}); r.Status != 200 {
		t.Fatalf("status %d", r.Status)
	}
	if q.count() != 1 {
		t.Fatalf("messages = %d, want 1", q.count())
	}
}

func TestReceiveConflictIsAcknowledgedNotEnqueued(t *testing.T) {
	st, q := newMemStore(), &memQueue{}
	metrics := obs.NewMetrics(io.Discard, "test", nil)
	h := newTestHandler(t, st, q, func(c *Config) { c.Metrics = metrics })
	body := lineBody("E1")
	h.Receive(context.Background(), lineRequest(body, lineSign(body)), Meta{})
	st.processAll()
	other := bytes.Replace(body, []byte("hello E1"), []byte("HELLO E1"), 1)
	r := h.Receive(context.Background(), lineRequest(other, lineSign(other)), Meta{})
	if r.Status != 200 || q.count() != 1 {
		t.Fatalf("status %d, messages %d; want 200 and 1", r.Status, q.count())
	}
	if got := metrics.Counts()["Conflict"]; got != 1 {
		t.Errorf("Conflict = %v, want 1", got)
	}
}

func TestReceiveRejectionsWriteNothing(t *testing.T) {
	body := lineBody("E1")
	cases := []struct {
		name string
		req  *webhook.Request
		want int
	}{
		{"bad signature", lineRequest(body, lineSign([]byte("other"))), 401},
		{"missing signature", lineRequest(body, ""), 401},
		{"unknown tenant", func() *webhook.Request { r := lineRequest(body, lineSign(body)); r.Tenant = "nobody"; return r }(), 404},
		{"unknown provider", func() *webhook.Request { r := lineRequest(body, lineSign(body)); r.Provider = "myspace"; return r }(), 404},
		{"wrong method", func() *webhook.Request { r := lineRequest(body, lineSign(body)); r.Method = "PUT"; return r }(), 405},
		{"malformed body", lineRequest([]byte("{not json"), lineSign([]byte("{not json"))), 400},
		{"too large", func() *webhook.Request {
			big := bytes.Repeat([]byte("a"), DefaultMaxBody+1)
			return lineRequest(big, lineSign(big))
		}(), 413},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st, q := newMemStore(), &memQueue{}
			h := newTestHandler(t, st, q)
			r := h.Receive(context.Background(), c.req, Meta{})
			if r.Status != c.want {
				t.Fatalf("status = %d, want %d", r.Status, c.want)
			}
			if st.len() != 0 || q.count() != 0 {
				t.Fatalf("records %d, messages %d; want none", st.len(), q.count())
			}
		})
	}
}

func TestReceiveVerificationStoresNothing(t *testing.T) {
	st, q := newMemStore(), &memQueue{}
	h := newTestHandler(t, st, q)
	body := []byte(`{"destination":"Ub8b2d8e5add3e2eaff4ad4451caab599","events":[]}`)
	if r := h.Receive(context.Background(), lineRequest(body, lineSign(body)), Meta{}); r.Status != 200 {
		t.Fatalf("status %d", r.Status)
	}
	if st.len() != 0 || q.count() != 0 {
		t.Fatalf("stored something")
	}
}

func TestReceiveQueueFailureUndoesClaims(t *testing.T) {
	st, q := newMemStore(), &memQueue{failFirst: 2}
	h := newTestHandler(t, st, q)
	body := lineBody("E1", "E2", "E3")
	r := h.Receive(context.Background(), lineRequest(body, lineSign(body)), Meta{})
	if r.Status != 503 {
		t.Fatalf("status = %d, want 503", r.Status)
	}
	// E3 was sent and stays claimed; E1 and E2 were undone.
	if st.len() != 1 || q.count() != 1 {
		t.Fatalf("records %d, messages %d; want 1 and 1", st.len(), q.count())
	}
	// The platform's retry enqueues only what was undone (E3, sent, is
	// being processed by then).
	st.setStatus("line#acme#E3", webhook.StatusProcessing)
	q.failFirst = 0
	r = h.Receive(context.Background(), lineRequest(body, lineSign(body)), Meta{})
	if r.Status != 200 || q.count() != 3 || st.len() != 3 {
		t.Fatalf("retry: status %d, messages %d, records %d; want 200, 3, 3", r.Status, q.count(), st.len())
	}
}

func TestReceiveStoreFailureIs5xxAndEnqueuesNothingHalfDone(t *testing.T) {
	st, q := newMemStore(), &memQueue{}
	st.failErr = errors.New("dynamodb down")
	h := newTestHandler(t, st, q)
	body := lineBody("E1")
	if r := h.Receive(context.Background(), lineRequest(body, lineSign(body)), Meta{}); r.Status != 503 {
		t.Fatalf("status = %d, want 503", r.Status)
	}
	if q.count() != 0 {
		t.Fatalf("messages = %d, want 0", q.count())
	}
}

func TestReceiveReenqueuesStaleReceivedOnce(t *testing.T) {
	st, q := newMemStore(), &memQueue{}
	h := newTestHandler(t, st, q)
	body := lineBody("E1")
	h.Receive(context.Background(), lineRequest(body, lineSign(body)), Meta{})
	// Past the grace, as if the first receiver died before sending.
	st.clock.Advance(DefaultBudget + DefaultGraceMargin)
	if r := h.Receive(context.Background(), lineRequest(body, lineSign(body)), Meta{}); r.Status != 200 {
		t.Fatalf("status = %d, want 200", r.Status)
	}
	if q.count() != 2 {
		t.Fatalf("messages = %d, want 2 (original + one re-enqueue)", q.count())
	}
	// The take-over starts a new grace: the next duplicate is in flight again.
	if r := h.Receive(context.Background(), lineRequest(body, lineSign(body)), Meta{}); r.Status != 503 || q.count() != 2 {
		t.Fatalf("status = %d, messages %d; want 503 and 2", r.Status, q.count())
	}
}

func TestServeHTTPRoute(t *testing.T) {
	st, q := newMemStore(), &memQueue{}
	srv := httptest.NewServer(newTestHandler(t, st, q))
	defer srv.Close()
	body := lineBody("E1")
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/webhooks/line/acme", bytes.NewReader(body))
	req.Header.Set("X-Line-Signature", lineSign(body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || q.count() != 1 {
		t.Fatalf("status %d, messages %d", resp.StatusCode, q.count())
	}
	resp, err = http.Post(srv.URL+"/elsewhere", "text/plain", strings.NewReader("x"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Fatalf("other path: status %d, want 404", resp.StatusCode)
	}
	big := bytes.Repeat([]byte("a"), DefaultMaxBody+10)
	resp, err = http.Post(srv.URL+"/webhooks/line/acme", "application/json", bytes.NewReader(big))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 413 {
		t.Fatalf("large body: status %d, want 413", resp.StatusCode)
	}
}

func TestHandleAPIGateway(t *testing.T) {
	st, q := newMemStore(), &memQueue{}
	h := newTestHandler(t, st, q)
	body := lineBody("E1")
	e := events.APIGatewayV2HTTPRequest{
		RawPath:         "/webhooks/line/acme",
		PathParameters:  map[string]string{"provider": "line", "tenant": "acme"},
		Headers:         map[string]string{"x-line-signature": lineSign(body), "content-type": "application/json"},
		Body:            base64.StdEncoding.EncodeToString(body),
		IsBase64Encoded: true,
	}
	e.RequestContext.HTTP.Method = "POST"
	e.RequestContext.RequestID = "req-1"
	resp, err := h.HandleAPIGateway(context.Background(), e)
	if err != nil || resp.StatusCode != 200 || q.count() != 1 {
		t.Fatalf("resp %+v, err %v, messages %d", resp, err, q.count())
	}
	// Without path parameters the route is read from the raw path.
	e.PathParameters = nil
	e.Headers["x-line-signature"] = "bad"
	resp, _ = h.HandleAPIGateway(context.Background(), e)
	if resp.StatusCode != 401 {
		t.Fatalf("bad signature: status %d, want 401", resp.StatusCode)
	}
}

func TestRequestFromAPIGatewayKeepsPlusInQuery(t *testing.T) {
	e := events.APIGatewayV2HTTPRequest{RawPath: "/prod/webhooks/wecom/acme", RawQueryString: "echostr=a%2Fb%2Bc%3D%3D&nonce=1"}
	e.RequestContext.HTTP.Method = "GET"
	req, err := requestFromAPIGateway(e, DefaultMaxBody)
	if err != nil {
		t.Fatal(err)
	}
	if req.Provider != "wecom" || req.Tenant != "acme" || req.Query.Get("echostr") != "a/b+c==" {
		t.Fatalf("got provider %q tenant %q echostr %q", req.Provider, req.Tenant, req.Query.Get("echostr"))
	}
}

// slowStore never answers a claim before its context ends.
type slowStore struct{ *memStore }

func (slowStore) Claim(ctx context.Context, _ store.NewEvent, _ time.Duration) (store.ClaimResult, error) {
	<-ctx.Done()
	return store.ClaimResult{}, ctx.Err()
}

func TestReceiveAnswers503WithinBudgetWhenTheStoreHangs(t *testing.T) {
	q := &memQueue{}
	h := newTestHandler(t, slowStore{newMemStore()}, q, func(c *Config) { c.Budget = 50 * time.Millisecond })
	body := lineBody("E1")
	done := make(chan webhook.Reply, 1)
	go func() { done <- h.Receive(context.Background(), lineRequest(body, lineSign(body)), Meta{}) }()
	select {
	case r := <-done:
		if r.Status != 503 {
			t.Fatalf("status = %d, want 503", r.Status)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the receiver did not answer within the budget")
	}
	if q.count() != 0 {
		t.Fatal("enqueued without a claim")
	}
}

// slowProgress is a store whose progress read takes delay, as a starved
// CPU (a 256 MB Lambda beside a load) makes the preparation of a large
// delivery take most of the budget.
type slowProgress struct {
	*memStore
	delay time.Duration
}

func (s *slowProgress) LoadProgress(ctx context.Context, id string) (store.Progress, error) {
	time.Sleep(s.delay)
	return s.memStore.LoadProgress(ctx, id)
}

// Issue 29 item 9: an attempt whose preparation took more than the claims'
// three quarters of the budget still claims and sends its first wave (it
// has a budget of its own), so that every attempt makes progress; before,
// every claim of the first wave was skipped and the attempt did nothing.
func TestEveryAttemptClaimsAWaveWhenPreparationAteTheBudget(t *testing.T) {
	st := &slowProgress{memStore: newMemStore(), delay: DefaultBudget * 7 / 8}
	q := &memQueue{}
	h := newTestHandler(t, st, q)
	ids := make([]string, waveEvents+100)
	for i := range ids {
		ids[i] = fmt.Sprintf("01SLOWPREP%016d", i)
	}
	body := lineBody(ids...)
	for attempt := 1; attempt <= 2; attempt++ {
		before := q.count()
		status := h.Receive(context.Background(), lineRequest(body, lineSign(body)), Meta{}).Status
		sent := q.count() - before
		total := q.count()
		if attempt == 1 && (sent < waveEvents || (status == 200) != (total == len(ids))) {
			t.Fatalf("attempt 1: %d with %d events sent, want at least a wave (%d) sent", status, sent, waveEvents)
		}
		if status == 200 {
			break
		}
		if attempt == 2 && (status != 200 || total != len(ids)) {
			t.Fatalf("attempt 2: %d with %d of %d events sent in all, want 200 with every event sent once", status, total, len(ids))
		}
	}
}

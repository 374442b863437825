package forward_test

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/hookwall/hookwall/functions/processor/handlers/forward"
	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/config/tenants"
	"github.com/hookwall/hookwall/shared/engine/dispatch"
	"github.com/hookwall/hookwall/shared/engine/platform"
	"github.com/hookwall/hookwall/shared/engine/process"
	"github.com/hookwall/hookwall/shared/engine/processtest"
	"github.com/hookwall/hookwall/shared/protocol/provider/line"
	"github.com/hookwall/hookwall/shared/protocol/provider/standard"
	"github.com/hookwall/hookwall/shared/protocol/provider/wecom"
	"github.com/hookwall/hookwall/shared/protocol/provider/wxmsg"
)

// verifier is a tenant's Standard Webhooks endpoint: it verifies every
// delivery with the standard package's parser and records what it got.
type verifier struct {
	t      *testing.T
	parser *standard.Parser
	mu     sync.Mutex
	ids    map[string]string // webhook-id -> Idempotency-Key
	events []webhook.Envelope
}

func (v *verifier) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	d, err := v.parser.Parse(r.Context(), &webhook.Request{Method: r.Method, Header: r.Header, Body: body})
	if err != nil {
		v.t.Errorf("the tenant's receiver rejects the forward: %v", err)
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	var env webhook.Envelope
	if err := json.Unmarshal(body, &env); err != nil {
		v.t.Errorf("forwarded body is not an envelope: %v", err)
	}
	v.mu.Lock()
	v.ids[d.Events[0].DedupKey] = r.Header.Get(process.HeaderIdempotencyKey)
	v.events = append(v.events, env)
	v.mu.Unlock()
}

func setup(t *testing.T) (*verifier, *processtest.EffectServer, *process.Registry) {
	var b [32]byte
	_, _ = rand.Read(b[:])
	secret := "whsec_" + base64.StdEncoding.EncodeToString(b[:])
	parser, err := standard.New(standard.Config{Secrets: []string{secret}})
	if err != nil {
		t.Fatal(err)
	}
	v := &verifier{t: t, parser: parser, ids: map[string]string{}}
	srv := processtest.NewEffectServer(t, v)
	doc := `{"tenants":{
		"acme":  {"line":{"channelSecret":"c"},"forward":{"url":"` + srv.URL + `/hooks?token=t","secret":"` + secret + `"}},
		"plain": {"line":{"channelSecret":"c"}}}}`
	tenants, err := tenants.Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	reg := processtest.NewRegistry(t, forward.Team, nil, platform.Deps{Tenants: tenants})
	return v, srv, reg
}

func TestForwardOncePerKeyUnderRedeliveryAndCrashes(t *testing.T) {
	v, srv, reg := setup(t)
	payload := `{"type":"follow","source":{"type":"user","userId":"U1"}}`
	rep := processtest.Run(t, reg, line.Follow, []byte(payload), processtest.Tenant("acme"),
		processtest.Redeliver(3), processtest.CrashAfterEachStep())

	srv.AssertOnce(t) // one body per key: the envelope, however often it was sent
	if got, want := srv.Keys(), rep.StepKeys(); !slices.Equal(got, want) || len(want) != 3 {
		t.Errorf("got keys %v, want the 3 events' step keys %v", got, want)
	}
	if len(rep.Events) != 3 || rep.Crashes != 2 {
		t.Errorf("got %d events, %d crashes; want 3, 2", len(rep.Events), rep.Crashes)
	}
	for id, key := range v.ids {
		if id != key {
			t.Errorf("webhook-id %q differs from Idempotency-Key %q", id, key)
		}
	}
	for _, ev := range rep.Events {
		if ev.Status != webhook.StatusSucceeded {
			t.Errorf("%s: got %s (%s), want SUCCEEDED", ev.Key, ev.Status, ev.LastError)
		}
		if _, ok := v.ids[webhook.IdempotencyKey(ev.Key, forward.HandlerName, forward.StepName)]; !ok {
			t.Errorf("%s: never forwarded under its step key", ev.Key)
		}
	}
	for _, env := range v.events {
		if !strings.HasPrefix(env.Key, "line#acme#") || env.Tenant != "acme" || env.Type != "follow" || string(env.Payload) != payload {
			t.Errorf("got envelope %+v, want the acme follow event with its payload", env)
		}
	}
	t.Logf("forward: %d events, %d deliveries, %d crashes; %d POSTs for %d keys", len(rep.Events), rep.Deliveries,
		rep.Crashes, srv.Total(), len(srv.Keys()))
}

func TestForwardServesEveryEventType(t *testing.T) {
	_, srv, reg := setup(t)
	rep := processtest.Run(t, reg, wecom.Text, wecom.TextMessage{Header: wxmsg.Header{MsgType: "text"}, Content: "hi"}, processtest.Tenant("acme"))
	if rep.Status != webhook.StatusSucceeded || srv.Total() != 1 || rep.Verdicts[dispatch.Succeeded] != 1 {
		t.Errorf("wecom text: got %s, verdicts %v, %d POSTs; want SUCCEEDED, 1 POST", rep.Status, rep.Verdicts, srv.Total())
	}
}

func TestNoForwardForTenantsWithout(t *testing.T) {
	_, srv, reg := setup(t)
	rep := processtest.Run(t, reg, line.Follow, []byte(`{"type":"follow"}`), processtest.Tenant("plain"), processtest.Redeliver(2))
	if rep.Status != webhook.StatusSucceeded || rep.Verdicts[dispatch.Unhandled] != 1 || srv.Total() != 0 || len(rep.Journal) != 0 {
		t.Errorf("got %s, verdicts %v, %d POSTs, journal %v; want acknowledged as unhandled, nothing sent",
			rep.Status, rep.Verdicts, srv.Total(), rep.Journal)
	}
}

func TestForwardOutcomes(t *testing.T) {
	for _, tc := range []struct {
		status       int
		wantStatus   webhook.Status
		wantAttempts int
	}{
		{http.StatusOK, webhook.StatusSucceeded, 1},
		{http.StatusRequestTimeout, webhook.StatusFailed, dispatch.DefaultMaxAttempts},
		{http.StatusTooManyRequests, webhook.StatusFailed, dispatch.DefaultMaxAttempts},
		{http.StatusInternalServerError, webhook.StatusFailed, dispatch.DefaultMaxAttempts},
		{http.StatusBadRequest, webhook.StatusFailed, 1},
		{http.StatusNotFound, webhook.StatusFailed, 1},
	} {
		t.Run(http.StatusText(tc.status), func(t *testing.T) {
			srv := processtest.NewEffectServer(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(tc.status) }))
			tenants, err := tenants.Parse([]byte(`{"tenants":{"acme":{"line":{"channelSecret":"c"},"forward":{"url":"` + srv.URL + `"}}}}`))
			if err != nil {
				t.Fatal(err)
			}
			reg := processtest.NewRegistry(t, forward.Team, nil, platform.Deps{Tenants: tenants})
			rep := processtest.Run(t, reg, line.Follow, []byte(`{}`), processtest.Tenant("acme"))
			if rep.Status != tc.wantStatus || rep.Attempts != tc.wantAttempts || srv.Total() != tc.wantAttempts {
				t.Errorf("got %s after %d attempts, %d POSTs (%s); want %s after %d", rep.Status, rep.Attempts, srv.Total(),
					rep.LastError, tc.wantStatus, tc.wantAttempts)
			}
			if strings.Contains(rep.LastError, srv.URL) {
				t.Errorf("last error %q quotes the URL", rep.LastError)
			}
		})
	}
}

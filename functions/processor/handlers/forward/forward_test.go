package forward

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/config/tenants"
	"github.com/hookwall/hookwall/shared/engine/dispatch"
	"github.com/hookwall/hookwall/shared/engine/platform"
	"github.com/hookwall/hookwall/shared/engine/process"
	"github.com/hookwall/hookwall/shared/protocol/provider/standard"
)

func newSecret(t *testing.T) tenants.Secret {
	t.Helper()
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return tenants.Secret("whsec_" + base64.StdEncoding.EncodeToString(b[:]))
}

// fixedTenants is a fixed tenants document.
type fixedTenants map[string]*tenants.Tenant

func (ts fixedTenants) Tenant(name string) (*tenants.Tenant, bool) {
	t, ok := ts[name]
	return t, ok
}

var envelope = webhook.Envelope{Key: "line#acme#01HX", Provider: "line", Tenant: "acme", Type: "follow",
	ReceivedAt: time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC), TraceID: "trace-1",
	Payload: json.RawMessage(`{"type":"follow","source":{"userId":"U1"}}`)}

// receiver is a Standard Webhooks receiver: it verifies each delivery with
// the standard package's parser, as a third party's library would, answers
// 401 to a bad one (failing t if strict) and status to a good one.
func receiver(t *testing.T, secret tenants.Secret, status int, got chan<- *http.Request, strict bool) *httptest.Server {
	t.Helper()
	parser, err := standard.New(standard.Config{Secrets: []string{secret.Reveal()}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		_, err := parser.Parse(r.Context(), &webhook.Request{Method: r.Method, Header: r.Header, Body: body})
		if err != nil {
			if strict {
				t.Errorf("receiver: %v", err)
			}
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		if got != nil {
			got <- r
		}
		w.WriteHeader(status)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestSignedForwardVerifiesAsStandardWebhooks(t *testing.T) {
	secret := newSecret(t)
	got := make(chan *http.Request, 1)
	srv := receiver(t, secret, http.StatusOK, got, true)
	f := &forwarder{cfg: config{Timeout: time.Second, Now: time.Now}}
	body, _ := json.Marshal(envelope)
	id := webhook.IdempotencyKey(envelope.Key, HandlerName, StepName)
	if err := f.send(context.Background(), srv.Client(), &tenants.Forward{URL: srv.URL, Secret: secret}, id, body); err != nil {
		t.Fatalf("send: %v", err)
	}
	r := <-got
	if r.Header.Get("Webhook-Id") != id || r.Header.Get(process.HeaderIdempotencyKey) != id {
		t.Errorf("got webhook-id %q and Idempotency-Key %q, want both %q", r.Header.Get("Webhook-Id"), r.Header.Get(process.HeaderIdempotencyKey), id)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("got Content-Type %q, want application/json", ct)
	}
	var env webhook.Envelope
	if err := json.NewDecoder(r.Body).Decode(&env); err != nil {
		t.Fatal(err)
	}
	if env.Key != envelope.Key || env.Tenant != "acme" || env.Type != "follow" || env.TraceID != "trace-1" ||
		!env.ReceivedAt.Equal(envelope.ReceivedAt) || string(env.Payload) != string(envelope.Payload) {
		t.Errorf("got envelope %+v, want %+v", env, envelope)
	}
}

func TestSignatureFailsWithAnotherSecret(t *testing.T) {
	srv := receiver(t, newSecret(t), http.StatusOK, nil, false)
	f := &forwarder{cfg: config{Timeout: time.Second, Now: time.Now}}
	err := f.send(context.Background(), srv.Client(), &tenants.Forward{URL: srv.URL, Secret: newSecret(t)}, "id-1", []byte(`{}`))
	if !process.IsPermanent(err) || !strings.Contains(err.Error(), "status 401") {
		t.Errorf("got %v, want the receiver's 401 as a permanent error", err)
	}
}

func TestUnsignedWithoutSecret(t *testing.T) {
	got := make(chan *http.Request, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got <- r }))
	defer srv.Close()
	now := time.Unix(1714564800, 0)
	f := &forwarder{cfg: config{Timeout: time.Second, Now: func() time.Time { return now }}}
	if err := f.send(context.Background(), srv.Client(), &tenants.Forward{URL: srv.URL}, "id-1", []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	r := <-got
	if r.Header.Get("Webhook-Signature") != "" || r.Header.Get("Webhook-Id") != "id-1" || r.Header.Get("Webhook-Timestamp") != "1714564800" {
		t.Errorf("got headers %v, want webhook-id and webhook-timestamp, no signature", r.Header)
	}
}

func TestStatusMapping(t *testing.T) {
	tests := []struct {
		status            int
		wantErr, wantPerm bool
	}{
		{200, false, false}, {202, false, false}, {204, false, false},
		{408, true, false}, {429, true, false}, {500, true, false}, {502, true, false}, {503, true, false},
		{400, true, true}, {401, true, true}, {404, true, true}, {410, true, true}, {422, true, true},
		{301, true, true}, {302, true, true}, {307, true, true}, // redirects are not followed
	}
	for _, tc := range tests {
		redirected := false
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/elsewhere" {
				redirected = true
				return
			}
			if tc.status/100 == 3 {
				w.Header().Set("Location", "/elsewhere")
			}
			w.WriteHeader(tc.status)
		}))
		f := &forwarder{cfg: config{Timeout: time.Second, Now: time.Now}}
		err := f.send(context.Background(), srv.Client(), &tenants.Forward{URL: srv.URL + "/hook"}, "id", []byte(`{}`))
		srv.Close()
		if (err != nil) != tc.wantErr || process.IsPermanent(err) != tc.wantPerm || redirected {
			t.Errorf("status %d: got %v (permanent %v, redirect followed %v), want error %v, permanent %v",
				tc.status, err, process.IsPermanent(err), redirected, tc.wantErr, tc.wantPerm)
		}
	}
}

func TestTimeoutIsRetriedAndHidesTheURL(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release }))
	defer srv.Close()
	defer close(release)
	f := &forwarder{cfg: config{Timeout: 50 * time.Millisecond, Now: time.Now}}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second) // a safety net, not the timeout under test
	defer cancel()
	start := time.Now()
	err := f.send(ctx, srv.Client(), &tenants.Forward{URL: srv.URL + "/hook?token=s3cret"}, "id", []byte(`{}`))
	if err == nil || process.IsPermanent(err) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("got %v, want a retryable deadline error", err)
	}
	if err != nil && strings.Contains(err.Error(), "s3cret") {
		t.Errorf("error %q quotes the URL", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("send took %v, want about the 50ms timeout", d)
	}
}

func TestOnlyTenantsWithForwardAreMatched(t *testing.T) {
	ts := fixedTenants{
		"acme":  {Name: "acme", Forward: &tenants.Forward{URL: "https://acme.example/hooks"}},
		"plain": {Name: "plain"},
	}
	for _, tc := range []struct {
		name    string
		tenants Tenants
		tenant  string
		want    bool
	}{
		{"a tenant with forward", ts, "acme", true},
		{"a tenant without forward", ts, "plain", false},
		{"an unknown tenant", ts, "nobody", false},
		{"no tenants document", nil, "acme", false},
	} {
		team := platform.Team{Owner: Team.Owner, Register: func(r *process.Registry, _ platform.Deps) { register(r, config{Tenants: tc.tenants}) }}
		r, err := platform.Build(nil, platform.Deps{}, team)
		if err != nil {
			t.Fatal(err)
		}
		for _, typ := range [][2]string{{"line", "follow"}, {"wecom", "text"}, {"standard", "invoice.paid"}} {
			got := dispatch.Match(r, typ[0], tc.tenant, typ[1])
			if (len(got) == 1 && got[0].Name == HandlerName) != tc.want {
				t.Errorf("%s, %s/%s: got handlers %v, want forward matched: %v", tc.name, typ[0], typ[1], got, tc.want)
			}
			if len(got) == 1 && got[0].TargetOf(tc.tenant) != "forward/"+tc.tenant {
				t.Errorf("%s: target %q, want one per tenant, forward/%s", tc.name, got[0].TargetOf(tc.tenant), tc.tenant)
			}
		}
	}
}

package crm_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/hookwall/hookwall/functions/processor/handlers/crm"
	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/engine/dispatch"
	"github.com/hookwall/hookwall/shared/engine/platform"
	"github.com/hookwall/hookwall/shared/engine/process"
	"github.com/hookwall/hookwall/shared/engine/processtest"
	"github.com/hookwall/hookwall/shared/protocol/provider/line"
)

// follow is a LINE follow event object as the receiver normalises it.
const follow = `{"type":"follow","timestamp":1700000000000,"mode":"active","webhookEventId":"01HFOLLOW",
"deliveryContext":{"isRedelivery":false},"replyToken":"rt","source":{"type":"user","userId":"U4af4980629"},
"follow":{"isUnblocked":false}}`

// fakeCRM answers like an API that honours Idempotency-Key: the lead id is
// derived from the key, so a replay gets the same lead. It remembers which
// lead each tag request named.
type fakeCRM struct {
	mu     sync.Mutex
	tagged map[string]string // tag request's key -> path
	status int               // answer to every request, if set
}

func (f *fakeCRM) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if f.status != 0 {
		w.WriteHeader(f.status)
		return
	}
	key := r.Header.Get(process.HeaderIdempotencyKey)
	switch {
	case r.URL.Path == "/leads":
		var in struct {
			LineUserID string `json:"lineUserId"`
		}
		if json.NewDecoder(r.Body).Decode(&in) != nil || in.LineUserID != "U4af4980629" {
			http.Error(w, "bad lead", http.StatusBadRequest)
			return
		}
		_ = json.NewEncoder(w).Encode(crm.Lead{ID: "lead-" + key[:8]})
	case strings.HasSuffix(r.URL.Path, "/tags"):
		f.mu.Lock()
		f.tagged[key] = r.URL.Path
		f.mu.Unlock()
	default:
		http.NotFound(w, r)
	}
}

func TestLeadFromFollowOncePerKey(t *testing.T) {
	fake := &fakeCRM{tagged: map[string]string{}}
	srv := processtest.NewEffectServer(t, fake)
	reg := processtest.NewRegistry(t, crm.Team, processtest.Env{"CRM_LEADS_URL": srv.URL}, platform.Deps{})

	rep := processtest.Run(t, reg, line.Follow, []byte(follow), processtest.Redeliver(3), processtest.CrashAfterEachStep())

	srv.AssertOnce(t)
	if got, want := srv.Keys(), rep.StepKeys(); !slices.Equal(got, want) {
		t.Errorf("the CRM got keys %v, want one per journaled step %v", got, want)
	}
	if len(rep.Events) != 5 || rep.Crashes != 4 {
		t.Errorf("got %d events and %d crashes, want 5 and 4 (2 steps × before/after the journal write)", len(rep.Events), rep.Crashes)
	}
	for _, ev := range rep.Events {
		if ev.Status != webhook.StatusSucceeded {
			t.Errorf("%s: got %s (%s), want SUCCEEDED", ev.Key, ev.Status, ev.LastError)
		}
		create := webhook.IdempotencyKey(ev.Key, crm.HandlerName, "create-lead")
		tag := webhook.IdempotencyKey(ev.Key, crm.HandlerName, "tag-lead")
		if want := "/leads/lead-" + create[:8] + "/tags"; fake.tagged[tag] != want {
			t.Errorf("%s: tagged %q, want %q (the lead the first step created)", ev.Key, fake.tagged[tag], want)
		}
	}
	t.Logf("crm: %d events, %d deliveries, %d crashes; %d requests, %d effects", len(rep.Events), rep.Deliveries,
		rep.Crashes, srv.Total(), len(srv.Keys()))
}

func TestLeadFromFollowOutcomes(t *testing.T) {
	tests := []struct {
		name         string
		status       int
		payload      string
		wantStatus   webhook.Status
		wantAttempts int
	}{
		{"a 400 is permanent", http.StatusBadRequest, follow, webhook.StatusFailed, 1},
		{"a 404 is permanent", http.StatusNotFound, follow, webhook.StatusFailed, 1},
		{"a 503 is retried until the attempts run out", http.StatusServiceUnavailable, follow, webhook.StatusFailed, dispatch.DefaultMaxAttempts},
		{"a 429 is retried until the attempts run out", http.StatusTooManyRequests, follow, webhook.StatusFailed, dispatch.DefaultMaxAttempts},
		{"a follow without a user is permanent", 0, `{"type":"follow","source":{"type":"user"}}`, webhook.StatusFailed, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := processtest.NewEffectServer(t, &fakeCRM{status: tc.status})
			reg := processtest.NewRegistry(t, crm.Team, processtest.Env{"CRM_LEADS_URL": srv.URL}, platform.Deps{})
			rep := processtest.Run(t, reg, line.Follow, []byte(tc.payload))
			if rep.Status != tc.wantStatus || rep.Attempts != tc.wantAttempts || len(rep.DeadLetters) != 1 {
				t.Errorf("got %s after %d attempts, %d dead letters (%s); want %s after %d, 1 dead letter",
					rep.Status, rep.Attempts, len(rep.DeadLetters), rep.LastError, tc.wantStatus, tc.wantAttempts)
			}
		})
	}
}

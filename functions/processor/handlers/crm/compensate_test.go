package crm_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/hookwall/hookwall/functions/processor/handlers/crm"
	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/engine/compensate"
	"github.com/hookwall/hookwall/shared/engine/compensatetest"
	"github.com/hookwall/hookwall/shared/engine/platform"
	"github.com/hookwall/hookwall/shared/engine/process"
	"github.com/hookwall/hookwall/shared/engine/processtest"
	"github.com/hookwall/hookwall/shared/protocol/provider/line"
)

// leadAPI is a CRM whose tagging fails, so that the event is compensated:
// it creates leads (id derived from the Idempotency-Key), answers tag
// requests with tagStatus and DELETE /leads/{id} with deleteStatus (0: 204),
// and remembers the leads alive.
type leadAPI struct {
	tagStatus    int
	deleteStatus int

	mu      sync.Mutex
	alive   map[string]bool     // lead id -> not deleted
	deletes map[string][]string // lead id -> the Idempotency-Key of each DELETE
}

func newLeadAPI(tagStatus, deleteStatus int) *leadAPI {
	return &leadAPI{tagStatus: tagStatus, deleteStatus: deleteStatus, alive: map[string]bool{}, deletes: map[string][]string{}}
}

func (a *leadAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	key := r.Header.Get(process.HeaderIdempotencyKey)
	a.mu.Lock()
	defer a.mu.Unlock()
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/leads":
		id := "lead-" + key[:8]
		a.alive[id] = true
		_ = json.NewEncoder(w).Encode(crm.Lead{ID: id})
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/tags"):
		w.WriteHeader(a.tagStatus)
	case r.Method == http.MethodDelete && strings.HasPrefix(r.URL.Path, "/leads/"):
		id := strings.TrimPrefix(r.URL.Path, "/leads/")
		a.deletes[id] = append(a.deletes[id], key)
		if a.deleteStatus != 0 {
			w.WriteHeader(a.deleteStatus)
			return
		}
		if !a.alive[id] {
			http.NotFound(w, r)
			return
		}
		delete(a.alive, id)
		w.WriteHeader(http.StatusNoContent)
	default:
		http.NotFound(w, r)
	}
}

// A tag the CRM refuses (400, permanent) fails the event after the lead was
// created; the compensator deletes the lead, with the undo's own key, once
// per event, whatever the crashes and copies.
func TestLeadDeletedWhenTheEventFails(t *testing.T) {
	api := newLeadAPI(http.StatusBadRequest, 0)
	srv := processtest.NewEffectServer(t, api)
	reg := processtest.NewRegistry(t, crm.Team, processtest.Env{"CRM_LEADS_URL": srv.URL}, platform.Deps{})

	rep := compensatetest.Run(t, reg, line.Follow, []byte(follow), compensatetest.Redeliver(3), compensatetest.CrashAfterEachUndo())

	srv.AssertOnce(t)
	if len(rep.Events) != 3 || rep.Crashes != 2 {
		t.Errorf("got %d events, %d crashes; want 3 and 2 (1 undo step × before/after its journal write)", len(rep.Events), rep.Crashes)
	}
	// The tag step failed, so it was never journaled: only the lead is undone.
	if want := []string{crm.HandlerName + "/create-lead"}; !slices.Equal(rep.Undone, want) {
		t.Errorf("undone: got %v, want %v", rep.Undone, want)
	}
	for _, ev := range rep.Events {
		if ev.Status != webhook.StatusCompensated || !strings.Contains(ev.FailedWith, "status 400") {
			t.Errorf("%s: got %s (%s), failed with %q; want COMPENSATED after the tag's 400", ev.Key, ev.Status, ev.LastError, ev.FailedWith)
		}
		lead := "lead-" + webhook.IdempotencyKey(ev.Key, crm.HandlerName, "create-lead")[:8]
		undoKey := webhook.IdempotencyKey(ev.Key, crm.HandlerName, "$undo:create-lead")
		api.mu.Lock()
		alive, keys := api.alive[lead], slices.Compact(slices.Clone(api.deletes[lead]))
		api.mu.Unlock()
		if alive || len(keys) != 1 || keys[0] != undoKey {
			t.Errorf("%s: lead %s alive %v, deleted with keys %v; want deleted with the undo's key %s only", ev.Key, lead, alive, keys, undoKey)
		}
		if len(ev.Outcomes) != 1 || ev.Outcomes[0].Status != webhook.StatusCompensated {
			t.Errorf("%s: outcomes %+v, want one COMPENSATED", ev.Key, ev.Outcomes)
		}
	}
	t.Logf("crm compensation: %d events, %d dead-letter deliveries, %d crashes; %d requests", len(rep.Events), rep.Deliveries,
		rep.Crashes, srv.Total())
}

func TestLeadDeleteOutcomes(t *testing.T) {
	tests := []struct {
		name         string
		deleteStatus int
		want         webhook.Status
		wantError    string
		wantDeletes  int
	}{
		{"a lead already gone counts as deleted", http.StatusNotFound, webhook.StatusCompensated, "", 1},
		{"a refused delete is DEAD at once", http.StatusForbidden, webhook.StatusDead, "compensation failed permanently", 1},
		{"a failing CRM is retried until the attempts run out", http.StatusServiceUnavailable, webhook.StatusDead,
			"compensation attempts exhausted (5)", compensate.DefaultMaxAttempts},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			api := newLeadAPI(http.StatusBadRequest, tc.deleteStatus)
			srv := processtest.NewEffectServer(t, api)
			reg := processtest.NewRegistry(t, crm.Team, processtest.Env{"CRM_LEADS_URL": srv.URL}, platform.Deps{})
			rep := compensatetest.Run(t, reg, line.Follow, []byte(follow))
			if rep.Status != tc.want || !strings.Contains(rep.LastError, tc.wantError) {
				t.Errorf("got %s (%q), want %s (%q)", rep.Status, rep.LastError, tc.want, tc.wantError)
			}
			n := 0
			api.mu.Lock()
			for _, keys := range api.deletes {
				n += len(keys)
			}
			api.mu.Unlock()
			if n != tc.wantDeletes {
				t.Errorf("got %d DELETE requests, want %d", n, tc.wantDeletes)
			}
			if len(rep.Outcomes) != 1 || rep.Outcomes[0].Status != tc.want {
				t.Errorf("outcomes: got %+v, want one %s", rep.Outcomes, tc.want)
			}
		})
	}
}

// A lead that was never created (the create step itself failed) leaves
// nothing to compensate: DEAD with the reason.
func TestNothingToCompensateIsDead(t *testing.T) {
	srv := processtest.NewEffectServer(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusBadRequest)
	}))
	reg := processtest.NewRegistry(t, crm.Team, processtest.Env{"CRM_LEADS_URL": srv.URL}, platform.Deps{})
	rep := compensatetest.Run(t, reg, line.Follow, []byte(follow))
	if rep.Status != webhook.StatusDead || !strings.HasPrefix(rep.LastError, "nothing to compensate: ") || len(rep.Undone) != 0 {
		t.Errorf("got %s (%q), undone %v; want DEAD, nothing to compensate", rep.Status, rep.LastError, rep.Undone)
	}
}

// When a later handler fails the event, both of the CRM handler's journaled
// steps are undone, newest first: the tag (nothing of its own), then the
// lead.
func TestBothStepsUndoneNewestFirst(t *testing.T) {
	api := newLeadAPI(http.StatusOK, 0)
	srv := processtest.NewEffectServer(t, api)
	reg := processtest.NewRegistry(t, crm.Team, processtest.Env{"CRM_LEADS_URL": srv.URL}, platform.Deps{})
	process.Handle(reg, "test.fails-after", line.Follow, func(context.Context, *process.Event[line.FollowEvent]) error {
		return process.Permanent(errors.New("downstream refused the follower"))
	})

	rep := compensatetest.Run(t, reg, line.Follow, []byte(follow), compensatetest.Redeliver(2), compensatetest.CrashAfterEachUndo())

	if want := []string{crm.HandlerName + "/tag-lead", crm.HandlerName + "/create-lead"}; !slices.Equal(rep.Undone, want) {
		t.Errorf("undone: got %v, want %v (newest first)", rep.Undone, want)
	}
	if len(rep.Events) != 5 || rep.Crashes != 4 {
		t.Errorf("got %d events, %d crashes; want 5 and 4", len(rep.Events), rep.Crashes)
	}
	api.mu.Lock()
	defer api.mu.Unlock()
	if len(api.alive) != 0 {
		t.Errorf("leads left alive: %v", api.alive)
	}
	for _, ev := range rep.Events {
		if ev.Status != webhook.StatusCompensated {
			t.Errorf("%s: got %s (%s), want COMPENSATED", ev.Key, ev.Status, ev.LastError)
		}
	}
}

package process

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/internal/registry"
)

func TestNewUndoDerivesItsOwnKey(t *testing.T) {
	env := webhook.Envelope{Key: "line#acme#e1"}
	e := webhook.JournalEntry{Handler: "crm", Step: "create-lead", Result: []byte(`{"id":"L-7"}`), CompletedAt: time.UnixMilli(5)}
	u := newUndo(registry.UndoCall{Envelope: env, Entry: e, Attempt: 2})
	if want := webhook.IdempotencyKey(env.Key, "crm", "$undo:create-lead"); u.IdempotencyKey != want {
		t.Errorf("key: got %s, want %s", u.IdempotencyKey, want)
	}
	if u.IdempotencyKey == webhook.IdempotencyKey(env.Key, "crm", "create-lead") {
		t.Error("the undo's key is the forward step's")
	}
	if u.Handler != "crm" || u.Step != "create-lead" || u.Attempt != 2 || !u.CompletedAt.Equal(e.CompletedAt) || u.Log == nil {
		t.Errorf("got %+v", u)
	}
}

func TestUndoResult(t *testing.T) {
	type lead struct {
		ID string `json:"id"`
	}
	u := newUndo(registry.UndoCall{Envelope: webhook.Envelope{Key: "k"}, Entry: webhook.JournalEntry{Handler: "h", Step: "s", Result: []byte(`{"id":"L-7"}`)}, Attempt: 1})
	if l, err := UndoResult[lead](u); err != nil || l.ID != "L-7" {
		t.Errorf("got %+v, %v", l, err)
	}
	for name, result := range map[string]string{"no result": "", "not its type": `"a string"`} {
		u.Result = []byte(result)
		if _, err := UndoResult[lead](u); !IsPermanent(err) {
			t.Errorf("%s: got %v, want a permanent error", name, err)
		}
	}
}

func TestUndoHTTPClient(t *testing.T) {
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Header.Get(HeaderIdempotencyKey))
	}))
	defer srv.Close()
	u := newUndo(registry.UndoCall{Envelope: webhook.Envelope{Key: "k"}, Entry: webhook.JournalEntry{Handler: "h", Step: "s"}, Attempt: 1, Transport: srv.Client().Transport})
	for _, preset := range []string{"", "caller-set"} {
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodDelete, srv.URL, nil)
		if preset != "" {
			req.Header.Set(HeaderIdempotencyKey, preset)
		}
		resp, err := u.HTTPClient().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if len(got) != 2 || got[0] != u.IdempotencyKey || got[1] != "caller-set" {
		t.Errorf("got %v, want [%s caller-set]", got, u.IdempotencyKey)
	}
}

func TestCompensateRegistersTheUndo(t *testing.T) {
	r := NewRegistry()
	Handle(r, "plain", followType, func(context.Context, *Event[follow]) error { return nil })
	if r.table().Handler("plain").Undo != nil {
		t.Error("a registration without Compensate has a compensation")
	}
	var got *Undo
	Handle(r, "h", followType, func(context.Context, *Event[follow]) error { return nil },
		Compensate(func(_ context.Context, u *Undo) error { got = u; return nil }))
	call := registry.UndoCall{Envelope: webhook.Envelope{Key: "k"}, Entry: webhook.JournalEntry{Handler: "h", Step: "s"}, Attempt: 3}
	if err := r.table().Handler("h").Undo(context.Background(), call); err != nil || got == nil || got.Step != "s" || got.Attempt != 3 {
		t.Errorf("the registered undo was not the one called with the step: %v, %+v", err, got)
	}
	defer func() {
		if recover() == nil {
			t.Error("Compensate(nil) did not panic")
		}
	}()
	Compensate(nil)
}

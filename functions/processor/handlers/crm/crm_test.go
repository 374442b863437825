package crm

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/hookwall/hookwall/shared/engine/process"
)

func TestStatusMapping(t *testing.T) {
	tests := []struct {
		code              int
		wantErr, wantPerm bool
	}{
		{200, false, false}, {201, false, false}, {204, false, false},
		{408, true, false}, {429, true, false}, {500, true, false}, {503, true, false},
		{400, true, true}, {401, true, true}, {404, true, true}, {409, true, true}, {422, true, true}, {302, true, true},
	}
	for _, tc := range tests {
		err := statusError(tc.code)
		if (err != nil) != tc.wantErr || process.IsPermanent(err) != tc.wantPerm {
			t.Errorf("status %d: got %v (permanent %v), want error %v, permanent %v", tc.code, err, process.IsPermanent(err), tc.wantErr, tc.wantPerm)
		}
	}
}

func TestPostDecodesTheAnswerAndMapsErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/leads":
			if r.Header.Get("Content-Type") != "application/json" {
				http.Error(w, "want JSON", http.StatusUnsupportedMediaType)
				return
			}
			_, _ = w.Write([]byte(`{"id":"L-1"}`))
		case "/api/busy":
			http.Error(w, "slow down", http.StatusTooManyRequests)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	c := New(srv.URL + "/api/")
	var l Lead
	if err := c.post(context.Background(), srv.Client(), "/leads", map[string]string{"a": "b"}, &l); err != nil || l.ID != "L-1" {
		t.Errorf("got lead %+v, %v; want L-1", l, err)
	}
	if err := c.post(context.Background(), srv.Client(), "/busy", nil, nil); err == nil || process.IsPermanent(err) {
		t.Errorf("429: got %v, want a retryable error", err)
	}
	if err := c.post(context.Background(), srv.Client(), "/gone", nil, nil); !process.IsPermanent(err) {
		t.Errorf("404: got %v, want a permanent error", err)
	}
}

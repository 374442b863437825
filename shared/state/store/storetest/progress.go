package storetest

import (
	"testing"

	"github.com/hookwall/hookwall/shared/state/store"
)

const progressID = "line#acme#0123456789abcdef"

var progressCases = []testCase{
	{"no progress saved reads as none", func(t *testing.T, e *env) {
		p, err := e.s.LoadProgress(e.ctx, progressID)
		if err != nil || len(p.Done) != 0 {
			t.Fatalf("load: %v, %v; want none", p, err)
		}
	}},
	{"saved progress reads back, and a save replaces it", func(t *testing.T, e *env) {
		var p store.Progress
		p.Set(0)
		p.Set(9)
		p.ExpiresAt = e.clk.Now().Add(Window).Unix()
		if err := e.s.SaveProgress(e.ctx, progressID, p); err != nil {
			t.Fatal(err)
		}
		e.expectOps(t, "save progress", map[string]int{"PutItem": 1})
		got, err := e.s.LoadProgress(e.ctx, progressID)
		e.expectOps(t, "load progress", map[string]int{"GetItem": 1})
		if err != nil || !got.Has(0) || !got.Has(9) || got.Has(1) || got.Has(100) || got.ExpiresAt != p.ExpiresAt {
			t.Fatalf("load: %+v, %v; want bits 0 and 9, expiring at %d", got, err, p.ExpiresAt)
		}
		p.Set(1)
		if err := e.s.SaveProgress(e.ctx, progressID, p); err != nil {
			t.Fatal(err)
		}
		if got, _ := e.s.LoadProgress(e.ctx, progressID); !got.Has(1) {
			t.Errorf("after a second save: %+v, want bit 1 set", got)
		}
		if got, _ := e.s.LoadProgress(e.ctx, progressID+"-other"); len(got.Done) != 0 {
			t.Errorf("another delivery reads %+v, want none", got)
		}
		if rec := e.get(t); rec != nil {
			t.Errorf("a progress item reads as the event record %+v", rec)
		}
	}},
	{"expired progress reads as none", func(t *testing.T, e *env) {
		var p store.Progress
		p.Set(3)
		p.ExpiresAt = e.clk.Now().Add(Window).Unix()
		if err := e.s.SaveProgress(e.ctx, progressID, p); err != nil {
			t.Fatal(err)
		}
		e.clk.Advance(Window + 1e9)
		if got, err := e.s.LoadProgress(e.ctx, progressID); err != nil || len(got.Done) != 0 {
			t.Fatalf("load after expiry: %+v, %v; want none (TTL deletion is lazy)", got, err)
		}
	}},
}

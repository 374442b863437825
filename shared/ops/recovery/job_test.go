package recovery

import (
	"strings"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
)

func TestFilterDefaultsAndRefusals(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	f, err := Filter{Since: now.Add(-time.Hour), Until: now}.normalized()
	if err != nil || len(f.Statuses) != 1 || f.Statuses[0] != webhook.StatusFailed {
		t.Fatalf("defaults: %+v %v, want FAILED", f, err)
	}
	for name, tt := range map[string]struct {
		f    Filter
		want string
	}{
		"no window":       {Filter{}, "since before until"},
		"an empty window": {Filter{Since: now, Until: now}, "since before until"},
		"SUCCEEDED":       {Filter{Since: now.Add(-time.Hour), Until: now, Statuses: []webhook.Status{webhook.StatusSucceeded}}, "cannot be recovered"},
		"RETRY":           {Filter{Since: now.Add(-time.Hour), Until: now, Statuses: []webhook.Status{webhook.StatusRetry}}, "cannot be recovered"},
		"a bad tenant":    {Filter{Since: now.Add(-time.Hour), Until: now, Tenant: "a b"}, "not a tenant name"},
	} {
		if _, err := tt.f.normalized(); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got %v, want %q", name, err, tt.want)
		}
	}
}

func TestJobItemRoundTrip(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	j := &Job{ID: "20260501-120000-abcdef", Rate: 2.5, State: StateCancelled, By: "ops",
		Filter: Filter{Since: now.Add(-time.Hour), Until: now, Statuses: []webhook.Status{webhook.StatusFailed, webhook.StatusDead}, Tenant: "acme", Handler: "forward"},
		Counts: Counts{Total: 9, Counted: true, Scanned: 40, Replayed: 5, Skipped: 1, Missing: 1, NotEnqueued: 1, OpsNotPublished: 2},
		Cursor: "line#acme#x", cursorSK: "EVENT", CreatedAt: now, UpdatedAt: now, LastError: "boom", Why: "why"}
	av, err := toItem(j, now.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	got, err := fromItem(av)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != j.ID || got.Rate != j.Rate || got.State != j.State || got.Counts != j.Counts || got.Cursor != j.Cursor ||
		got.cursorSK != j.cursorSK || !got.Filter.Since.Equal(j.Filter.Since) || !got.Filter.Until.Equal(j.Filter.Until) ||
		len(got.Filter.Statuses) != 2 || got.Filter.Tenant != "acme" || got.Filter.Handler != "forward" || got.LastError != "boom" || got.Why != "why" {
		t.Errorf("got %+v, want %+v", got, j)
	}
	if _, err := fromItem(jobKey("x")); err == nil {
		// a key alone decodes (no state): it must at least name the job
		if g, _ := fromItem(jobKey("x")); g.ID != "x" {
			t.Errorf("got id %q", g.ID)
		}
	}
}

func TestValidID(t *testing.T) {
	for id, want := range map[string]bool{"20260501-120000-abcdef": true, "": false, "a#b": false, strings.Repeat("a", 65): false} {
		if ValidID(id) != want {
			t.Errorf("ValidID(%q) = %v, want %v", id, !want, want)
		}
	}
}

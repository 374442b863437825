package localrun

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/hookwall/hookwall/shared/aws/bus"
	"github.com/hookwall/hookwall/shared/engine/drain"
	"github.com/hookwall/hookwall/shared/ops/control"
	"github.com/hookwall/hookwall/shared/state/targets"
	"github.com/hookwall/hookwall/shared/state/targets/memgate"
)

type heldCounts map[string]int

func (h heldCounts) HeldCount(_ context.Context, on string) (int, error) { return h[on], nil }

// drainHeld releases what its counts hold on a scope.
type drainHeld struct {
	held    heldCounts
	drained *[]string
}

func (d drainHeld) Release(_ context.Context, sc targets.Scope, _ drain.Options) (drain.Progress, error) {
	*d.drained = append(*d.drained, sc.String())
	return drain.Progress{Released: d.held[sc.String()]}, nil
}

// opsSeen records the operational events published.
type opsSeen struct{ ops []bus.Op }

func (o *opsSeen) PublishOps(_ context.Context, ops []bus.Op) error {
	o.ops = append(o.ops, ops...)
	return nil
}

// TestTargetsPanelPausesAndResumes: the page shows the pauses and their
// held counts, pauses and resumes from its buttons (POST with the control
// header only), a resume drains what is held, and each publishes its
// operational event as the CLI does.
func TestTargetsPanelPausesAndResumes(t *testing.T) {
	g, err := memgate.New(targets.Config{})
	if err != nil {
		t.Fatal(err)
	}
	held := heldCounts{"tenant#acme": 4}
	var drained []string
	ops := &opsSeen{}
	c, err := control.New(control.Config{Gate: g, Held: held, Drain: drainHeld{held, &drained}, Ops: ops})
	if err != nil {
		t.Fatal(err)
	}
	p := &Page{Control: c, Log: slog.New(slog.DiscardHandler)}
	port := 3000
	h := LocalOnly{Port: port, Next: p}
	do := func(method, path string, form url.Values, header map[string]string) (int, string) {
		var body io.Reader
		if form != nil {
			body = strings.NewReader(form.Encode())
		}
		r := httptest.NewRequest(method, "http://127.0.0.1:3000"+PagePath+path, body)
		if form != nil {
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		for k, v := range header {
			r.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code, w.Body.String()
	}
	ctl := map[string]string{ControlHeader: "1"}
	form := url.Values{"scope": {"tenant/acme"}, "reason": {"maintenance"}}

	if code, _ := do("POST", "pause", form, nil); code != http.StatusForbidden {
		t.Errorf("pause without the control header: %d, want 403", code)
	}
	if code, _ := do("POST", "pause", form, map[string]string{ControlHeader: "1", "Origin": "http://evil.example"}); code != http.StatusForbidden {
		t.Errorf("pause from another origin: %d, want 403", code)
	}
	if code, _ := do("GET", "pause", nil, ctl); code != http.StatusMethodNotAllowed {
		t.Errorf("GET pause: %d, want 405", code)
	}
	if code, body := do("POST", "pause", url.Values{"scope": {"queue/x"}}, ctl); code != http.StatusBadRequest {
		t.Errorf("a bad scope: %d %s, want 400", code, body)
	}
	if ps, _ := g.Pauses(context.Background()); len(ps) != 0 {
		t.Fatalf("refused requests paused: %v", ps)
	}
	code, body := do("POST", "pause", form, ctl)
	if code != http.StatusOK || !strings.Contains(body, `"outcome":"paused"`) {
		t.Fatalf("pause: %d %s", code, body)
	}
	code, body = do("GET", "targets", nil, nil)
	if code != http.StatusOK || !strings.Contains(body, `<tr data-scope="tenant/acme"><td><code>tenant/acme</code>`) ||
		!strings.Contains(body, "<td>maintenance</td><td>4</td>") || !strings.Contains(body, `data-action="resume" data-scope="tenant/acme"`) {
		t.Errorf("the panel:\n%s", body)
	}
	code, body = do("GET", "api/targets", nil, nil)
	var panel TargetsPanel
	if code != http.StatusOK || json.Unmarshal([]byte(body), &panel) != nil || len(panel.Pauses) != 1 || panel.Pauses[0].Held != 4 ||
		panel.Pauses[0].By != ReplayFunction {
		t.Errorf("api/targets: %d %s", code, body)
	}
	code, body = do("POST", "resume", url.Values{"scope": {"tenant/acme"}}, ctl)
	if code != http.StatusOK || !strings.Contains(body, "released 4 held event(s)") || len(drained) != 1 || drained[0] != "tenant#acme" {
		t.Errorf("resume: %d %s, drained %v", code, body, drained)
	}
	if ps, _ := g.Pauses(context.Background()); len(ps) != 0 {
		t.Errorf("still paused after the resume: %v", ps)
	}
	if len(ops.ops) != 2 || ops.ops[0].Type != bus.DetailTypeControlPaused || ops.ops[0].Scope != "tenant#acme" ||
		ops.ops[0].Reason != "maintenance" || ops.ops[1].Type != bus.DetailTypeControlResumed || ops.ops[1].Count != 4 {
		t.Errorf("operational events: %+v, want paused then resumed (4 released)", ops.ops)
	}
	big := url.Values{"scope": {"tenant/acme"}, "reason": {strings.Repeat("x", 2*maxControlBody)}}
	if code, _ := do("POST", "pause", big, ctl); code != http.StatusBadRequest {
		t.Errorf("an oversized form: %d, want 400", code)
	}
}

package localrun

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/hookwall/hookwall/shared/targets"
)

// ControlHeader must be on a pause or resume request from the page: a page
// of another origin cannot set it without a CORS preflight, which the
// runner never allows (as [ReplayHeader]).
const ControlHeader = "X-Hookwall-Control"

// Bounds of the page's control requests.
const (
	// maxControlBody bounds a pause or resume form.
	maxControlBody = 4 << 10
	// DrainTimeout bounds the drain a resume from the page runs before it
	// answers: what is left is released by the sweeper.
	DrainTimeout = 30 * time.Second
)

// Controls is the targets' shared state as the page uses it (targets.Gate).
type Controls interface {
	Pause(ctx context.Context, sc targets.Scope, by, reason string) error
	Resume(ctx context.Context, sc targets.Scope) error
	Pauses(ctx context.Context) ([]targets.Pause, error)
	Breakers(ctx context.Context) ([]targets.Breaker, error)
}

// HeldCounter counts the records held on a scope ("kind#name");
// *store.Table satisfies it.
type HeldCounter interface {
	HeldCount(ctx context.Context, on string) (int, error)
}

// Drainer releases the events held on a scope at its target's rate and
// returns how many it released (the drain of `hookwall resume`).
type Drainer func(ctx context.Context, sc targets.Scope) (int, error)

// TargetView is one target of the page's targets panel.
type TargetView struct {
	Target   string    `json:"target"`
	State    string    `json:"state"`
	Calls    int       `json:"calls"`
	Fails    int       `json:"fails"`
	OpenedAt time.Time `json:"openedAt,omitzero"`
	ProbeAt  time.Time `json:"probeAt,omitzero"`
	Held     int       `json:"held"`
	// Scope is the target's scope as the CLI and the pause form take it.
	Scope string `json:"scope"`
	// Paused is set when the target itself is paused.
	Paused bool `json:"paused"`
}

// PauseView is one pause of the page's targets panel.
type PauseView struct {
	Scope  string    `json:"scope"`
	By     string    `json:"by,omitempty"`
	Reason string    `json:"reason,omitempty"`
	At     time.Time `json:"at"`
	Held   int       `json:"held"`
}

// TargetsPanel is what the targets panel shows.
type TargetsPanel struct {
	Targets []TargetView `json:"targets"`
	Pauses  []PauseView  `json:"pauses"`
}

// ControlAnswer is the JSON answer of a pause or resume.
type ControlAnswer struct {
	Outcome  string `json:"outcome"` // paused, resumed, error
	Scope    string `json:"scope,omitempty"`
	Released int    `json:"released,omitempty"`
	Message  string `json:"message"`
}

// panel reads the breakers, the pauses and the held counts.
func (p *Page) panel(ctx context.Context) (TargetsPanel, error) {
	out := TargetsPanel{Targets: []TargetView{}, Pauses: []PauseView{}}
	if p.Controls == nil {
		return out, nil
	}
	breakers, err := p.Controls.Breakers(ctx)
	if err != nil {
		return out, err
	}
	pauses, err := p.Controls.Pauses(ctx)
	if err != nil {
		return out, err
	}
	held := func(sc targets.Scope) (int, error) {
		if p.Held == nil {
			return 0, nil
		}
		return p.Held.HeldCount(ctx, sc.String())
	}
	paused := map[targets.Scope]bool{}
	for _, ps := range pauses {
		n, err := held(ps.Scope)
		if err != nil {
			return out, err
		}
		paused[ps.Scope] = true
		out.Pauses = append(out.Pauses, PauseView{Scope: ps.Scope.Kind + "/" + ps.Scope.Name, By: ps.By, Reason: ps.Reason, At: ps.At, Held: n})
	}
	for _, b := range breakers {
		sc := targets.Scope{Kind: targets.KindTarget, Name: b.Target}
		n, err := held(sc)
		if err != nil {
			return out, err
		}
		out.Targets = append(out.Targets, TargetView{Target: b.Target, State: b.State, Calls: b.Calls, Fails: b.Fails,
			OpenedAt: b.OpenedAt, ProbeAt: b.ProbeAt, Held: n, Scope: "target/" + b.Target, Paused: paused[sc]})
	}
	return out, nil
}

// control handles POST PagePath+"pause" and PagePath+"resume" (form: scope
// kind/name, reason for a pause), from the page only (ControlHeader).
func (p *Page) control(w http.ResponseWriter, r *http.Request, resume bool) {
	answer := func(status int, a ControlAnswer) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(a)
	}
	switch {
	case r.Method != http.MethodPost:
		answer(http.StatusMethodNotAllowed, ControlAnswer{Outcome: "error", Message: "POST only"})
		return
	case r.Header.Get(ControlHeader) == "":
		answer(http.StatusForbidden, ControlAnswer{Outcome: "error", Message: "missing " + ControlHeader + " header"})
		return
	case p.Controls == nil:
		answer(http.StatusNotImplemented, ControlAnswer{Outcome: "error", Message: "pause and resume are not available"})
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxControlBody)
	if err := r.ParseForm(); err != nil {
		answer(http.StatusBadRequest, ControlAnswer{Outcome: "error", Message: "bad form: " + err.Error()})
		return
	}
	sc, err := targets.ParseScope(r.PostFormValue("scope"))
	if err != nil {
		answer(http.StatusBadRequest, ControlAnswer{Outcome: "error", Message: err.Error()})
		return
	}
	name := sc.Kind + "/" + sc.Name
	ctx := r.Context()
	if !resume {
		reason := truncateText(r.PostFormValue("reason"), 200)
		if err := p.Controls.Pause(ctx, sc, ReplayFunction, reason); err != nil {
			answer(http.StatusServiceUnavailable, ControlAnswer{Outcome: "error", Scope: name, Message: err.Error()})
			return
		}
		p.Log.LogAttrs(ctx, slog.LevelInfo, "paused", slog.String("scope", name), slog.String("reason", reason))
		answer(http.StatusOK, ControlAnswer{Outcome: "paused", Scope: name,
			Message: "paused " + name + ": its events are received and held; Resume drains them"})
		return
	}
	if err := p.Controls.Resume(ctx, sc); err != nil {
		answer(http.StatusServiceUnavailable, ControlAnswer{Outcome: "error", Scope: name, Message: err.Error()})
		return
	}
	a := ControlAnswer{Outcome: "resumed", Scope: name, Message: "resumed " + name + "; the sweeper releases its held events"}
	if p.Drain != nil {
		dctx, cancel := context.WithTimeout(ctx, DrainTimeout)
		n, err := p.Drain(dctx, sc)
		cancel()
		a.Released = n
		switch {
		case errors.Is(err, context.DeadlineExceeded):
			a.Message = fmt.Sprintf("resumed %s: released %d held event(s) in %s; the sweeper releases the rest", name, n, DrainTimeout)
		case err != nil:
			a.Message = fmt.Sprintf("resumed %s: released %d held event(s), then the drain failed (the sweeper releases the rest): %v", name, n, err)
		default:
			a.Message = fmt.Sprintf("resumed %s: released %d held event(s) at the target's rate", name, n)
		}
	}
	p.Log.LogAttrs(ctx, slog.LevelInfo, "resumed", slog.String("scope", name), slog.Int("released", a.Released))
	answer(http.StatusOK, a)
}

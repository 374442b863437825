package localrun

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/hookwall/hookwall/shared/ops/control"
	"github.com/hookwall/hookwall/shared/state/targets"
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

// TargetsPanel is what the targets panel shows.
type TargetsPanel = control.Panel

// ControlAnswer is the JSON answer of a pause or resume.
type ControlAnswer struct {
	Outcome  string `json:"outcome"` // paused, resumed, error
	Scope    string `json:"scope,omitempty"`
	Released int    `json:"released,omitempty"`
	Message  string `json:"message"`
}

// panel reads the breakers, the pauses and the held counts.
func (p *Page) panel(ctx context.Context) (TargetsPanel, error) {
	if p.Control == nil {
		return TargetsPanel{Targets: []control.Target{}, Pauses: []control.Pause{}}, nil
	}
	return p.Control.Panel(ctx)
}

// control handles POST PagePath+"pause" and PagePath+"resume" (form: scope
// kind/name, reason for a pause), from the page only (ControlHeader).
func (p *Page) control(w http.ResponseWriter, r *http.Request, resume bool) {
	answer, ok := openAction(w, r, p.Control != nil, "pause and resume are not available", func(m string) ControlAnswer { return ControlAnswer{Outcome: "error", Message: m} })
	if !ok {
		return
	}
	sc, err := targets.ParseScope(r.PostFormValue("scope"))
	if err != nil {
		answer(http.StatusBadRequest, ControlAnswer{Outcome: "error", Message: err.Error()})
		return
	}
	name := control.Name(sc)
	ctx := r.Context()
	if !resume {
		reason := truncateText(r.PostFormValue("reason"), 200)
		res, err := p.Control.Pause(ctx, sc, ReplayFunction, reason)
		if err != nil {
			answer(http.StatusServiceUnavailable, ControlAnswer{Outcome: "error", Scope: name, Message: err.Error()})
			return
		}
		p.Log.LogAttrs(ctx, slog.LevelInfo, "paused", slog.String("scope", name), slog.String("reason", reason))
		p.logOps(ctx, res)
		answer(http.StatusOK, ControlAnswer{Outcome: "paused", Scope: name,
			Message: "paused " + name + ": its events are received and held; Resume drains them"})
		return
	}
	res, err := p.Control.Resume(ctx, sc, control.ResumeOptions{Timeout: DrainTimeout})
	if err != nil && !res.Drained {
		answer(http.StatusServiceUnavailable, ControlAnswer{Outcome: "error", Scope: name, Message: err.Error()})
		return
	}
	p.logOps(ctx, res)
	a := ControlAnswer{Outcome: "resumed", Scope: name, Released: res.Released, Message: res.Summary(sc)}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		a.Message += fmt.Sprintf("; the drain stopped at its %s limit: the sweeper releases the rest", DrainTimeout)
	case err != nil:
		a.Message += fmt.Sprintf("; %v (the sweeper releases the rest)", err)
	}
	p.Log.LogAttrs(ctx, slog.LevelInfo, "resumed", slog.String("scope", name), slog.Int("released", a.Released))
	answer(http.StatusOK, a)
}

// logOps logs an operational event that was not published.
func (p *Page) logOps(ctx context.Context, res control.Result) {
	if res.OpsErr != nil {
		p.Log.LogAttrs(ctx, slog.LevelWarn, "operational event not published", slog.Any("error", res.OpsErr))
	}
}

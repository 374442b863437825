package crm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"github.com/hookwall/hookwall/shared/config/setting"
	"github.com/hookwall/hookwall/shared/engine/platform"
	"github.com/hookwall/hookwall/shared/engine/process"
	"github.com/hookwall/hookwall/shared/protocol/provider/line"
)

// HandlerName is the stable name of the lead-from-follow handler: it is part
// of every idempotency key the handler sends, so renaming it makes a new handler.
const HandlerName = "crm.lead-from-follow"

// Client calls the CRM's leads API. Its methods are the team's handlers.
type Client struct {
	base string
}

// New returns a Client for the leads API at baseURL (e.g.
// https://crm.example.com/api), which serves POST /leads,
// POST /leads/{id}/tags and DELETE /leads/{id} and honours Idempotency-Key.
func New(baseURL string) *Client {
	return &Client{base: strings.TrimRight(baseURL, "/")}
}

// LeadsURL is the crm handlers' one setting: the CRM's leads API.
var LeadsURL = setting.Setting{
	Name:    "CRM_LEADS_URL",
	Kind:    setting.KindURL,
	Doc:     "the CRM's leads API of the example crm handlers (empty: they are off)",
	Example: "https://crm.example.com/api",
}

// Team is the CRM team: its setting and its handlers.
// functions/processor/handlers lists it.
var Team = platform.Team{Owner: "functions/processor/handlers/crm", Settings: []setting.Setting{LeadsURL}, Register: Register}

// Register adds the CRM team's handlers to r when [LeadsURL] is set; it
// needs no dependency.
func Register(r *process.Registry, _ platform.Deps) {
	base := r.String(LeadsURL)
	if base == "" {
		return
	}
	c := New(base)
	process.Handle(r, HandlerName, line.Follow, c.leadFromFollow, process.Compensate(c.undo))
}

// Step names: part of the journal and of the idempotency keys.
const (
	stepCreateLead = "create-lead"
	stepTagLead    = "tag-lead"
)

// Lead is the CRM's answer to a created lead.
type Lead struct {
	ID string `json:"id"`
}

// leadFromFollow creates a lead for the user who followed the bot, then tags
// it. The lead's id is journaled with the first step, so a retry tags the
// same lead without creating it again.
func (c *Client) leadFromFollow(ctx context.Context, ev *process.Event[line.FollowEvent]) error {
	user := ev.Data.Source.UserID
	if user == "" {
		return process.Permanent(errors.New("crm: follow event without a user id"))
	}
	lead, err := process.StepResult(ctx, ev, stepCreateLead, func(ctx context.Context, _ string) (Lead, error) {
		var l Lead
		err := c.post(ctx, ev.HTTPClient(), "/leads", map[string]any{
			"lineUserId": user, "source": "line-follow", "unblocked": ev.Data.Follow.IsUnblocked,
		}, &l)
		if err == nil && l.ID == "" {
			err = process.Permanent(errors.New("crm: create lead: answer without an id"))
		}
		return l, err
	})
	if err != nil {
		return err
	}
	return ev.Step(ctx, stepTagLead, func(ctx context.Context, _ string) error {
		return c.post(ctx, ev.HTTPClient(), "/leads/"+url.PathEscape(lead.ID)+"/tags", map[string]string{"tag": "line-follower"}, nil)
	})
}

// undo is the handler's compensation: it deletes the lead the create-lead
// step created (DELETE /leads/{id}; the client sends the undo's own
// Idempotency-Key). A lead already gone (404, 410) counts as deleted. The
// tag-lead step has nothing of its own to undo: the tag goes with the lead.
func (c *Client) undo(ctx context.Context, u *process.Undo) error {
	if u.Step != stepCreateLead {
		return nil
	}
	lead, err := process.UndoResult[Lead](u)
	if err != nil {
		return err
	}
	if lead.ID == "" {
		return process.Permanent(errors.New("crm: undo create-lead: journaled lead without an id"))
	}
	path := "/leads/" + url.PathEscape(lead.ID)
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, c.base+path, nil)
	if err != nil {
		return process.Permanent(fmt.Errorf("crm: DELETE %s: %w", path, err))
	}
	resp, err := u.HTTPClient().Do(req)
	if err != nil {
		return fmt.Errorf("crm: DELETE %s: %w", path, err) // transport error or timeout: retried
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusGone {
		u.Log.InfoContext(ctx, "lead already gone", slog.String("lead_id", lead.ID))
		return nil
	}
	if err := statusError(resp.StatusCode); err != nil {
		return fmt.Errorf("crm: DELETE %s: %w", path, err)
	}
	u.Log.InfoContext(ctx, "lead deleted", slog.String("lead_id", lead.ID))
	return nil
}

// post sends body as JSON and decodes a 2xx answer into out (if not nil).
// The client sets Idempotency-Key (the step's key).
func (c *Client) post(ctx context.Context, hc *http.Client, path string, body, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return process.Permanent(fmt.Errorf("crm: POST %s: encode: %w", path, err))
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+path, bytes.NewReader(b))
	if err != nil {
		return process.Permanent(fmt.Errorf("crm: POST %s: %w", path, err))
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("crm: POST %s: %w", path, err) // transport error or timeout: retried
	}
	defer resp.Body.Close()
	if err := statusError(resp.StatusCode); err != nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		return fmt.Errorf("crm: POST %s: %w", path, err)
	}
	if out == nil {
		return nil
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(out); err != nil {
		return fmt.Errorf("crm: POST %s: decode answer: %w", path, err)
	}
	return nil
}

// statusError maps an HTTP status to an outcome with [process.HTTPStatus]:
// nil for 2xx, a retryable error for 408, 429 and 5xx, a permanent error for
// any other status.
func statusError(code int) error { return process.HTTPStatus(code) }

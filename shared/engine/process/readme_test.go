package process_test

// The README's "Add a handler" recipe, compiled and run: the regions between
// the README: markers are the README's code blocks, verbatim
// (TestREADMEShowsTheRecipe holds them together). In the README the team
// code is package tickets and the test package tickets_test.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/hookwall/hookwall/shared/config/setting"
	"github.com/hookwall/hookwall/shared/engine/dispatch"
	"github.com/hookwall/hookwall/shared/engine/platform"
	"github.com/hookwall/hookwall/shared/engine/process"
	"github.com/hookwall/hookwall/shared/engine/processtest"
	"github.com/hookwall/hookwall/shared/protocol/provider/line"
)

// README:team begin

// APIURL is the team's one setting: its tickets API. The README's
// handler-settings table and template.yaml are generated from it.
var APIURL = setting.Setting{
	Name:    "TICKETS_API_URL",
	Kind:    setting.KindURL,
	Doc:     "the tickets team's API (empty: its handlers are off)",
	Example: "https://tickets.example.com/api",
}

// Team is the tickets team, as functions/processor/handlers lists it: its
// package, every setting it reads, and its Register.
var Team = platform.Team{
	Owner:    "functions/processor/handlers/tickets",
	Settings: []setting.Setting{APIURL},
	Register: Register,
}

// Register adds the tickets team's handlers to r. It reads only the
// settings Team lists; d holds the platform's clients (unused here).
func Register(r *process.Registry, d platform.Deps) {
	base := r.String(APIURL)
	if base == "" {
		return // not configured: the team is off
	}
	c := &Client{base: base}
	process.Handle(r, "tickets.from-line-message", line.Message, c.openTicket,
		process.MaxAttempts(5), process.Compensate(c.closeTicket))
}

// Client calls the tickets API, which honours Idempotency-Key.
type Client struct{ base string }

// Ticket is the API's answer to an opened ticket.
type Ticket struct {
	ID string `json:"id"`
}

// openTicket opens a ticket for a LINE message, once per event: the step's
// result (the ticket) is journaled, so a retry never opens a second one.
func (c *Client) openTicket(ctx context.Context, ev *process.Event[line.MessageEvent]) error {
	if ev.Data.Message.Type != "text" {
		return nil // nothing to do
	}
	t, err := process.StepResult(ctx, ev, "open-ticket", func(ctx context.Context, idemKey string) (Ticket, error) {
		var t Ticket
		err := c.call(ctx, ev.HTTPClient(), http.MethodPost, "/tickets",
			map[string]string{"lineUserId": ev.Data.Source.UserID, "text": ev.Data.Message.Text}, &t)
		return t, err
	})
	if err != nil {
		return err // Step's error as it is: retried, or permanent
	}
	ev.Log.InfoContext(ctx, "ticket opened", "ticket_id", t.ID)
	return nil
}

// closeTicket is the compensation: when the event ends on the dead-letter
// path, it closes the ticket open-ticket opened.
func (c *Client) closeTicket(ctx context.Context, u *process.Undo) error {
	t, err := process.UndoResult[Ticket](u) // what StepResult journaled
	if err != nil {
		return err
	}
	return c.call(ctx, u.HTTPClient(), http.MethodDelete, "/tickets/"+url.PathEscape(t.ID), nil, nil)
}

// call sends body as JSON and decodes a 2xx answer into out. The client
// sends the step's Idempotency-Key; process.HTTPStatus maps the answer.
func (c *Client) call(ctx context.Context, hc *http.Client, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return process.Permanent(err) // never retried: the event fails at once
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return process.Permanent(err)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("tickets: %s %s: %w", method, path, err) // retried with backoff
	}
	defer resp.Body.Close()
	if err := process.HTTPStatus(resp.StatusCode); err != nil {
		return fmt.Errorf("tickets: %s %s: %w", method, path, err) // 408, 429, 5xx retried; other 4xx permanent
	}
	if out == nil {
		return nil
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

// README:team end

// tickets stands for the team's package, as the README's test calls it.
var tickets = struct {
	Team   platform.Team
	APIURL setting.Setting
}{Team, APIURL}

// README:test begin

// messageJSON is a LINE text message event as the receiver stores it.
const messageJSON = `{"type":"message","timestamp":1700000000000,"mode":"active","webhookEventId":"01HMESSAGE",
"source":{"type":"user","userId":"U4af4980629"},"message":{"id":"1","type":"text","text":"my order is late"}}`

func TestOpenTicketOncePerKey(t *testing.T) {
	api := processtest.NewEffectServer(t, nil) // the tickets API: counts requests per Idempotency-Key
	reg := processtest.NewRegistry(t, tickets.Team, processtest.Env{tickets.APIURL.Name: api.URL}, platform.Deps{})
	rep := processtest.Run(t, reg, line.Message, []byte(messageJSON),
		processtest.Redeliver(3), processtest.CrashAfterEachStep())
	api.AssertOnce(t) // each effect once per key
	if rep.Status.String() != "SUCCEEDED" || len(rep.StepKeys()) != 3 {
		t.Errorf("got %s with %d step keys, want SUCCEEDED and 3 (the plain run and two crash runs)", rep.Status, len(rep.StepKeys()))
	}
}

// README:test end

// Unset, the team registers nothing; set, its handler with its compensation.
func TestTicketsIsOffWithoutItsSetting(t *testing.T) {
	off := processtest.NewRegistry(t, tickets.Team, nil, platform.Deps{})
	if hs := dispatch.Handlers(off); len(hs) != 0 {
		t.Errorf("TICKETS_API_URL unset: got handlers %+v, want none", hs)
	}
	on := processtest.NewRegistry(t, tickets.Team, processtest.Env{"TICKETS_API_URL": "https://tickets.example.com/api"}, platform.Deps{})
	hs := dispatch.Handlers(on)
	if len(hs) != 1 || hs[0].Name != "tickets.from-line-message" || !hs[0].Compensated || hs[0].MaxAttempts != 5 ||
		hs[0].Owner != "functions/processor/handlers/tickets" {
		t.Errorf("got handlers %+v", hs)
	}
	if s, err := platform.Settings(tickets.Team); err != nil || len(s) != 1 || s[0].Name != "TICKETS_API_URL" || s[0].Kind != "URL" ||
		s[0].Sample() != "https://tickets.example.com/api" || s[0].Owner != "functions/processor/handlers/tickets" {
		t.Errorf("got settings %+v, %v", s, err)
	}
	if _, err := platform.Build(func(string) string { return "tickets.example.com" }, platform.Deps{}, tickets.Team); err == nil ||
		!strings.Contains(err.Error(), "TICKETS_API_URL: want an absolute http(s) URL") {
		t.Errorf("an invalid TICKETS_API_URL: got %v, want an error naming it", err)
	}
}

// region returns the lines between "// README:<name> begin" and
// "// README:<name> end" of this file, trimmed of blank lines at both ends.
func region(t *testing.T, src, name string) string {
	t.Helper()
	_, rest, ok := strings.Cut(src, "// README:"+name+" begin\n")
	if !ok {
		t.Fatalf("no README:%s region", name)
	}
	body, _, ok := strings.Cut(rest, "// README:"+name+" end\n")
	if !ok {
		t.Fatalf("README:%s region has no end", name)
	}
	return strings.Trim(body, "\n") + "\n"
}

// The README's recipe shows this file's code, as it compiles and passes here.
func TestREADMEShowsTheRecipe(t *testing.T) {
	src, err := os.ReadFile("readme_test.go")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"team", "test"} {
		if want := region(t, string(src), name); !strings.Contains(string(readme), "```go\n"+want+"```\n") {
			t.Errorf("README.md has no go block equal to shared/engine/process/readme_test.go's README:%s region:\n%s", name, want)
		}
	}
}

package localrun

import (
	"bytes"
	"cmp"
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/ops/control"
	"github.com/hookwall/hookwall/shared/ops/recovery"
	"github.com/hookwall/hookwall/shared/state/store"
)

// Page limits.
const (
	// MaxPageEvents is the most events the page lists, newest first.
	MaxPageEvents = 100
	// maxScanItems bounds the Scan behind one listing (records and journal
	// entries together): the page is for a local table.
	maxScanItems = 5000
	// maxPayloadShown bounds the payload shown per event.
	maxPayloadShown = 4 << 10
)

// NoteHeader carries the listing's note on the JSON list (api/events): how
// the list is partial, when it is.
const NoteHeader = "X-Hookwall-Note"

// ReplayHeader must be on a replay request: a page of another origin cannot
// set it without a CORS preflight, which the runner never allows.
const ReplayHeader = "X-Hookwall-Replay"

//go:embed page.html
var pageFS embed.FS

var pageTemplate = template.Must(template.New("page.html").Funcs(template.FuncMap{
	"clock": func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.Local().Format("15:04:05.000")
	},
	"stamp": func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.Local().Format("2006-01-02 15:04:05.000")
	},
	"lower": strings.ToLower,
}).ParseFS(pageFS, "page.html"))

// TableReader is the part of the DynamoDB client the page reads with;
// *dynamodb.Client satisfies it.
type TableReader interface {
	Scan(ctx context.Context, in *dynamodb.ScanInput, optFns ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error)
	Query(ctx context.Context, in *dynamodb.QueryInput, optFns ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
}

// Page serves the runner's page under [PagePath]: the recent events of the
// table with their status, history and journal, refreshed by the page
// itself, and a Replay button per event.
type Page struct {
	// DB and Table read the events (required).
	DB    TableReader
	Table string
	// Recent are the keys this runner's receiver claimed, read first
	// (optional: without it, the page lists what a bounded Scan finds).
	Recent *Recent
	// Replay and Queue replay an event: the record back to RECEIVED, then
	// its envelope on the main queue (required for replay; *store.Table
	// and *queue.Queue satisfy them).
	Replay recovery.Replayer
	Queue  recovery.Sender
	// Window is how long a replayed record is kept at least (the dedup window).
	Window time.Duration
	// Info are the lines of the page's header (label → value).
	Info [][2]string
	// Log receives replayed lines (required).
	Log *slog.Logger
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Control backs the targets panel: breakers, pauses, held counts, and
	// its Pause and Resume buttons, which act as `hookwall pause|resume`
	// do (shared/ops/control: the drain, the operational events). Optional:
	// without it the panel is empty and the buttons answer 501.
	Control *control.Controller
	// Jobs back the recover panel: start a recovery job (as `hookwall
	// recover` does: the same filter, its progress and ETA, Cancel), run by
	// this process (see pageJobs). Optional: without it the panel is
	// hidden and its routes answer 501.
	Jobs RecoveryJobs

	jobs pageJobs
}

// EventView is one event as the page shows it.
type EventView struct {
	Key, Provider, Tenant, Type string
	Status                      webhook.Status
	ReceivedAt, UpdatedAt       time.Time
	Version, Attempts           int64
	LastError                   string
	LeaseOwner                  string
	History                     []webhook.HistoryEntry
	HistoryDropped              int
	Steps                       []StepView
	Payload                     string
	// Calls are the newest outside calls of its handlers, oldest first;
	// CallCount counts them all.
	Calls     []CallView
	CallCount int64
	// Deliveries counts the deliveries that reached the table (the first
	// included), the last at LastDeliveryAt.
	Deliveries     int64
	LastDeliveryAt time.Time
}

// CallView is one outside call of the event's handlers.
type CallView struct {
	At      time.Time
	Target  string
	Status  int // 0: no answer (see Error)
	Latency time.Duration
	Error   string
	Snippet string
}

// StepView is one journal entry of the event's current claim.
type StepView struct {
	Handler, Step string
	CompletedAt   time.Time
	Result        string
	Undo          bool
}

// Terminal reports a status the event stays in.
func (e EventView) Terminal() bool { return e.Status.Terminal() }

// ID is an HTML id for the event's row.
func (e EventView) ID() string { return "ev-" + url.QueryEscape(e.Key) }

func (p *Page) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}

// ServeHTTP serves the page (GET PagePath), its rows (GET PagePath+"events"), the
// events as JSON (GET PagePath+"api/events"), replays (POST PagePath+"replay"),
// the targets panel (GET PagePath+"targets", as JSON PagePath+"api/targets"),
// its pause and resume (POST PagePath+"pause", PagePath+"resume"), and the
// recover panel (GET PagePath+"jobs", as JSON PagePath+"api/jobs"; POST
// PagePath+"recover" starts a job, PagePath+"recover/cancel" cancels one).
func (p *Page) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch rest := strings.TrimPrefix(r.URL.Path, strings.TrimSuffix(PagePath, "/")); rest {
	case "", "/":
		if !readOnly(w, r) {
			return
		}
		p.render(w, r, "page")
	case "/events":
		if !readOnly(w, r) {
			return
		}
		p.render(w, r, "rows")
	case "/api/events":
		if !readOnly(w, r) {
			return
		}
		l, err := p.List(r.Context())
		if err == nil && l.Note != "" {
			w.Header().Set(NoteHeader, l.Note)
		}
		if l.Events == nil {
			l.Events = []EventView{}
		}
		serveJSON(w, l.Events, err)
	case "/replay":
		p.replay(w, r)
	case "/targets", "/api/targets":
		if !readOnly(w, r) {
			return
		}
		if rest == "/targets" {
			p.render(w, r, "targets")
			return
		}
		panel, err := p.panel(r.Context())
		serveJSON(w, panel, err)
	case "/pause", "/resume":
		p.control(w, r, rest == "/resume")
	case "/recover", "/recover/cancel":
		p.recover(w, r, rest == "/recover/cancel")
	case "/jobs", "/api/jobs":
		if !readOnly(w, r) {
			return
		}
		if rest == "/jobs" {
			p.render(w, r, "jobs")
			return
		}
		js, err := p.jobsList(r.Context())
		serveJSON(w, js, err)
	default:
		http.NotFound(w, r)
	}
}

// readOnly answers 405 to a request that is neither GET nor HEAD, and
// reports whether the request may go on.
func readOnly(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return false
	}
	return true
}

// serveJSON answers v as JSON, never cached, or 503 with err when reading
// it failed.
func serveJSON(w http.ResponseWriter, v any, err error) {
	if err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(v)
}

func (p *Page) render(w http.ResponseWriter, r *http.Request, name string) {
	data := map[string]any{"Info": p.Info, "Now": p.now(), "Max": MaxPageEvents, "Controls": p.Control != nil, "Recover": p.Jobs != nil}
	if name == "page" || name == "jobs" {
		js, err := p.jobsList(r.Context())
		data["Jobs"] = js
		if err != nil {
			data["JobsError"] = err.Error()
		}
	}
	if name == "page" || name == "rows" {
		l, err := p.List(r.Context())
		data["Events"], data["Note"] = l.Events, l.Note
		if err != nil {
			data["Error"] = err.Error()
		}
	}
	if name == "page" || name == "targets" {
		panel, err := p.panel(r.Context())
		data["Panel"] = panel
		if err != nil {
			data["PanelError"] = err.Error()
		}
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Security-Policy", "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'unsafe-inline'")
	if err := pageTemplate.ExecuteTemplate(w, name, data); err != nil {
		p.Log.WarnContext(r.Context(), "page: render", slog.Any("error", err))
	}
}

// Listing is what the page lists: the newest events, and a note when the
// list may miss some.
type Listing struct {
	Events []EventView
	// Note says how the list is partial ("" when it is not).
	Note string
}

// Events returns the newest events (at most MaxPageEvents, by receivedAt),
// with the journal entries of each one's current claim. See [Page.List].
func (p *Page) Events(ctx context.Context) ([]EventView, error) {
	l, err := p.List(ctx)
	return l.Events, err
}

// List returns the newest events. The events this runner's receiver
// claimed (Recent) are read by key, one Query each, whatever the table's
// size. Only when they are fewer than MaxPageEvents is the rest looked for
// by a Scan, bounded to maxScanItems items (events of earlier runs, or
// written by other programs); when that Scan stops before the end of the
// table, the listing's Note says so.
func (p *Page) List(ctx context.Context) (Listing, error) {
	var l Listing
	c := collected{steps: map[string][]journalItem{}, payloads: map[string]store.Payload{}, seen: map[string]bool{}}
	var keys []string
	if p.Recent != nil {
		keys = p.Recent.Newest(MaxPageEvents)
	}
	if err := p.queryKeys(ctx, keys, &c); err != nil {
		return l, err
	}
	scanned, more := 0, false
	if len(c.recs) < MaxPageEvents {
		var err error
		if scanned, more, err = p.scan(ctx, &c); err != nil {
			return l, err
		}
	}
	slices.SortFunc(c.recs, func(a, b store.Record) int {
		return cmp.Or(cmp.Compare(b.ReceivedAt, a.ReceivedAt), strings.Compare(a.Key, b.Key))
	})
	total := len(c.recs)
	if len(c.recs) > MaxPageEvents {
		c.recs = c.recs[:MaxPageEvents]
	}
	switch {
	case more:
		l.Note = fmt.Sprintf("partial: showing the newest %d events found; the events this runner received are all there, "+
			"but older ones were looked for among the first %d items of a table that holds more", len(c.recs), scanned)
	case p.Recent != nil && p.Recent.Len() > MaxPageEvents, total > MaxPageEvents:
		l.Note = fmt.Sprintf("showing the newest %d of more than %d events", MaxPageEvents, MaxPageEvents)
	}
	l.Events = make([]EventView, len(c.recs))
	for i, rec := range c.recs {
		l.Events[i] = p.view(rec, &c)
	}
	return l, nil
}

// collected are the items read for a listing.
type collected struct {
	recs     []store.Record
	steps    map[string][]journalItem
	payloads map[string]store.Payload // pk + "\x00" + sk of each payload item
	seen     map[string]bool          // keys whose items were read by key
}

// add sorts one item of the table into c.
func (p *Page) add(item map[string]types.AttributeValue, c *collected) error {
	sk, _ := item[store.AttrSK].(*types.AttributeValueMemberS)
	switch {
	case sk == nil:
	case sk.Value == store.SKEvent:
		var rec store.Record
		if err := attributevalue.UnmarshalMap(item, &rec); err != nil {
			return fmt.Errorf("decode record: %w", err)
		}
		if !rec.Expired(p.now()) {
			c.recs = append(c.recs, rec)
		}
		// Journal entries kept in the record (shared/state/store/journal.go) are its claim's.
		if entries, err := store.RecordSteps(item); err == nil {
			for _, e := range entries {
				c.steps[rec.Key] = append(c.steps[rec.Key], journalItem{Key: rec.Key, ClaimID: rec.ClaimID, Handler: e.Handler,
					Step: e.Step, Result: e.Result, CompletedAt: e.CompletedAt.UnixMilli()})
			}
		}
	case strings.HasPrefix(sk.Value, store.SKPayloadPrefix):
		var pi struct {
			Key     string        `dynamodbav:"pk"`
			Payload store.Payload `dynamodbav:"payload"`
		}
		if err := attributevalue.UnmarshalMap(item, &pi); err == nil {
			c.payloads[pi.Key+"\x00"+sk.Value] = pi.Payload
		}
	case strings.HasPrefix(sk.Value, store.SKStepPrefix):
		var j journalItem
		if err := attributevalue.UnmarshalMap(item, &j); err == nil {
			c.steps[j.Key] = append(c.steps[j.Key], j)
		}
	}
	return nil
}

// queryConcurrency bounds the Queries of one listing in flight.
const queryConcurrency = 8

// queryKeys reads every item of each key (record, journal, payload) with a
// consistent Query.
func (p *Page) queryKeys(ctx context.Context, keys []string, c *collected) error {
	type result struct {
		items []map[string]types.AttributeValue
		err   error
	}
	results := make([]result, len(keys))
	sem := make(chan struct{}, queryConcurrency)
	var wg sync.WaitGroup
	for i, key := range keys {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			in := &dynamodb.QueryInput{TableName: aws.String(p.Table), ConsistentRead: aws.Bool(true),
				KeyConditionExpression:    aws.String("#pk = :pk"),
				ExpressionAttributeNames:  map[string]string{"#pk": store.AttrPK},
				ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: key}}}
			for page := 0; page < 4; page++ { // a record, its payload and its steps: one page, rarely more
				out, err := p.DB.Query(ctx, in)
				if err != nil {
					results[i].err = fmt.Errorf("query %s for %s: %w", p.Table, key, err)
					return
				}
				results[i].items = append(results[i].items, out.Items...)
				if len(out.LastEvaluatedKey) == 0 {
					return
				}
				in.ExclusiveStartKey = out.LastEvaluatedKey
			}
		})
	}
	wg.Wait()
	for i, r := range results {
		if r.err != nil {
			return r.err
		}
		c.seen[keys[i]] = true
		for _, item := range r.items {
			if err := p.add(item, c); err != nil {
				return err
			}
		}
	}
	return nil
}

// scan reads the table from its start, at most maxScanItems items, and
// adds the items of keys not read already; more says it stopped before the
// end of the table.
func (p *Page) scan(ctx context.Context, c *collected) (scanned int, more bool, err error) {
	in := &dynamodb.ScanInput{TableName: aws.String(p.Table), ConsistentRead: aws.Bool(true)}
	for {
		if scanned >= maxScanItems {
			return scanned, true, nil
		}
		in.Limit = aws.Int32(int32(min(1000, maxScanItems-scanned)))
		out, err := p.DB.Scan(ctx, in)
		if err != nil {
			return scanned, false, fmt.Errorf("scan %s: %w", p.Table, err)
		}
		for _, item := range out.Items {
			scanned++
			if pk, _ := item[store.AttrPK].(*types.AttributeValueMemberS); pk != nil && c.seen[pk.Value] {
				continue
			}
			if err := p.add(item, c); err != nil {
				return scanned, false, err
			}
		}
		if len(out.LastEvaluatedKey) == 0 {
			return scanned, false, nil
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}

// view is the page's view of rec.
func (p *Page) view(rec store.Record, c *collected) EventView {
	ev := EventView{
		Key: rec.Key, Provider: rec.Provider, Tenant: rec.Tenant, Type: rec.EventType, Status: rec.Status,
		ReceivedAt: time.UnixMilli(rec.ReceivedAt), Version: rec.Version, Attempts: rec.Attempts,
		LastError: rec.LastError, LeaseOwner: rec.LeaseOwner,
		History: rec.History, HistoryDropped: rec.HistoryDropped(),
		Payload:    prettyPayload(rec.Payload),
		CallCount:  rec.CallCount,
		Deliveries: rec.DeliveryCount(), LastDeliveryAt: time.UnixMilli(rec.LastDelivery()),
	}
	for _, c := range rec.Calls {
		ev.Calls = append(ev.Calls, CallView{At: c.At, Target: c.Target, Status: c.Status, Latency: c.Latency,
			Error: c.Error, Snippet: c.Snippet})
	}
	if rec.PayloadRef != "" && rec.Payload == nil { // a large payload, in its own item
		ev.Payload = prettyPayload(c.payloads[rec.Key+"\x00"+rec.PayloadRef])
	}
	if rec.UpdatedAt != 0 {
		ev.UpdatedAt = time.UnixMilli(rec.UpdatedAt)
	}
	js := c.steps[rec.Key]
	slices.SortFunc(js, func(a, b journalItem) int { return cmp.Compare(a.CompletedAt, b.CompletedAt) })
	for _, j := range js {
		if j.ClaimID != rec.ClaimID {
			continue // an earlier claim's journal, ignored by the processor too
		}
		ev.Steps = append(ev.Steps, StepView{Handler: j.Handler, Step: j.Step, CompletedAt: time.UnixMilli(j.CompletedAt),
			Result: truncateText(string(j.Result), 512), Undo: strings.HasPrefix(j.Step, "$undo:")})
	}
	return ev
}

// prettyPayload returns a payload to show: JSON indented, anything else
// (XML) as it is; at most maxPayloadShown bytes.
func prettyPayload(b []byte) string {
	if len(b) <= maxPayloadShown*4 && json.Valid(b) {
		var out bytes.Buffer
		if err := json.Indent(&out, b, "", "  "); err == nil {
			return truncateText(out.String(), maxPayloadShown)
		}
	}
	return truncateText(string(b), maxPayloadShown)
}

// journalItem is a journal entry as stored (see shared/state/store/journal.go).
type journalItem struct {
	Key         string `dynamodbav:"pk"`
	SK          string `dynamodbav:"sk"`
	ClaimID     string `dynamodbav:"claimId"`
	Handler     string `dynamodbav:"handler"`
	Step        string `dynamodbav:"step"`
	Result      []byte `dynamodbav:"result"`
	CompletedAt int64  `dynamodbav:"completedAt"`
}

// ReplayAnswer is the JSON answer of a replay request.
type ReplayAnswer struct {
	Outcome string `json:"outcome"` // replayed, refused, missing, error
	Status  string `json:"status,omitempty"`
	Message string `json:"message"`
}

// replay handles POST /_hookwall/replay (form: key, fresh=1 to run the
// journaled steps again). A SUCCEEDED event is replayed too (Force): the
// button is an explicit request.
func (p *Page) replay(w http.ResponseWriter, r *http.Request) {
	answer := func(status int, a ReplayAnswer) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(a)
	}
	if r.Method != http.MethodPost {
		answer(http.StatusMethodNotAllowed, ReplayAnswer{Outcome: "error", Message: "POST only"})
		return
	}
	if r.Header.Get(ReplayHeader) == "" {
		answer(http.StatusForbidden, ReplayAnswer{Outcome: "error", Message: "missing " + ReplayHeader + " header"})
		return
	}
	if p.Replay == nil || p.Queue == nil {
		answer(http.StatusNotImplemented, ReplayAnswer{Outcome: "error", Message: "replay is not available"})
		return
	}
	key := r.FormValue("key")
	if key == "" {
		answer(http.StatusBadRequest, ReplayAnswer{Outcome: "error", Message: "no key"})
		return
	}
	fresh := r.FormValue("fresh") == "1"
	ctx := r.Context()
	res, err := p.Replay.Replay(ctx, key, store.ReplayOptions{Force: true, FreshSteps: fresh, Window: p.Window})
	if err != nil {
		answer(http.StatusServiceUnavailable, ReplayAnswer{Outcome: "error", Message: err.Error()})
		return
	}
	switch res.Outcome {
	case store.Replayed:
	case store.ReplayMissing:
		answer(http.StatusNotFound, ReplayAnswer{Outcome: res.Outcome.String(), Message: "no live record for " + key})
		return
	default:
		a := ReplayAnswer{Outcome: res.Outcome.String(), Message: "refused"}
		if res.Record != nil {
			a.Status = string(res.Record.Status)
			a.Message = fmt.Sprintf("refused: the record is %s", res.Record.Status)
			if res.Record.LeaseOwner != "" {
				a.Message += " and a worker holds its lease; try again when the lease ends"
			}
		}
		answer(http.StatusConflict, a)
		return
	}
	if err := p.Queue.Send(ctx, []webhook.Envelope{res.Record.Envelope()}); err != nil {
		answer(http.StatusServiceUnavailable, ReplayAnswer{Outcome: "error", Status: string(res.Record.Status),
			Message: "the record is RECEIVED again but its message could not be sent (the sweeper will): " + err.Error()})
		return
	}
	detail := "replayed from the page: RECEIVED again and enqueued"
	if fresh {
		detail += " (fresh steps)"
	}
	p.Log.LogAttrs(ctx, slog.LevelInfo, StageReplayed, slog.String(AttrStage, StageReplayed),
		slog.String("event_key", key), slog.Bool("fresh_steps", fresh), slog.String(AttrDetail, detail))
	answer(http.StatusOK, ReplayAnswer{Outcome: res.Outcome.String(), Status: string(res.Record.Status),
		Message: "replayed " + key + ": RECEIVED again and enqueued"})
}

// truncateText cuts s to at most n bytes on a rune boundary.
func truncateText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/state/audit"
	"github.com/hookwall/hookwall/shared/state/store"
)

// writeJSON prints v as indented JSON, without HTML escaping.
func (a *app) writeJSON(v any) error {
	enc := json.NewEncoder(a.stdout)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("encode JSON: %w", err)
	}
	return nil
}

// table returns a tab writer on stdout for aligned columns.
func (a *app) table() *tabwriter.Writer {
	return tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
}

// printTable prints rows as aligned columns under header (its columns
// separated by tabs), row writing one line a row; with no row, it prints
// the line none instead.
func printTable[T any](a *app, none, header string, rows []T, row func(w io.Writer, r T)) error {
	if len(rows) == 0 {
		fmt.Fprintln(a.stdout, none)
		return nil
	}
	w := a.table()
	fmt.Fprintln(w, header)
	for _, r := range rows {
		row(w, r)
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("print table: %w", err)
	}
	return nil
}

// when formats epoch milliseconds for a table ("-" for none).
func when(ms int64) string {
	if ms == 0 {
		return "-"
	}
	return time.UnixMilli(ms).UTC().Format(time.RFC3339)
}

func whenTime(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

// cell makes s fit one table cell: one line, at most n runes.
func cell(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if s == "" {
		return "-"
	}
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// listedEvent is one event of a listing, in JSON.
type listedEvent struct {
	Key       string         `json:"key"`
	Status    webhook.Status `json:"status"`
	Version   int64          `json:"version"`
	Provider  string         `json:"provider"`
	Tenant    string         `json:"tenant"`
	EventType string         `json:"eventType"`
	Attempts  int64          `json:"attempts"`
	UpdatedAt string         `json:"updatedAt,omitempty"`
	LastError string         `json:"lastError,omitempty"`
}

func listed(r *store.Record) listedEvent {
	e := listedEvent{Key: r.Key, Status: r.Status, Version: r.Version, Provider: r.Provider, Tenant: r.Tenant,
		EventType: r.EventType, Attempts: r.Attempts, LastError: r.LastError}
	if r.UpdatedAt != 0 {
		e.UpdatedAt = when(r.UpdatedAt)
	}
	return e
}

// listJSON is the JSON of `events list`.
func listJSON(l listing, q listQuery) any {
	events := make([]listedEvent, len(l.records))
	for i, r := range l.records {
		events[i] = listed(r)
	}
	return struct {
		Events     []listedEvent    `json:"events"`
		Statuses   []webhook.Status `json:"statuses"`
		Since      time.Time        `json:"since"`
		Tenant     string           `json:"tenant,omitempty"`
		Incomplete bool             `json:"incomplete"`
		Notes      []string         `json:"notes,omitempty"`
	}{events, q.statuses, q.since.UTC(), q.tenant, l.incomplete, l.notes}
}

// printRecords prints a listing as a table.
func (a *app) printRecords(recs []*store.Record) {
	if len(recs) == 0 {
		return
	}
	w := a.table()
	fmt.Fprintln(w, "KEY\tSTATUS\tTYPE\tATTEMPTS\tUPDATED\tLAST ERROR")
	for _, r := range recs {
		fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%s\t%s\n", r.Key, r.Status, cell(r.EventType, 24), r.Attempts, when(r.UpdatedAt), cell(r.LastError, 60))
	}
	_ = w.Flush()
}

// printView prints an event's record, payload, steps, calls and history.
func (a *app) printView(v *audit.View) {
	r := v.Record
	w := a.table()
	row := func(k, val string) { fmt.Fprintf(w, "%s\t%s\n", k, val) }
	row("key", r.Key)
	row("status", fmt.Sprintf("%s (version %d)", r.Status, r.Version))
	row("provider / tenant", r.Provider+" / "+r.Tenant)
	row("type", cell(r.EventType, 128))
	attempts := strconv.FormatInt(r.Attempts, 10)
	if r.GivenBack > 0 {
		attempts += fmt.Sprintf(" (%d given back: its call opened the breaker)", r.GivenBack)
	}
	row("attempts", attempts)
	if r.Compensations > 0 {
		row("compensations", strconv.FormatInt(r.Compensations, 10))
	}
	row("occurred", whenTime(r.OccurredAt))
	row("received", whenTime(r.ReceivedAt))
	row("enqueued", whenTime(r.EnqueuedAt))
	row("updated", whenTime(r.UpdatedAt))
	row("expires", whenTime(r.ExpiresAt))
	row("deliveries", fmt.Sprintf("%d (last %s)", r.Deliveries, whenTime(r.LastDeliveryAt)))
	if r.LeaseOwner != "" {
		row("lease", r.LeaseOwner+" until "+whenTime(r.LeaseUntil))
	}
	if r.LastError != "" {
		row("last error", cell(r.LastError, 1024))
	}
	if r.TraceID != "" {
		row("trace id", r.TraceID)
	}
	row("claim id", r.ClaimID)
	row("payload hash", r.PayloadHash)
	_ = w.Flush()

	fmt.Fprintln(a.stdout, "\nPAYLOAD")
	var pretty bytes.Buffer
	if json.Indent(&pretty, r.Payload, "", "  ") == nil {
		fmt.Fprintln(a.stdout, pretty.String())
	} else {
		fmt.Fprintln(a.stdout, string(r.Payload))
	}

	fmt.Fprintf(a.stdout, "\nSTEPS (claim %s)\n", r.ClaimID)
	if len(v.Steps) == 0 {
		fmt.Fprintln(a.stdout, "none journaled")
	} else {
		w = a.table()
		fmt.Fprintln(w, "HANDLER\tSTEP\tCOMPLETED\tRESULT")
		for _, s := range v.Steps {
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", s.Handler, s.Step, s.CompletedAt.Format(time.RFC3339), cell(string(s.Result), 60))
		}
		_ = w.Flush()
	}
	fmt.Fprintln(a.stdout)
	a.printCalls(v)
	fmt.Fprintln(a.stdout)
	a.printHistory(v)
}

// printCalls prints the outside calls on an event's record, oldest first.
func (a *app) printCalls(v *audit.View) {
	fmt.Fprintf(a.stdout, "CALLS (%d made", v.CallCount)
	if dropped := v.CallCount - int64(len(v.Calls)); dropped > 0 {
		fmt.Fprintf(a.stdout, "; the newest %d kept", len(v.Calls))
	}
	fmt.Fprintln(a.stdout, ")")
	if len(v.Calls) == 0 {
		fmt.Fprintln(a.stdout, "none recorded")
		return
	}
	w := a.table()
	fmt.Fprintln(w, "AT	TARGET	STATUS	LATENCY	ERROR / RESPONSE")
	for _, c := range v.Calls {
		status, detail := strconv.Itoa(c.Status), c.Error
		if c.Status == 0 {
			status = "no answer"
		}
		if detail == "" {
			detail = c.Snippet
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", c.At.Format(time.RFC3339Nano), cell(c.Target, 40), status,
			(time.Duration(c.LatencyMs) * time.Millisecond).String(), cell(detail, 80))
	}
	_ = w.Flush()
}

// printHistory prints an event's transitions, oldest first.
func (a *app) printHistory(v *audit.View) {
	fmt.Fprintf(a.stdout, "HISTORY of %s (%d transition(s)", v.Record.Key, len(v.History))
	if v.HistoryDropped > 0 {
		fmt.Fprintf(a.stdout, "; %d older one(s) dropped", v.HistoryDropped)
	}
	fmt.Fprintln(a.stdout, ")")
	if len(v.History) == 0 {
		return
	}
	w := a.table()
	fmt.Fprintln(w, "VERSION\tAT\tFROM\tTO\tATTEMPT\tFUNCTION\tOWNER\tERROR")
	for _, h := range v.History {
		from := string(h.From)
		if from == "" {
			from = "-"
		}
		fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%d\t%s\t%s\t%s\n", h.Version, h.At.Format(time.RFC3339), from, h.To,
			h.Attempt, cell(h.Function, 16), cell(h.Owner, 28), cell(h.Error, 60))
	}
	_ = w.Flush()
}

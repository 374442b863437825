package recovery

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
)

// WordError is a job's filter given in words ([ParseFilter]) that cannot
// be: Field names the word (since, until, status, tenant), Value what was
// given and Want what it must be. The CLI shows it as "--<field> …", the
// local page as "<field> …".
type WordError struct {
	Field, Value, Want string
}

func (e *WordError) Error() string {
	if e.Value == "" {
		return e.Field + " " + e.Want
	}
	return fmt.Sprintf("%s %q: %s", e.Field, e.Value, e.Want)
}

// Words are a new job's filter as `hookwall recover` and the local page
// take it.
type Words struct {
	// Since is the window's start: a duration back from now (90m, 2h, 7d)
	// or an RFC 3339 time (required).
	Since string
	// Until is the window's end, excluded, in the same form ("": now).
	Until string
	// Status lists the states to recover, comma-separated, any case ("":
	// FAILED).
	Status string
	// Tenant and Handler narrow the job ("": all).
	Tenant, Handler string
}

// ParseFilter reads a new job's filter from its words, with the rules
// every caller shares; the error is a *WordError.
func ParseFilter(w Words, now time.Time) (Filter, error) {
	var f Filter
	if strings.TrimSpace(w.Since) == "" {
		return f, &WordError{Field: "since", Want: "is required (the window's start), e.g. 2h or 2026-05-01T10:00:00Z"}
	}
	var err error
	if f.Since, err = ParseSince(w.Since, now); err != nil {
		return f, &WordError{Field: "since", Value: w.Since, Want: "want a duration such as 90m, 1h or 7d, or an RFC 3339 time"}
	}
	f.Until = now
	if w.Until != "" {
		if f.Until, err = ParseSince(w.Until, now); err != nil {
			return f, &WordError{Field: "until", Value: w.Until, Want: "want a duration such as 30m or an RFC 3339 time"}
		}
	}
	if !f.Since.Before(f.Until) {
		return f, &WordError{Field: "since", Want: "must be before until"}
	}
	status := w.Status
	if strings.TrimSpace(status) == "" {
		status = string(webhook.StatusFailed)
	}
	for part := range strings.SplitSeq(status, ",") {
		st := webhook.Status(strings.ToUpper(strings.TrimSpace(part)))
		switch {
		case st == webhook.StatusSucceeded:
			return f, &WordError{Field: "status", Value: part, Want: "recovery never sends back an event whose handlers ran to the end (replay it by its key with force)"}
		case !slices.Contains(Recoverable, st):
			return f, &WordError{Field: "status", Value: part, Want: "want one or more of FAILED, DEAD, COMPENSATED, separated by commas"}
		case !slices.Contains(f.Statuses, st):
			f.Statuses = append(f.Statuses, st)
		}
	}
	f.Tenant, f.Handler = strings.TrimSpace(w.Tenant), strings.TrimSpace(w.Handler)
	if f.Tenant != "" && !webhook.ValidTenant(f.Tenant) {
		return f, &WordError{Field: "tenant", Value: f.Tenant, Want: "not a tenant name"}
	}
	if _, err := f.normalized(); err != nil {
		return f, &WordError{Field: "handler", Value: f.Handler, Want: err.Error()}
	}
	return f, nil
}

// ParseSince reads one edge of a window: a Go duration back from now
// ("90m", "1h"), days back ("7d") or an RFC 3339 time.
func ParseSince(v string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t, nil
	}
	if days, ok := strings.CutSuffix(v, "d"); ok {
		if n, err := strconv.Atoi(days); err == nil && n > 0 {
			return now.Add(-time.Duration(n) * 24 * time.Hour), nil
		}
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return time.Time{}, fmt.Errorf("recovery: %q is neither a positive duration nor an RFC 3339 time", v)
	}
	return now.Add(-d), nil
}

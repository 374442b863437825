package recovery

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
)

// Keys of the job items in the events table. No event key starts with an
// upper-case letter (they start with a provider name).
const (
	// KeyPrefix starts the partition key of a job: "JOB#<id>".
	KeyPrefix = "JOB#"
	// SKJob is the sort key of a job.
	SKJob = "JOB"
	// ListKey is the partition key of the job list; its items' sort key
	// is the job's id.
	ListKey = "JOBS"
)

// State is where a job stands.
type State string

// Job states.
const (
	// StateRunning: a process runs the job (under a lease), or ran it and
	// died; once the lease has run out, any process may resume it. A
	// detached job stays running, without a lease, between the sweep runs
	// that continue it.
	StateRunning State = "running"
	// StateInterrupted: the process running it stopped (Ctrl-C, an error)
	// after saving its cursor; resumable.
	StateInterrupted State = "interrupted"
	// StateCancelled: an operator cancelled it; the runner stopped at its
	// next save. Resumable: a resume goes on from the cursor.
	StateCancelled State = "cancelled"
	// StateDone: the whole window was read; final.
	StateDone State = "done"
)

// Recoverable are the states a job may select: an event whose handlers
// ran to the end (SUCCEEDED) is never sent back by a recovery.
var Recoverable = []webhook.Status{webhook.StatusFailed, webhook.StatusDead, webhook.StatusCompensated}

// Filter selects the records a job recovers.
type Filter struct {
	// Since and Until bound the records' receivedAt: Since <= receivedAt < Until.
	Since, Until time.Time
	// Statuses are the states selected, among [Recoverable] (empty: FAILED).
	Statuses []webhook.Status
	// Tenant selects one tenant's events ("" for all).
	Tenant string
	// Handler selects the events whose last attempt was bound for the
	// handler's target: the record's target attribute is Handler, or
	// starts with Handler + "/" (a handler's default target is its name,
	// and a per-tenant target such as the forward handler's is
	// "forward/<tenant>"). "" for all.
	Handler string
}

// normalized returns f with its defaults, or why it is invalid.
func (f Filter) normalized() (Filter, error) {
	var errs []error
	if f.Since.IsZero() || f.Until.IsZero() || !f.Since.Before(f.Until) {
		errs = append(errs, fmt.Errorf("the window needs since before until (got %s to %s)",
			f.Since.UTC().Format(time.RFC3339), f.Until.UTC().Format(time.RFC3339)))
	}
	if len(f.Statuses) == 0 {
		f.Statuses = []webhook.Status{webhook.StatusFailed}
	}
	for _, s := range f.Statuses {
		if !slices.Contains(Recoverable, s) {
			errs = append(errs, fmt.Errorf("status %s cannot be recovered (want FAILED, DEAD or COMPENSATED)", s))
		}
	}
	if f.Tenant != "" && !webhook.ValidTenant(f.Tenant) {
		errs = append(errs, fmt.Errorf("tenant %q is not a tenant name", f.Tenant))
	}
	if strings.ContainsAny(f.Handler, " \t\n") {
		errs = append(errs, fmt.Errorf("handler %q is not a handler name", f.Handler))
	}
	f.Statuses = slices.Compact(f.Statuses)
	return f, errors.Join(errs...)
}

// Counts are a job's progress.
type Counts struct {
	// Total is how many records the filter selected when the job counted
	// them, before its first page (0 until Counted).
	Total int `json:"total"`
	// Counted is set once Total is known.
	Counted bool `json:"counted"`
	// Scanned is how many table items the job's pages read.
	Scanned int `json:"scanned"`
	// Replayed is how many records were sent back to RECEIVED to run
	// again (those not enqueued included: see NotEnqueued). Their steps
	// journaled done stay done; a step whose undo is journaled (a
	// COMPENSATED or DEAD event's undone steps) is not done and runs
	// again, under a new idempotency key ([webhook.RunKey]), so a
	// replayed COMPENSATED event makes again what was undone.
	Replayed int `json:"replayed"`
	// Skipped is how many selected records were no longer in a selected
	// state when replayed (succeeded, or replayed by another run, since),
	// or under a live lease: nothing was written for them.
	Skipped int `json:"skipped"`
	// Missing is how many had expired or gone.
	Missing int `json:"missing"`
	// NotEnqueued is how many of the replayed could not be enqueued: they
	// are RECEIVED, and the sweeper re-enqueues them.
	NotEnqueued int `json:"notEnqueued"`
	// OpsNotPublished is how many hookwall.event.recovered events
	// EventBridge did not take.
	OpsNotPublished int `json:"opsNotPublished,omitempty"`
}

// Done is how many selected records the job has dealt with.
func (c Counts) Done() int { return c.Replayed + c.Skipped + c.Missing }

// Job is a recovery job, as stored.
type Job struct {
	// ID names the job: its creation time (UTC, to the millisecond, e.g.
	// 20260501-113000123) and a random suffix, so that ids sort by age.
	ID string `json:"id"`
	// Filter selects its records.
	Filter Filter `json:"filter"`
	// Rate caps the replays per second for each target (0: only the
	// gate's rate limit applies).
	Rate float64 `json:"rate,omitempty"`
	// State is where it stands.
	State State `json:"state"`
	// Counts are its progress.
	Counts Counts `json:"counts"`
	// Cursor is the key of the last table item it dealt with ("" before
	// the first page).
	Cursor string `json:"cursor,omitempty"`
	// By says who created it (the operator's user name, or "").
	By string `json:"by,omitempty"`
	// Owner and LeaseUntil are the process running it and until when its
	// lease holds (empty when none runs it).
	Owner      string    `json:"owner,omitempty"`
	LeaseUntil time.Time `json:"leaseUntil,omitzero"`
	// CreatedAt, UpdatedAt and FinishedAt (done) are its times.
	CreatedAt  time.Time `json:"createdAt"`
	UpdatedAt  time.Time `json:"updatedAt"`
	FinishedAt time.Time `json:"finishedAt,omitzero"`
	// LastError is why its last run stopped on an error ("" for none).
	LastError string `json:"lastError,omitempty"`
	// Why says why the job selected nothing, when it did ("" otherwise):
	// how many records its window and states held without the handler's
	// condition, the targets they were bound for, and how many carry
	// none. Set when the job counts.
	Why string `json:"why,omitempty"`
	// Detached says the job runs in the background ([Jobs.Detach]): each
	// sweep run continues it ([Jobs.Continue]) while it is running or
	// interrupted; done or cancelled, no sweep run takes it.
	Detached bool `json:"detached,omitempty"`

	cursorSK string // the sort key of the cursor item
}

// Resumable reports whether the job may be run (again).
func (j *Job) Resumable() bool { return j.State != StateDone }

// ValidID reports whether id has the form of a job id.
func ValidID(id string) bool {
	if len(id) < 1 || len(id) > 64 {
		return false
	}
	for _, c := range id {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '-') {
			return false
		}
	}
	return true
}

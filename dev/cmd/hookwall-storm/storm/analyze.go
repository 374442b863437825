package storm

import (
	"math"
	"sort"
	"time"

	"github.com/hookwall/hookwall/dev/cmd/hookwall-run/localrun"
	"github.com/hookwall/hookwall/shared/base/webhook"
)

// RecordFacts is what the storm reads of an event's record at the end.
type RecordFacts struct {
	Status    webhook.Status
	LastError string
	Attempts  int
	History   []webhook.HistoryEntry
}

// Facts are a storm's observations, the input of [Analyze].
type Facts struct {
	Items      []Item
	Attempts   []Attempt
	Deliveries []Delivery
	// Records maps event keys to their records (absent: no record).
	Records map[string]*RecordFacts
	// Effects maps event keys to applied counts per idempotency key;
	// FirstEffect to the first effect's time.
	Effects     map[string]map[string]int
	FirstEffect map[string]time.Time
	// Steps is how many effects each event has (the forward step: 1).
	Steps int
	// FirstReceive maps event keys to when the processor's pollers first
	// received their message (nil: not observed).
	FirstReceive map[string]time.Time
}

// Rescue names: what brought an event that needed it to its end.
const (
	RescueReceiverUndo = "receiver_undo_platform_retry" // a delivery failed (5xx or no answer) and the platform's retry was accepted
	RescueTakeOver     = "grace_reenqueue_takeover"     // a duplicate took a stale RECEIVED record over and enqueued it
	RescueLeaseExpiry  = "lease_expiry"                 // another attempt took the lease over after it expired
	RescueRetry        = "processor_retry_backoff"      // the processor retried it after a failure (RETRY)
	RescueDLQ          = "dlq_compensator"              // it went through the dead-letter queue and the compensator
	RescueSweeper      = "sweeper"                      // the sweeper re-enqueued or dead-lettered it
	RescueManual       = "manual_redelivery"            // accepted only after the platform's own policy gave up
)

// Outcome is the analysis of a storm's facts.
type Outcome struct {
	UniqueEvents  int `json:"unique_events"`
	Accepted      int `json:"accepted"`
	NeverAccepted int `json:"never_accepted"`
	WithEffect    int `json:"with_effect"`
	Lost          int `json:"lost"`
	Doubled       int `json:"doubled"`
	FailedReason  int `json:"failed_with_reason"`
	// Unsettled counts accepted events whose record was not terminal when
	// the wait ended (counted as lost too when they have no effect).
	Unsettled    int            `json:"unsettled"`
	Statuses     map[string]int `json:"statuses"`
	DLQ          int            `json:"dlq"`
	Compensated  int            `json:"compensated"`
	Dead         int            `json:"dead"`
	Rescued      map[string]int `json:"rescued_by"`
	NeededRescue int            `json:"needed_rescue"`
	InFlight503  int            `json:"in_flight_503_answers"`
	// Absorbed counts applications beyond the first under one idempotency
	// key when the target does not dedupe (with dedupe the target counts
	// them itself as absorbed replays).
	SameKeyRepeats int      `json:"same_key_repeats"`
	LostKeys       []string `json:"lost_keys,omitempty"`
	DoubledKeys    []string `json:"doubled_keys,omitempty"`
	NeverKeys      []string `json:"never_accepted_keys,omitempty"`
	// EndToEnd are the accept → first effect latencies.
	EndToEnd []time.Duration `json:"-"`
	// ByTenant are the counts and latencies by tenant (the demo tenant's
	// name for items of none).
	ByTenant map[string]*TenantReport `json:"-"`
}

// TenantReport is one tenant's part of a storm.
type TenantReport struct {
	// Items, Events and Deliveries are the tenant's items (first
	// deliveries), unique events and platform deliveries.
	Items      int `json:"items"`
	Events     int `json:"unique_events"`
	Deliveries int `json:"deliveries"`
	// Processed counts its events with an effect at the target (the
	// processor's outcome); Lost and Doubled as in [Outcome].
	Processed int `json:"processed"`
	Lost      int `json:"lost"`
	Doubled   int `json:"doubled"`
	// EndToEnd is accept → first effect (the processed outcome), with its
	// histogram; ReceiverLatency is every answered HTTP request's.
	EndToEnd        Percentiles `json:"end_to_end_latency"`
	Histogram       []Bucket    `json:"end_to_end_histogram"`
	ReceiverLatency Percentiles `json:"receiver_latency"`
	// QueueWait is the part of end to end before the processor's pollers
	// first received the event's message (accept → receive): the queue's
	// backlog and the pollers' batching window; the rest is the processor.
	QueueWait Percentiles `json:"queue_wait"`

	e2e, wait []time.Duration
}

// tenantName is the tenant an item is sent for.
func tenantName(it Item) string {
	if it.Tenant == "" {
		return localrun.DefaultTenant
	}
	return it.Tenant
}

// maxSampleKeys bounds the keys listed in the report.
const maxSampleKeys = 10

// Doubled reports whether an event's effects are more than its steps (one
// effect per step, each under its own idempotency key): applied under more
// idempotency keys than it has steps, or more than once under one.
func Doubled(effects map[string]int, steps int) bool {
	for _, n := range effects {
		if n > 1 {
			return true
		}
	}
	return len(effects) > max(steps, 1)
}

// Lost reports whether an accepted event is missing effects (fewer than its
// steps; with no steps, its record is not SUCCEEDED) and its record is not
// in a terminal failure state with a reason (COMPENSATED or DEAD with its
// last error).
func Lost(effects map[string]int, rec *RecordFacts, steps int) bool {
	if rec != nil && (rec.Status == webhook.StatusCompensated || rec.Status == webhook.StatusDead) && rec.LastError != "" {
		return false
	}
	if steps == 0 {
		return rec == nil || rec.Status != webhook.StatusSucceeded
	}
	return len(effects) < steps
}

// Rescuers returns what rescued an event: from the receiver's answers to
// its item's deliveries (attempts) and its record's history.
func Rescuers(attempts []Attempt, rec *RecordFacts) []string {
	set := map[string]bool{}
	for _, a := range attempts {
		failed := a.Status == 0 || (a.Status >= 500 && (a.Track.Failed > 0 || a.Track.Undos > 0))
		if failed {
			set[RescueReceiverUndo] = true
		}
		if a.Status/100 == 2 && a.Track.TookOver && a.Track.Sent > 0 {
			set[RescueTakeOver] = true
		}
		if a.Status/100 == 2 && a.Kind == KindManual {
			set[RescueManual] = true
		}
	}
	if rec != nil {
		for _, h := range rec.History {
			switch {
			case h.Function == "sweeper":
				set[RescueSweeper] = true
			case h.Function == "compensator" || h.To == webhook.StatusFailed || h.To == webhook.StatusCompensating:
				set[RescueDLQ] = true
			case h.From == webhook.StatusProcessing && h.To == webhook.StatusProcessing:
				set[RescueLeaseExpiry] = true
			case h.To == webhook.StatusRetry:
				set[RescueRetry] = true
			}
		}
	}
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// inFlight503 reports a 503 that was only "another delivery is handing it
// off": nothing failed, nothing was undone.
func inFlight503(a Attempt) bool {
	return a.Status == 503 && a.Track.Failed == 0 && a.Track.Undos == 0
}

// Analyze classifies every event of the facts.
func Analyze(f Facts) Outcome {
	o := Outcome{Statuses: map[string]int{}, Rescued: map[string]int{}, ByTenant: map[string]*TenantReport{}}
	byItem := make(map[int][]Attempt, len(f.Items))
	for _, a := range f.Attempts {
		byItem[a.Item] = append(byItem[a.Item], a)
		if inFlight503(a) {
			o.InFlight503++
		}
	}
	accepted := make(map[int]time.Time, len(f.Items))
	for _, d := range f.Deliveries {
		if d.AcceptedAt.IsZero() {
			continue
		}
		if t, ok := accepted[d.Item]; !ok || d.AcceptedAt.Before(t) {
			accepted[d.Item] = d.AcceptedAt
		}
	}
	sample := func(l *[]string, k string) {
		if len(*l) < maxSampleKeys {
			*l = append(*l, k)
		}
	}
	for _, it := range f.Items {
		acc, ok := accepted[it.Index]
		tr := o.ByTenant[tenantName(it)]
		if tr == nil {
			tr = &TenantReport{}
			o.ByTenant[tenantName(it)] = tr
		}
		tr.Items++
		tr.Deliveries += it.Copies
		for _, key := range it.Keys {
			o.UniqueEvents++
			tr.Events++
			rec := f.Records[key]
			eff := f.Effects[key]
			if rec != nil {
				o.Statuses[string(rec.Status)]++
				switch rec.Status {
				case webhook.StatusCompensated:
					o.Compensated++
				case webhook.StatusDead:
					o.Dead++
				}
			} else {
				o.Statuses["NONE"]++
			}
			if len(eff) > 0 {
				o.WithEffect++
				tr.Processed++
			}
			for _, n := range eff {
				o.SameKeyRepeats += max(0, n-1)
			}
			if Doubled(eff, f.Steps) {
				o.Doubled++
				tr.Doubled++
				sample(&o.DoubledKeys, key)
			}
			if !ok {
				o.NeverAccepted++
				sample(&o.NeverKeys, key)
				continue
			}
			o.Accepted++
			if rec == nil || !rec.Status.Terminal() {
				o.Unsettled++
			}
			if Lost(eff, rec, f.Steps) {
				o.Lost++
				tr.Lost++
				sample(&o.LostKeys, key)
			} else if len(eff) < f.Steps || (f.Steps == 0 && rec.Status != webhook.StatusSucceeded) {
				o.FailedReason++
			}
			rs := Rescuers(byItem[it.Index], rec)
			if len(rs) > 0 {
				o.NeededRescue++
			}
			for _, r := range rs {
				o.Rescued[r]++
				if r == RescueDLQ {
					o.DLQ++
				}
			}
			if t, ok := f.FirstEffect[key]; ok {
				o.EndToEnd = append(o.EndToEnd, max(0, t.Sub(acc)))
				tr.e2e = append(tr.e2e, max(0, t.Sub(acc)))
			}
			if t, ok := f.FirstReceive[key]; ok {
				tr.wait = append(tr.wait, max(0, t.Sub(acc)))
			}
		}
	}
	return o
}

// Percentiles are nearest-rank percentiles in ms.
type Percentiles struct {
	Count int     `json:"count"`
	P50   float64 `json:"p50_ms"`
	P95   float64 `json:"p95_ms"`
	P99   float64 `json:"p99_ms"`
	Max   float64 `json:"max_ms"`
	Mean  float64 `json:"mean_ms"`
}

// PercentilesOf returns the nearest-rank percentiles of d.
func PercentilesOf(d []time.Duration) Percentiles {
	if len(d) == 0 {
		return Percentiles{}
	}
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	at := func(p float64) float64 {
		i := max(0, int(math.Ceil(p/100*float64(len(s))))-1)
		return ms(s[i])
	}
	var sum time.Duration
	for _, x := range s {
		sum += x
	}
	return Percentiles{Count: len(s), P50: at(50), P95: at(95), P99: at(99), Max: ms(s[len(s)-1]), Mean: ms(sum / time.Duration(len(s)))}
}

func ms(d time.Duration) float64 { return math.Round(float64(d.Microseconds())/10) / 100 }

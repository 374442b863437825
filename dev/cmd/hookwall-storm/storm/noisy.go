package storm

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"
)

// NoisyTenant is the noisy tenant's name in the noisy-tenant storm; the
// quiet ones are QuietTenant(1), QuietTenant(2), …
const NoisyTenant = "noisy"

// QuietTenant is the name of quiet tenant i (from 1).
func QuietTenant(i int) string { return fmt.Sprintf("quiet-%d", i) }

// NoisyOptions configure the noisy-tenant storm ([RunNoisy]): Quiet quiet
// tenants, each sending Rate items a second for For, and one noisy tenant
// sending Factor times as many over the same time, interleaved with them.
type NoisyOptions struct {
	// Quiet is how many quiet tenants send (default 4).
	Quiet int
	// Factor is the noisy tenant's rate over one quiet tenant's (default 10).
	Factor int
	// Rate is each quiet tenant's items (first deliveries) a second; the
	// duplicates of the base options come on top (default 4).
	Rate float64
	// For is how long the tenants send (default 30 s).
	For time.Duration
	// Rounds is how many pairs of storms run, the quiet tenants' same
	// workload with the noisy tenant and without it, alternated (with
	// first in odd rounds, without first in even ones), each on a table
	// and queues of its own (default 3). 0 runs one storm, with the
	// noisy tenant.
	Rounds int
}

// DefaultNoisy returns the default noisy-tenant storm: 4 quiet tenants at
// 4 items/s and one at 10 times that, for 30 s, 3 rounds (the figures of
// docs/PERFORMANCE.md, "Noisy tenants").
func DefaultNoisy() NoisyOptions {
	return NoisyOptions{Quiet: 4, Factor: 10, Rate: 4, For: 30 * time.Second, Rounds: 3}
}

// TenantLoad is one tenant's part of a paced workload: Items items (first
// deliveries, each with its duplicates), sent evenly over the sending time.
type TenantLoad struct {
	Name  string
	Items int
}

// Loads returns the tenants' parts of the storm: the quiet tenants first,
// then, withNoisy, the noisy one.
func (n NoisyOptions) Loads(withNoisy bool) []TenantLoad {
	per := int(math.Round(n.Rate * n.For.Seconds()))
	var l []TenantLoad
	for i := range n.Quiet {
		l = append(l, TenantLoad{Name: QuietTenant(i + 1), Items: per})
	}
	if withNoisy {
		l = append(l, TenantLoad{Name: NoisyTenant, Items: per * n.Factor})
	}
	return l
}

// Tenants returns the names of every tenant of the storm, the noisy one
// last (the tenants document of both storms of a pair).
func (n NoisyOptions) Tenants() []string {
	var t []string
	for _, l := range n.Loads(true) {
		t = append(t, l.Name)
	}
	return t
}

// NoisyWorkload builds a paced workload of tenants: each tenant's items as
// [Workload] builds them (its own seed, seed + its place × 7919, so a
// tenant's part is the same whichever tenants come after it), and its
// jobs (first deliveries, late copies, concurrent copies) spread evenly
// over span with a seeded jitter, so that every tenant sends all through
// span, interleaved with the others. Items keep Index = their place;
// event ids and keys are derived from it and the tenant.
func NoisyWorkload(loads []TenantLoad, providers []string, dup2, dup3, concurrent, multi float64, seed uint32, prefix string, start time.Time, span time.Duration) ([]Item, []Job) {
	var items []Item
	var jobs []Job
	for ti, l := range loads {
		s := seed + uint32(ti)*7919
		its, js := Workload(l.Items, providers, l.Name, dup2, dup3, concurrent, multi, s, prefix, start)
		off := len(items)
		for _, it := range its {
			it.Index += off
			it.Tenant = l.Name
			for j := range it.IDs {
				it.IDs[j] = EventID(it.Provider, prefix, it.Index, j)
				it.Keys[j] = EventKey(it.Provider, l.Name, it.IDs[j])
			}
			items = append(items, it)
		}
		r := &rng{a: s ^ 0x5bd1e995}
		for k, j := range js {
			j.Item += off
			j.At = time.Duration((float64(k) + r.float()) / float64(len(js)) * float64(span))
			jobs = append(jobs, j)
		}
	}
	slices.SortStableFunc(jobs, func(a, b Job) int { return cmp.Compare(a.At, b.At) })
	return items, jobs
}

// NoisySide is one storm of a pair: the quiet tenants' figures, pooled
// over their events, and the noisy tenant's.
type NoisySide struct {
	Label string `json:"label"`
	// Quiet is accept → effect over every quiet tenant's events.
	Quiet Percentiles `json:"quiet_end_to_end"`
	// QuietQueueWait is accept → first receive by the processor's pollers
	// over every quiet tenant's events (the rest of Quiet is the processor).
	QuietQueueWait Percentiles `json:"quiet_queue_wait"`
	// QuietTenantP99 is each quiet tenant's own p99, ms.
	QuietTenantP99 map[string]float64 `json:"quiet_tenant_p99_ms"`
	// Noisy is the noisy tenant's accept → effect (zero without it).
	Noisy          Percentiles `json:"noisy_end_to_end"`
	QueueDepthMax  int         `json:"queue_depth_max"`
	ProcessedPerS  float64     `json:"processed_events_per_s"`
	DeliveriesPerS float64     `json:"deliveries_per_s"`
	Load           *LoadReport `json:"load_average,omitempty"`
	OK             bool        `json:"ok"`
}

// NoisyRound is one pair: the quiet tenants' p99 with the noisy tenant
// over their p99 without it.
type NoisyRound struct {
	Round   int       `json:"round"`
	First   string    `json:"first"` // "with" or "without"
	With    NoisySide `json:"with_noisy"`
	Without NoisySide `json:"without_noisy"`
	Ratio   float64   `json:"quiet_p99_ratio"`
}

// NoisyReport is the noisy-tenant storm's report: its rounds, the ratios,
// and every storm's own report.
type NoisyReport struct {
	Date   string         `json:"date"`
	Config map[string]any `json:"config"`
	Rounds []NoisyRound   `json:"rounds"`
	// MedianRatio is the median of the rounds' ratios; PooledRatio is the
	// p99 of every quiet event of the storms with the noisy tenant over
	// that of the storms without it.
	MedianRatio float64 `json:"quiet_p99_ratio_median"`
	PooledRatio float64 `json:"quiet_p99_ratio_pooled"`
	// PooledWith and PooledWithout are those pooled quiet latencies.
	PooledWith    Percentiles `json:"quiet_end_to_end_with_noisy"`
	PooledWithout Percentiles `json:"quiet_end_to_end_without_noisy"`
	// Runs are the storms' reports, in the order they ran.
	Runs []*Report `json:"runs"`
	// OK: every storm had nothing lost, doubled or never accepted and no
	// message outside its tenant's group, and every tenant's events were
	// processed. The ratio is a measurement, not part of OK.
	OK bool `json:"ok"`
}

// RunNoisy runs the noisy-tenant storm: n.Rounds pairs of storms of base
// (one storm with the noisy tenant when n.Rounds is 0), the quiet
// tenants' workload the same in both storms of a pair. progress, if set,
// receives a line per storm.
func RunNoisy(ctx context.Context, base Options, n NoisyOptions, progress io.Writer) (*NoisyReport, error) {
	if n.Quiet < 1 || n.Factor < 1 || n.Rate <= 0 || n.For <= 0 || n.Rounds < 0 {
		return nil, fmt.Errorf("storm: noisy tenant: want quiet ≥ 1, factor ≥ 1, rate > 0, for > 0, rounds ≥ 0 (got %+v)", n)
	}
	rep := &NoisyReport{Date: time.Now().UTC().Format(time.RFC3339), OK: true, Config: map[string]any{
		"quiet_tenants": n.Quiet, "noisy_factor": n.Factor, "quiet_items_per_s": n.Rate, "for": n.For.String(),
		"rounds": n.Rounds, "noisy_items_per_s": n.Rate * float64(n.Factor), "items_per_quiet_tenant": n.Loads(false)[0].Items,
		"dup2": base.Dup2, "dup3": base.Dup3, "providers": base.Providers, "pollers": base.Pollers, "batch_size": base.BatchSize,
		"seed": base.Seed, "env": base.Env,
	}}
	quiet := map[bool][]time.Duration{}
	run := func(rd int, with bool) (NoisySide, error) {
		o := base
		o.Tenants = n.Tenants()
		o.Deadline = max(o.Deadline, n.For+time.Minute)
		side := "without"
		if with {
			side = "with"
		}
		o.Label = fmt.Sprintf("%s-%d-%s-noisy", base.Label, rd, side)
		loads := n.Loads(with)
		o.Plan = func(prefix string, start time.Time) ([]Item, []Job) {
			return NoisyWorkload(loads, o.Providers, o.Dup2, o.Dup3, o.Concurrent, o.Multi, o.Seed, prefix, start, n.For)
		}
		r, err := Run(ctx, o)
		if err != nil {
			return NoisySide{}, err
		}
		s := NoisySide{Label: o.Label, QuietTenantP99: map[string]float64{}, QueueDepthMax: r.QueueDepthMax,
			ProcessedPerS: r.ProcessedPerS, DeliveriesPerS: r.DeliveriesPerS, Load: r.Load}
		var q, qw []time.Duration
		for _, l := range loads {
			t := r.Tenants[l.Name]
			if t == nil || t.Processed != t.Events {
				r.OK = false // every tenant's events must be processed
				continue
			}
			if l.Name == NoisyTenant {
				s.Noisy = t.EndToEnd
				continue
			}
			s.QuietTenantP99[l.Name] = t.EndToEnd.P99
			q = append(q, t.e2e...)
			qw = append(qw, t.wait...)
		}
		s.Quiet, s.QuietQueueWait = PercentilesOf(q), PercentilesOf(qw)
		s.OK = r.OK
		quiet[with] = append(quiet[with], q...)
		rep.Runs = append(rep.Runs, r)
		rep.OK = rep.OK && r.OK
		if progress != nil {
			fmt.Fprintf(progress, "[noisy] %s: quiet p50 %.0f ms, p99 %.0f ms (queue wait p99 %.0f ms); noisy p99 %.0f ms; queue depth at most %d; ok %t\n",
				o.Label, s.Quiet.P50, s.Quiet.P99, s.QuietQueueWait.P99, s.Noisy.P99, s.QueueDepthMax, s.OK)
		}
		return s, nil
	}
	if n.Rounds == 0 {
		s, err := run(1, true)
		if err != nil {
			return nil, err
		}
		rep.PooledWith = s.Quiet
		return rep, nil
	}
	var ratios []float64
	for rd := 1; rd <= n.Rounds; rd++ {
		nr := NoisyRound{Round: rd, First: "with"}
		order := []bool{true, false}
		if rd%2 == 0 {
			nr.First, order = "without", []bool{false, true}
		}
		for _, with := range order {
			s, err := run(rd, with)
			if err != nil {
				return nil, err
			}
			if with {
				nr.With = s
			} else {
				nr.Without = s
			}
		}
		nr.Ratio = ratio(nr.With.Quiet.P99, nr.Without.Quiet.P99)
		ratios = append(ratios, nr.Ratio)
		rep.Rounds = append(rep.Rounds, nr)
	}
	slices.Sort(ratios)
	rep.MedianRatio = ratios[len(ratios)/2]
	if len(ratios)%2 == 0 {
		rep.MedianRatio = round((ratios[len(ratios)/2-1]+ratios[len(ratios)/2])/2, 2)
	}
	rep.PooledWith, rep.PooledWithout = PercentilesOf(quiet[true]), PercentilesOf(quiet[false])
	rep.PooledRatio = ratio(rep.PooledWith.P99, rep.PooledWithout.P99)
	return rep, nil
}

func ratio(a, b float64) float64 {
	if b <= 0 {
		return 0
	}
	return round(a/b, 2)
}

// Text writes the noisy-tenant storm's summary for people (each storm's
// own report is written by [Report.Text]).
func (r *NoisyReport) Text(w io.Writer) {
	p := func(format string, a ...any) { fmt.Fprintf(w, format+"\n", a...) }
	verdict := "OK"
	if !r.OK {
		var bad []string
		for _, run := range r.Runs {
			if !run.OK {
				bad = append(bad, run.Label)
			}
		}
		verdict = "FAILED: " + strings.Join(bad, ", ")
	}
	p("== hookwall-storm noisy tenant: %s", verdict)
	p("config: %d quiet tenants at %v items/s each, 1 noisy at %v items/s, for %v; %v rounds",
		r.Config["quiet_tenants"], r.Config["quiet_items_per_s"], r.Config["noisy_items_per_s"], r.Config["for"], r.Config["rounds"])
	p("%-6s %-8s %-26s %-26s %-6s %s", "round", "first", "quiet p50/p99 with, ms", "quiet p50/p99 without, ms", "ratio",
		"quiet queue wait p99 with/without; noisy p99; queue depth max with/without; load mean with/without")
	for _, nr := range r.Rounds {
		p("%-6d %-8s %-26s %-26s %-6.2f %.0f/%.0f ms; %.0f ms; %d/%d; %s/%s", nr.Round, nr.First,
			fmt.Sprintf("%.0f / %.0f", nr.With.Quiet.P50, nr.With.Quiet.P99),
			fmt.Sprintf("%.0f / %.0f", nr.Without.Quiet.P50, nr.Without.Quiet.P99),
			nr.Ratio, nr.With.QuietQueueWait.P99, nr.Without.QuietQueueWait.P99, nr.With.Noisy.P99,
			nr.With.QueueDepthMax, nr.Without.QueueDepthMax, loadMean(nr.With.Load), loadMean(nr.Without.Load))
	}
	if len(r.Rounds) > 0 {
		p("quiet p99 with / without: median of the rounds %.2f, pooled %.2f (%.0f ms / %.0f ms, %d / %d events)",
			r.MedianRatio, r.PooledRatio, r.PooledWith.P99, r.PooledWithout.P99, r.PooledWith.Count, r.PooledWithout.Count)
	}
}

func loadMean(l *LoadReport) string {
	if l == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.2f", l.Mean)
}

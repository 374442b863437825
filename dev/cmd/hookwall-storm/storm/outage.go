package storm

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
)

// OutageCheck is what an outage scenario (a forward target down, or a
// scope paused, for longer than the whole retry budget) must show once the
// target is back or the scope resumed: nothing FAILED, DEAD or COMPENSATED,
// every event SUCCEEDED, at most Allowed calls during the outage, and the
// drain after it at or under the rate limit.
type OutageCheck struct {
	// Kind says what the outage was, for the report ("target down",
	// "paused tenant/acme").
	Kind string
	// MinCalls is the breaker's minimum of calls before it opens, and
	// ProbeInterval its probe interval: during an outage of D the target
	// may see MinCalls + ⌊D/ProbeInterval⌋ + 1 calls. A pause allows no
	// call at all: ProbeInterval 0 and MinCalls 0.
	MinCalls      int
	ProbeInterval time.Duration
	// Rate is the target's rate limit (calls per second) and Burst the
	// most releases beyond Rate·t any span t of the drain may carry (the
	// bucket's capacity, one second's worth).
	Rate  float64
	Burst float64
	// Pipeline is the spread allowed between a release and its call (the
	// main queue, the pollers' batches, the processor): the target's calls
	// may exceed Rate·t by Burst + Rate·Pipeline (default [PipelineSpread]).
	Pipeline time.Duration
	// RetryBudget is the processor's whole retry budget (the longest sum
	// of its backoffs, [RetryBudget]); the outage must outlast it.
	RetryBudget time.Duration
}

// Allowed returns how many calls the target may see during an outage of d.
func (c OutageCheck) Allowed(d time.Duration) int {
	if c.ProbeInterval <= 0 {
		return c.MinCalls
	}
	return c.MinCalls + int(d/c.ProbeInterval) + 1
}

// OutageReport is the outage part of a scenario's report.
type OutageReport struct {
	Kind           string  `json:"kind"`
	OutageS        float64 `json:"outage_s"`
	RetryBudgetS   float64 `json:"retry_budget_s"`
	MinCalls       int     `json:"breaker_min_calls"`
	ProbeIntervalS float64 `json:"probe_interval_s"`
	// CallsDuring are the target's calls during the outage, Allowed their
	// bound, and CallOffsetsS their times from the outage's start (the
	// first maxSampleCalls).
	CallsDuring  int       `json:"calls_during_outage"`
	Allowed      int       `json:"calls_allowed"`
	CallOffsetsS []float64 `json:"call_offsets_s"`
	// The drain: calls after the return, the wait for the first one, the
	// span from the first to the last, the mean rate over it, the most in
	// one calendar second and in any 1 s span, and the bucket's peak (the
	// largest count − Rate·span over any span of the drain, ≤ Burst).
	Rate            float64 `json:"rate_limit_per_s"`
	Burst           float64 `json:"burst"`
	DrainCalls      int     `json:"drain_calls"`
	FirstCallAfterS float64 `json:"first_call_after_return_s"`
	DrainS          float64 `json:"drain_s"`
	DrainMeanPerS   float64 `json:"drain_mean_per_s"`
	MaxPerSecond    int     `json:"drain_max_per_calendar_second"`
	MaxIn1s         int     `json:"drain_max_in_any_1s"`
	BucketPeak      float64 `json:"drain_bucket_peak"`
	// CallsAllowedPeak is the most BucketPeak may be: Burst + Rate·Pipeline.
	CallsAllowedPeak float64 `json:"drain_bucket_peak_allowed"`
	// PipelineSpreadS is the release → call spread the allowance counts.
	PipelineSpreadS float64 `json:"pipeline_spread_s"`
	// Probes are the calls during the outage after the breaker's first
	// MinCalls.
	Probes int `json:"probes"`
	// ReleaseToCall are the delays from an event's release to its call.
	ReleaseToCall Percentiles `json:"release_to_call"`
	// PerSecond are the drain's calls per calendar second, from the
	// return's second on (the first maxSampleSeconds).
	PerSecond []int `json:"drain_per_second"`
	// ReleasedByResume are the held events the resume's drain released
	// (the pause scenarios).
	ReleasedByResume int `json:"released_by_resume,omitempty"`
	// Releases are the HELD → RETRY transitions after the return (the
	// drain's releases, from the records' history): their count, the most
	// in one calendar second and their bucket peak. The check is on the
	// target's calls; these say whether an excess is the drain's or the
	// pipeline's after it (SQS, pollers, processor).
	Releases             int     `json:"releases"`
	ReleaseMaxPerSecond  int     `json:"releases_max_per_calendar_second"`
	ReleaseBucketPeak    float64 `json:"releases_bucket_peak"`
	ReleasesDuringOutage int     `json:"releases_during_outage"`
	// Bad are the statuses that must be 0 (FAILED, DEAD, COMPENSATED, …),
	// BadSamples some of those events with their last error.
	Bad        map[string]int `json:"bad_statuses"`
	BadSamples []string       `json:"bad_samples,omitempty"`
	Failures   []string       `json:"failures,omitempty"`
}

const (
	maxSampleCalls   = 40
	maxSampleSeconds = 600
	// PipelineSpread is OutageCheck.Pipeline's default: half a second
	// of spread between the release → call delays of one burst's events
	// (measured on 2 loaded cores: p50 0.25-0.37 s, p99 1.05-1.13 s; the
	// spread within one burst is what bunches calls, not the delay).
	PipelineSpread = 500 * time.Millisecond
	// releaseSlack is what the releases may exceed the bucket by: their
	// times are those of the records' writes, a little after the tokens.
	releaseSlack = 1
)

// RetryBudget returns the longest time the processor's retries of one
// event can take: the sum of the full-jitter backoff ceilings after
// attempts 1 … maxAttempts−1 (min(cap, base·2ⁿ⁻¹), kernel.Backoff).
func RetryBudget(maxAttempts int, base, cap time.Duration) time.Duration {
	var sum time.Duration
	for n := 1; n < maxAttempts; n++ {
		c := cap
		if n < 63 {
			if b := base << (n - 1); b > 0 && b>>(n-1) == base && b < cap {
				c = b
			}
		}
		sum += c
	}
	return sum
}

// AnalyzeOutage checks an outage from from to to against c: the target's
// calls (every one, any order), the storm's outcome and its records (by
// event key).
func AnalyzeOutage(c OutageCheck, from, to time.Time, calls []Call, out Outcome, records map[string]*RecordFacts) *OutageReport {
	d := to.Sub(from)
	r := &OutageReport{Kind: c.Kind, OutageS: round(d.Seconds(), 1), RetryBudgetS: round(c.RetryBudget.Seconds(), 1),
		MinCalls: c.MinCalls, ProbeIntervalS: c.ProbeInterval.Seconds(), Allowed: c.Allowed(d), Rate: c.Rate, Burst: c.Burst,
		Bad: map[string]int{}}
	fail := func(format string, a ...any) { r.Failures = append(r.Failures, fmt.Sprintf(format, a...)) }
	if d <= c.RetryBudget {
		fail("outage %.0f s not longer than the retry budget %.0f s", d.Seconds(), c.RetryBudget.Seconds())
	}
	var after []time.Time
	for _, cl := range calls {
		switch {
		case cl.At.Before(from):
		case !cl.At.After(to):
			r.CallsDuring++
			if len(r.CallOffsetsS) < maxSampleCalls {
				r.CallOffsetsS = append(r.CallOffsetsS, round(cl.At.Sub(from).Seconds(), 2))
			}
		default:
			after = append(after, cl.At)
		}
	}
	sort.Float64s(r.CallOffsetsS)
	r.Probes = max(0, r.CallsDuring-c.MinCalls)
	if r.CallsDuring > r.Allowed {
		fail("%d calls during the outage, allowed %d (%d + one per %s)", r.CallsDuring, r.Allowed, c.MinCalls, c.ProbeInterval)
	}
	r.DrainCalls = len(after)
	if len(after) > 0 {
		sort.Slice(after, func(i, j int) bool { return after[i].Before(after[j]) })
		r.FirstCallAfterS = round(after[0].Sub(to).Seconds(), 2)
		span := after[len(after)-1].Sub(after[0])
		r.DrainS = round(span.Seconds(), 1)
		if span > 0 {
			r.DrainMeanPerS = round(float64(len(after)-1)/span.Seconds(), 1)
		}
		r.PerSecond, r.MaxPerSecond = perSecond(to, after)
		r.MaxIn1s = maxInSpan(after, time.Second)
		r.BucketPeak = round(BucketPeak(after, c.Rate), 2)
	}
	var releases []time.Time
	released := map[string]time.Time{} // key → its last release
	for _, k := range sortedKeys(records) {
		rec := records[k]
		if rec == nil {
			continue
		}
		for _, h := range rec.History {
			if h.From == webhook.StatusHeld && h.To == webhook.StatusRetry {
				released[k] = h.At
				if h.At.After(to) {
					releases = append(releases, h.At)
				} else if !h.At.Before(from) {
					r.ReleasesDuringOutage++
				}
			}
		}
		if rec.Status != webhook.StatusSucceeded && len(r.BadSamples) < maxSampleKeys {
			r.BadSamples = append(r.BadSamples, fmt.Sprintf("%s %s after %d attempts: %s", k, rec.Status, rec.Attempts, webhook.Truncate(rec.LastError, 200)))
		}
	}
	r.Releases = len(releases)
	if len(releases) > 0 {
		sort.Slice(releases, func(i, j int) bool { return releases[i].Before(releases[j]) })
		_, r.ReleaseMaxPerSecond = perSecond(to, releases)
		r.ReleaseBucketPeak = round(BucketPeak(releases, c.Rate), 2)
		if r.ReleaseBucketPeak > c.Burst+releaseSlack {
			fail("drain above the rate limit: its releases %.1f beyond %g/s·t in one span (burst %g)", r.ReleaseBucketPeak, c.Rate, c.Burst)
		}
	}
	var delays []time.Duration
	for _, cl := range calls {
		if rel, ok := released[cl.Key]; ok && cl.At.After(rel) && cl.At.After(to) {
			delays = append(delays, cl.At.Sub(rel))
		}
	}
	r.ReleaseToCall = PercentilesOf(delays)
	if len(after) > 0 {
		// The drain takes its tokens at the release: the calls of any span
		// come from the releases of that span widened by the spread of the
		// release → call delays, so they may exceed Rate·t by Burst +
		// Rate·spread, and no more. The spread is the one measured (a
		// loaded machine bunches more), never less than c.Pipeline.
		pipe := c.Pipeline
		if pipe == 0 {
			pipe = PipelineSpread
		}
		if len(delays) > 0 {
			pipe = max(pipe, slices.Max(delays)-slices.Min(delays))
		}
		r.PipelineSpreadS = round(pipe.Seconds(), 2)
		r.CallsAllowedPeak = round(c.Burst+c.Rate*pipe.Seconds(), 2)
		if r.BucketPeak > r.CallsAllowedPeak {
			fail("calls after the return above the rate limit: %.1f beyond %g/s·t in one span (allowed %g: burst %g + %s of pipeline spread); %d at most in one second",
				r.BucketPeak, c.Rate, r.CallsAllowedPeak, c.Burst, pipe, r.MaxPerSecond)
		}
	}
	for st, n := range out.Statuses {
		if webhook.Status(st) != webhook.StatusSucceeded && n > 0 {
			r.Bad[st] = n
		}
	}
	if len(r.Bad) > 0 {
		fail("not every event SUCCEEDED: %s", fmtCounts(r.Bad))
	}
	if out.DLQ > 0 || out.Compensated > 0 || out.Dead > 0 {
		fail("dead letters: DLQ %d, compensated %d, dead %d", out.DLQ, out.Compensated, out.Dead)
	}
	return r
}

// perSecond counts the calls per calendar second from start's second on,
// and returns the counts (at most maxSampleSeconds) and the largest.
func perSecond(start time.Time, at []time.Time) ([]int, int) {
	base := start.Truncate(time.Second)
	var counts []int
	most := 0
	for _, t := range at {
		i := int(t.Sub(base) / time.Second)
		if i >= maxSampleSeconds {
			i = maxSampleSeconds - 1
		}
		for len(counts) <= i {
			counts = append(counts, 0)
		}
		counts[i]++
		most = max(most, counts[i])
	}
	return counts, most
}

// maxInSpan returns the most calls of sorted at within any span of d.
func maxInSpan(at []time.Time, d time.Duration) int {
	most, i := 0, 0
	for j := range at {
		for at[j].Sub(at[i]) >= d {
			i++
		}
		most = max(most, j-i+1)
	}
	return most
}

// BucketPeak returns the largest number of calls of sorted at beyond what
// a rate of rate per second allows over their span: max over i ≤ j of
// (j−i+1) − rate·(at[j]−at[i]). Calls that honour a token bucket of rate
// and capacity b never exceed b.
func BucketPeak(at []time.Time, rate float64) float64 {
	if len(at) == 0 {
		return 0
	}
	peak := math.Inf(-1)
	best := math.Inf(1) // min over i ≤ j of i − rate·t_i
	for j, t := range at {
		x := float64(j) - rate*t.Sub(at[0]).Seconds()
		best = min(best, x)
		peak = max(peak, x-best+1)
	}
	return peak
}

package storm

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
)

func TestRetryBudget(t *testing.T) {
	cases := []struct {
		name      string
		attempts  int
		base, cap time.Duration
		want      time.Duration
	}{
		{"deployed: 5 attempts from 2 s", 5, 2 * time.Second, 15 * time.Minute, 30 * time.Second},
		{"chaos: 6 attempts from 1 s, cap 4 s", 6, time.Second, 4 * time.Second, 15 * time.Second},
		{"one attempt: no retry", 1, time.Second, time.Minute, 0},
		{"huge attempts stay at the cap", 100, time.Second, time.Second, 99 * time.Second},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := RetryBudget(c.attempts, c.base, c.cap); got != c.want {
				t.Errorf("RetryBudget(%d, %s, %s) = %s, want %s", c.attempts, c.base, c.cap, got, c.want)
			}
		})
	}
}

// every returns n times from t0, step apart.
func every(t0 time.Time, n int, step time.Duration) []time.Time {
	var out []time.Time
	for i := range n {
		out = append(out, t0.Add(time.Duration(i)*step))
	}
	return out
}

func TestBucketPeak(t *testing.T) {
	t0 := time.Unix(1000, 0)
	cases := []struct {
		name string
		at   []time.Time
		rate float64
		want float64
	}{
		{"empty", nil, 10, 0},
		{"one call", every(t0, 1, 0), 10, 1},
		{"exactly at the rate", every(t0, 100, 100*time.Millisecond), 10, 1},
		{"a burst of 20 at once", every(t0, 20, 0), 10, 20},
		{"twice the rate for 10 s", every(t0, 200, 50*time.Millisecond), 10, 200 - 10*9.95},
		{"a burst then the rate", append(every(t0, 10, 0), every(t0.Add(100*time.Millisecond), 50, 100*time.Millisecond)...), 10, 10},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := BucketPeak(c.at, c.rate); got < c.want-1e-6 || got > c.want+1e-6 {
				t.Errorf("BucketPeak = %v, want %v", got, c.want)
			}
		})
	}
}

func TestAnalyzeOutage(t *testing.T) {
	from := time.Unix(2000, 0)
	to := from.Add(2 * time.Minute)
	c := OutageCheck{Kind: "down", MinCalls: 5, ProbeInterval: 15 * time.Second, Rate: 10, Burst: 10, RetryBudget: 30 * time.Second}
	if got := c.Allowed(to.Sub(from)); got != 5+8+1 {
		t.Fatalf("Allowed(2 min) = %d, want 14", got)
	}
	calls := func(at ...[]time.Time) []Call {
		var out []Call
		for _, l := range at {
			for _, a := range l {
				out = append(out, Call{At: a, Status: http.StatusOK})
			}
		}
		return out
	}
	good := Outcome{Statuses: map[string]int{"SUCCEEDED": 50}}
	breaker := every(from.Add(time.Second), 5, 10*time.Millisecond)
	probes := every(from.Add(16*time.Second), 7, 15*time.Second)
	drain := every(to.Add(2*time.Second), 50, 100*time.Millisecond)

	r := AnalyzeOutage(c, from, to, calls(breaker, probes, drain), good, nil)
	if len(r.Failures) != 0 {
		t.Fatalf("a good outage failed: %v", r.Failures)
	}
	// The pipeline may bunch a burst's calls by Rate·PipelineSpread (5).
	if r := AnalyzeOutage(c, from, to, calls(every(to.Add(time.Second), 14, 0)), good, nil); len(r.Failures) != 0 {
		t.Errorf("14 calls at once (burst 10 + 5 of pipeline allowed): %v", r.Failures)
	}
	if r.Probes != 7 || r.CallsDuring != 12 || r.DrainCalls != 50 || r.MaxPerSecond != 10 || r.FirstCallAfterS != 2 || r.DrainMeanPerS != 10 {
		t.Errorf("report %+v", r)
	}

	for _, bad := range []struct {
		name    string
		c       OutageCheck
		calls   []Call
		out     Outcome
		failure string
	}{
		{"every event burns its attempts", c, calls(every(from, 50*5, 100*time.Millisecond)), good, "calls during the outage"},
		{"events failed", c, calls(breaker), Outcome{Statuses: map[string]int{"SUCCEEDED": 40, "DEAD": 10}, Dead: 10}, "not every event SUCCEEDED"},
		{"dead letters", c, calls(breaker), Outcome{Statuses: map[string]int{"SUCCEEDED": 50}, DLQ: 1}, "dead letters"},
		{"drain at once", c, calls(every(to.Add(time.Second), 50, time.Millisecond)), good, "calls after the return above the rate limit"},
		{"drain at twice the rate", c, calls(every(to.Add(time.Second), 50, 50*time.Millisecond)), good, "calls after the return above the rate limit"},
		{"outage inside the retry budget", OutageCheck{Kind: "down", MinCalls: 5, Rate: 10, Burst: 10, RetryBudget: 5 * time.Minute}, nil, good, "not longer than the retry budget"},
		{"a call while paused", OutageCheck{Kind: "paused", Rate: 10, Burst: 10}, calls(every(from.Add(time.Minute), 1, 0)), good, "1 calls during the outage, allowed 0"},
	} {
		t.Run(bad.name, func(t *testing.T) {
			r := AnalyzeOutage(bad.c, from, to, bad.calls, bad.out, nil)
			if !strings.Contains(strings.Join(r.Failures, "; "), bad.failure) {
				t.Errorf("failures %q, want one with %q", r.Failures, bad.failure)
			}
			rep := &Report{Outage: r}
			if len(rep.Failures()) == 0 {
				t.Error("the report's Failures omit the outage's")
			}
		})
	}
}

func TestAnalyzeOutageReadsReleasesAndBadRecords(t *testing.T) {
	from := time.Unix(3000, 0)
	to := from.Add(time.Minute)
	c := OutageCheck{Kind: "paused", Rate: 10, Burst: 10, RetryBudget: 30 * time.Second}
	held := func(at time.Time) *RecordFacts {
		return &RecordFacts{Status: webhook.StatusSucceeded, History: []webhook.HistoryEntry{
			{At: from.Add(time.Second), From: webhook.StatusProcessing, To: webhook.StatusHeld},
			{At: at, From: webhook.StatusHeld, To: webhook.StatusRetry}}}
	}
	records := map[string]*RecordFacts{"carrier": held(from.Add(30 * time.Second)), "dead": {Status: webhook.StatusDead, Attempts: 5, LastError: "nothing to compensate: 503"}}
	for i, at := range every(to.Add(time.Second), 30, 10*time.Millisecond) {
		records[fmt.Sprint("k", i)] = held(at)
	}
	r := AnalyzeOutage(c, from, to, nil, Outcome{Statuses: map[string]int{"SUCCEEDED": 31, "DEAD": 1}, Dead: 1}, records)
	if r.Releases != 30 || r.ReleasesDuringOutage != 1 || r.ReleaseMaxPerSecond != 30 || r.ReleaseBucketPeak != 27.1 {
		t.Errorf("releases %d (during %d), max/s %d, peak %v; want 30 (1), 30, 27.1 (30 − 10·0.29 s)", r.Releases, r.ReleasesDuringOutage, r.ReleaseMaxPerSecond, r.ReleaseBucketPeak)
	}
	if len(r.BadSamples) != 1 || !strings.Contains(r.BadSamples[0], "dead DEAD after 5 attempts: nothing to compensate") {
		t.Errorf("bad samples %q", r.BadSamples)
	}
	if !strings.Contains(strings.Join(r.Failures, "; "), "drain above the rate limit: its releases 27.1") {
		t.Errorf("30 releases in 0.29 s at 10/s, burst 10: failures %q", r.Failures)
	}
	// At the rate, with calls 200 ms after their releases.
	records = map[string]*RecordFacts{}
	var cl []Call
	for i, at := range every(to.Add(time.Second), 30, 100*time.Millisecond) {
		k := fmt.Sprint("k", i)
		records[k] = held(at)
		cl = append(cl, Call{At: at.Add(200 * time.Millisecond), Key: k, Status: http.StatusOK})
	}
	r = AnalyzeOutage(c, from, to, cl, Outcome{Statuses: map[string]int{"SUCCEEDED": 30}}, records)
	if len(r.Failures) != 0 || r.ReleaseToCall.Count != 30 || r.ReleaseToCall.P50 != 200 || r.ReleaseBucketPeak != 1 {
		t.Errorf("a drain at the rate: failures %q, release → call %+v, release peak %v", r.Failures, r.ReleaseToCall, r.ReleaseBucketPeak)
	}
}

func TestTargetDownAnswers503AndLogsCalls(t *testing.T) {
	tg := NewTarget(TargetConfig{Dedupe: true, Down: true})
	if got := post(t, tg, "a", "i1"); got != http.StatusServiceUnavailable {
		t.Errorf("down: %d, want 503", got)
	}
	if eff, _ := tg.Effects(); len(eff) != 0 {
		t.Errorf("down, applied %v", eff)
	}
	tg.SetDown(false)
	if got := post(t, tg, "a", "i1"); got != http.StatusOK {
		t.Errorf("up: %d, want 200", got)
	}
	out := tg.Outages()
	calls, dropped := tg.Calls()
	if len(out) != 1 || out[0].To.IsZero() || out[0].To.Before(out[0].From) {
		t.Errorf("outages %v", out)
	}
	if len(calls) != 2 || dropped != 0 || calls[0].Status != 503 || calls[1].Status != 200 || calls[0].Key != "a" {
		t.Errorf("calls %v dropped %d", calls, dropped)
	}
	if st := tg.Stats(); st.WhileDown != 1 || st.Requests != 2 {
		t.Errorf("stats %+v", st)
	}
	if eff, _ := tg.Effects(); eff["a"]["i1"] != 1 {
		t.Errorf("effects %v", eff)
	}
}

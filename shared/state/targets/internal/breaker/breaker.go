// Package breaker is the arithmetic of a target's circuit breaker and token
// bucket, on plain values and epoch milliseconds, shared by the DynamoDB
// and the in-memory Gate so that both decide the same way: what an
// admission does with a breaker's state, what a reported outcome changes,
// and what a take from a bucket grants.
package breaker

import "math"

// Params are the breaker's and bucket's settings (targets.Config, in
// milliseconds).
type Params struct {
	MinCalls      int64
	FailureRate   float64
	WindowMs      int64
	ProbeMs       int64
	RatePerSecond float64
}

// State is a breaker's stored state. A missing item is the zero State
// (Exists false): closed, its window long expired.
type State struct {
	Exists      bool
	Open        bool
	WindowStart int64 // ms
	Calls       int64 // calls reserved (or counted) in the window
	Fails       int64 // failures reported in the window
	Oks         int64 // successes reported in the window
	LastCallAt  int64 // ms of the last reservation
	OpenedAt    int64 // ms
	ProbeAt     int64 // ms: the next probe may start then (open)
	ProbeOwner  string
	Version     int64
}

// Pending returns the calls of the window whose outcome is not reported.
func (s State) Pending() int64 { return max(0, s.Calls-s.Fails-s.Oks) }

// Decision is what an admission does with a state.
type Decision int

const (
	// Reserve: count one more call in the current window, then call.
	Reserve Decision = iota
	// Roll: start a new window holding this one call, then call.
	Roll
	// Free: call, writing nothing (a window of MinCalls successes and no
	// failure).
	Free
	// Wait: read again shortly; calling now could exceed the failure budget
	// if the pending calls fail.
	Wait
	// TryProbe: take the probe slot of the interval (open, probe due).
	TryProbe
	// Hold: open, and the probe of this interval is taken.
	Hold
)

// String names the decision (for test messages).
func (d Decision) String() string {
	return [...]string{"reserve", "roll", "free", "wait", "probe", "hold"}[d]
}

// Expired reports whether the window of s is over at now and may be
// replaced: it ended and no call is pending, or the last reservation is a
// window old (a call that never reported: its processor died).
func (p Params) Expired(s State, now int64) bool {
	if !s.Exists {
		return true
	}
	return now >= s.WindowStart+p.WindowMs && (s.Pending() == 0 || now >= s.LastCallAt+p.WindowMs)
}

// Free reports whether the window of s admits with no write: it has
// MinCalls successes, no failure, and it is not over.
func (p Params) Free(s State, now int64) bool {
	return s.Exists && !s.Open && s.Oks >= p.MinCalls && s.Fails == 0 && now < s.WindowStart+p.WindowMs
}

// Admit decides what an admission at now does with s.
func (p Params) Admit(s State, now int64) Decision {
	switch {
	case s.Open && now >= s.ProbeAt:
		return TryProbe
	case s.Open:
		return Hold
	case p.Expired(s, now):
		return Roll
	case p.Free(s, now):
		return Free
	case p.ShouldOpen(s):
		// The window's outcomes open it: its reporter is opening it.
		return Wait
	case s.Fails+s.Oks < p.MinCalls && p.tripped(s.Calls, s.Calls-s.Oks):
		// The window cannot be judged yet (fewer than MinCalls outcomes)
		// and would open if every pending call failed: wait for them. This
		// bounds a target dead from the window's start to MinCalls calls.
		// Once MinCalls outcomes are in, the window is judged on them, not
		// on what its pending calls might do: a target failing a share
		// below FailureRate keeps being called at any concurrency.
		return Wait
	}
	return Reserve
}

// tripped reports whether calls completed calls of which fails failed open
// the breaker.
func (p Params) tripped(calls, fails int64) bool {
	return calls >= p.MinCalls && float64(fails) >= p.FailureRate*float64(calls)
}

// ShouldOpen reports whether the reported outcomes of the closed s open it.
func (p Params) ShouldOpen(s State) bool {
	return !s.Open && p.tripped(s.Fails+s.Oks, s.Fails)
}

// Reserved returns s with one more call reserved at now.
func Reserved(s State, now int64) State {
	s.Calls++
	s.LastCallAt = now
	s.Version++
	return s
}

// Rolled returns s with a new window at now holding one reserved call.
func Rolled(s State, now int64) State {
	s.Exists, s.Open = true, false
	s.WindowStart, s.Calls, s.Fails, s.Oks, s.LastCallAt = now, 1, 0, 0, now
	s.Version++
	return s
}

// Opened returns s opened at now, its first probe an interval later.
func (p Params) Opened(s State, now int64) State {
	s.Open, s.OpenedAt, s.ProbeAt, s.ProbeOwner = true, now, now+p.ProbeMs, ""
	s.Version++
	return s
}

// Probing returns s with the probe slot of the interval taken by owner at
// now: the next probe is an interval later.
func (p Params) Probing(s State, now int64, owner string) State {
	s.ProbeAt, s.ProbeOwner = now+p.ProbeMs, owner
	s.Version++
	return s
}

// Closed returns s closed at now, with a new empty window.
func Closed(s State, now int64) State {
	s.Open, s.ProbeOwner = false, ""
	s.WindowStart, s.Calls, s.Fails, s.Oks, s.LastCallAt = now, 0, 0, 0, 0
	s.Version++
	return s
}

// Outcome is how a reported outcome changes a closed breaker's counters.
type Outcome int

const (
	// Ignore: nothing to write (a success outside its window, or a free
	// call's success, or any outcome while open).
	Ignore Outcome = iota
	// CountOk: one more success in the window the call was reserved in.
	CountOk
	// CountFail: one more failure of a call reserved in the window.
	CountFail
	// AddFail: one more call and failure (the call was not reserved in the
	// current window: a free call, or its window was replaced).
	AddFail
)

// Report decides what the outcome of a call reserved in window (0: a free
// call) changes in s.
func Report(s State, window int64, failed bool) Outcome {
	switch {
	case !s.Exists || s.Open:
		return Ignore
	case window != 0 && window == s.WindowStart && failed:
		return CountFail
	case window != 0 && window == s.WindowStart:
		return CountOk
	case failed:
		return AddFail
	}
	return Ignore
}

// Apply returns s changed by o.
func Apply(s State, o Outcome) State {
	switch o {
	case CountOk:
		s.Oks++
	case CountFail:
		s.Fails++
	case AddFail:
		s.Calls++
		s.Fails++
	default:
		return s
	}
	s.Version++
	return s
}

// Bucket is a token bucket's stored state, in millitokens.
type Bucket struct {
	Exists    bool
	Milli     int64   // millitokens left at UpdatedAt
	UpdatedAt int64   // ms
	Rate      float64 // a per-target rate override (0: none)
}

// Capacity returns the most millitokens a bucket at rate holds: one
// second's worth, at least one token.
func Capacity(rate float64) int64 { return int64(math.Max(rate, 1) * 1000) }

// Take returns what taking n tokens from b at now at rate (tokens per
// second) grants, the bucket after it, and when (ms) the next token is due.
// A missing bucket starts full. A clock behind UpdatedAt refills nothing.
func Take(b Bucket, now int64, rate float64, n int) (granted int, after Bucket, next int64) {
	capacity := Capacity(rate)
	milli := capacity
	at := now
	if b.Exists {
		at = max(now, b.UpdatedAt)
		refill := float64(now-b.UpdatedAt) * rate // ms × tokens/s = millitokens
		milli = b.Milli
		if refill > 0 {
			milli = min(capacity, b.Milli+int64(math.Min(refill, float64(capacity))))
		}
	}
	granted = int(min(int64(max(n, 0)), milli/1000))
	milli -= int64(granted) * 1000
	next = at
	if milli < 1000 {
		next = at + int64(math.Ceil(float64(1000-milli)/rate))
	}
	return granted, Bucket{Exists: true, Milli: milli, UpdatedAt: at, Rate: b.Rate}, next
}

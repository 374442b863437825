package webhook

import (
	"slices"
	"time"
)

// Limits of the calls recorded on an event record (`calls`, `callCount`).
const (
	// MaxCalls is how many calls a record keeps, the newest; callCount
	// counts them all.
	MaxCalls = 8
	// MaxCallError bounds a call's error text, in bytes of cleaned UTF-8.
	MaxCallError = 200
	// MaxCallSnippet bounds the response body snippet a call keeps (only
	// for an answer that is not 2xx), in bytes of cleaned UTF-8.
	MaxCallSnippet = 256
)

// Call is one outside HTTP call a handler made while processing an event:
// when it started, the target it was bound for, the status answered (0: no
// answer, see Error), how long it took to the response's headers, why it
// failed, and the start of the response body when the answer was not 2xx.
type Call struct {
	At      time.Time
	Target  string
	Status  int
	Latency time.Duration
	Error   string
	Snippet string
}

// AddCalls adds the calls an attempt made to l: newest are the last of
// them (oldest first; an attempt need keep no more than [MaxCalls]), made
// counts them all (at least len(newest)). l.Calls keeps the newest
// MaxCalls and l.CallCount counts every call; the attempt's settling write
// stores both with the transition it makes.
func (l *Lease) AddCalls(newest []Call, made int) {
	made = max(made, len(newest))
	if made == 0 {
		return
	}
	all := append(slices.Clone(l.Calls), newest...)
	l.Calls = all[max(len(all)-MaxCalls, 0):]
	l.CallCount += made
	l.added += made
}

// CallsAdded reports how many calls [Lease.AddCalls] added to l: when none
// were, a settling write leaves the record's calls as they are.
func (l Lease) CallsAdded() int { return l.added }

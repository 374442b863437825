package storm

import (
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"

	"github.com/hookwall/hookwall/shared/engine/process"
)

// TargetConfig says how the forward target misbehaves.
type TargetConfig struct {
	// Fail5xx is the share of requests answered 503 before anything is applied.
	Fail5xx float64
	// Timeout is the share of requests applied and then held until the
	// client gives up (at most Hold): the client sees a timeout although
	// the effect happened.
	Timeout float64
	// Slow is the share of requests that take SlowFor before they are
	// applied and answered (a slow handler).
	Slow    float64
	SlowFor time.Duration
	// Reject4xx, if set, names the event keys answered 422 every time (a
	// permanent failure: the event ends FAILED, then COMPENSATED or DEAD).
	Reject4xx func(eventKey string) bool
	// Dedupe says the business dedupes by Idempotency-Key, as a careful one
	// does: a repeat of an applied key is answered 200 and counted as an
	// absorbed replay, not applied again.
	Dedupe bool
	// Hold bounds a timeout's hold (default 30 s).
	Hold time.Duration
	// Poison, if set, names the event keys answered 500 every time, a
	// retryable failure of their own (the target answers 500 to their
	// payload only): the poison events of issue 29.
	Poison func(eventKey string) bool
	// Down starts the target down: every request is answered 503 at once,
	// nothing applied, until [Target.SetDown](false) (the outage scenarios).
	Down bool
}

// Call is one request the target received: when, for which event, and
// what it answered (the outage scenarios count calls while down and per
// second after the return).
type Call struct {
	At     time.Time
	Key    string
	Status int
}

// Outage is a span during which the target was down; To is zero while it
// still is.
type Outage struct {
	From, To time.Time
}

// maxCallLog bounds the target's call log (about 48 bytes a call); calls
// beyond it are counted, not logged.
const maxCallLog = 1 << 20

// Target is the business behind Hookwall's forwarding handler: it counts
// the effects per event key (the envelope's "key") and per idempotency key.
type Target struct {
	cfg TargetConfig

	mu        sync.Mutex
	applied   map[string]map[string]int // event key → idempotency key → times applied
	first     map[string]time.Time      // event key → first effect
	requests  int
	failed5xx int
	timeouts  int
	slow      int
	rejected  int
	poisoned  int
	absorbed  int
	downCalls int
	down      bool
	outages   []Outage
	calls     []Call
	dropped   int
}

// NewTarget returns a Target for cfg.
func NewTarget(cfg TargetConfig) *Target {
	if cfg.Hold <= 0 {
		cfg.Hold = 30 * time.Second
	}
	t := &Target{cfg: cfg, applied: map[string]map[string]int{}, first: map[string]time.Time{}}
	t.SetDown(cfg.Down)
	return t
}

// SetDown takes the target down (every request answered 503, nothing
// applied) or brings it back, and records the outage's span.
func (t *Target) SetDown(down bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if down == t.down {
		return
	}
	t.down = down
	if down {
		t.outages = append(t.outages, Outage{From: time.Now()})
	} else {
		t.outages[len(t.outages)-1].To = time.Now()
	}
}

// Outages returns the spans the target was down, oldest first.
func (t *Target) Outages() []Outage {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]Outage(nil), t.outages...)
}

// Calls returns the call log, oldest first, and how many calls it dropped
// (beyond its bound).
func (t *Target) Calls() ([]Call, int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]Call(nil), t.calls...), t.dropped
}

// logCall logs one call and what it was answered.
func (t *Target) logCall(key string, status int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.calls) < maxCallLog {
		t.calls = append(t.calls, Call{At: time.Now(), Key: key, Status: status})
	} else {
		t.dropped++
	}
}

// ServeHTTP handles one forwarded event.
func (t *Target) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 8<<20))
	if err != nil {
		http.Error(w, "read body", http.StatusBadRequest)
		return
	}
	var env struct {
		Key string `json:"key"`
	}
	_ = json.Unmarshal(body, &env)
	idem := r.Header.Get(process.HeaderIdempotencyKey)
	t.mu.Lock()
	t.requests++
	down := t.down
	if down {
		t.downCalls++
	}
	t.mu.Unlock()
	if down {
		t.logCall(env.Key, http.StatusServiceUnavailable)
		http.Error(w, "storm target: down", http.StatusServiceUnavailable)
		return
	}
	if t.cfg.Poison != nil && t.cfg.Poison(env.Key) {
		t.count(&t.poisoned)
		t.logCall(env.Key, http.StatusInternalServerError)
		http.Error(w, "storm target: this payload always fails", http.StatusInternalServerError)
		return
	}
	if t.cfg.Reject4xx != nil && t.cfg.Reject4xx(env.Key) {
		t.count(&t.rejected)
		t.logCall(env.Key, http.StatusUnprocessableEntity)
		http.Error(w, "rejected by the storm's target", http.StatusUnprocessableEntity)
		return
	}
	dice := rand.Float64()
	switch {
	case dice < t.cfg.Fail5xx:
		t.count(&t.failed5xx)
		t.logCall(env.Key, http.StatusServiceUnavailable)
		http.Error(w, "storm target: injected failure", http.StatusServiceUnavailable)
		return
	case dice < t.cfg.Fail5xx+t.cfg.Timeout:
		t.count(&t.timeouts)
		t.logCall(env.Key, http.StatusGatewayTimeout)
		t.apply(env.Key, idem)
		select { // the effect happened; the client gives up waiting
		case <-r.Context().Done():
		case <-time.After(t.cfg.Hold):
		}
		http.Error(w, "storm target: too late", http.StatusGatewayTimeout)
		return
	case dice < t.cfg.Fail5xx+t.cfg.Timeout+t.cfg.Slow:
		t.count(&t.slow)
		time.Sleep(t.cfg.SlowFor) // a slow business: applies even if the client left
	}
	t.logCall(env.Key, http.StatusOK)
	t.apply(env.Key, idem)
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"ok":true}`)
}

func (t *Target) count(n *int) {
	t.mu.Lock()
	*n++
	t.mu.Unlock()
}

// apply records the effect of (event key, idempotency key), or an absorbed
// replay when the target dedupes and the key was applied.
func (t *Target) apply(key, idem string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	m := t.applied[key]
	if m == nil {
		m = map[string]int{}
		t.applied[key] = m
		t.first[key] = time.Now()
	}
	if t.cfg.Dedupe && m[idem] > 0 {
		t.absorbed++
		return
	}
	m[idem]++
}

// Effects returns, per event key, the applied count per idempotency key,
// and the time of each event's first effect.
func (t *Target) Effects() (map[string]map[string]int, map[string]time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make(map[string]map[string]int, len(t.applied))
	for k, m := range t.applied {
		c := make(map[string]int, len(m))
		for i, v := range m {
			c[i] = v
		}
		out[k] = c
	}
	first := make(map[string]time.Time, len(t.first))
	for k, v := range t.first {
		first[k] = v
	}
	return out, first
}

// TargetStats are the target's request counts.
type TargetStats struct {
	Requests        int `json:"requests"`
	Failed5xx       int `json:"failed_5xx"`
	Timeouts        int `json:"timeouts"`
	Slow            int `json:"slow"`
	Rejected4xx     int `json:"rejected_4xx"`
	AbsorbedReplays int `json:"absorbed_replays"`
	// WhileDown are the requests answered 503 because the target was down.
	WhileDown int `json:"while_down"`
	// Poisoned are the requests answered 500 to a poison event.
	Poisoned int `json:"poisoned_500,omitempty"`
}

// Stats returns the target's request counts.
func (t *Target) Stats() TargetStats {
	t.mu.Lock()
	defer t.mu.Unlock()
	return TargetStats{Requests: t.requests, Failed5xx: t.failed5xx, Timeouts: t.timeouts, Slow: t.slow,
		Rejected4xx: t.rejected, AbsorbedReplays: t.absorbed, WhileDown: t.downCalls, Poisoned: t.poisoned}
}

// HasEffects reports whether every key has at least one effect.
func (t *Target) HasEffects(keys []string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, k := range keys {
		if len(t.applied[k]) == 0 {
			return false
		}
	}
	return true
}

package store

import (
	"sync"

	"github.com/hookwall/hookwall/shared/base/webhook"
)

// state is what a lease-taking write pins the record to, so that it can
// write the history entry of the transition (keyed by the new version, from
// the old status) in the same conditional write.
type state struct {
	version       int64
	status        webhook.Status
	attempts      int64
	compensations int64
}

func stateOf(r *Record) state {
	return state{version: r.Version, status: r.Status, attempts: r.Attempts, compensations: r.Compensations}
}

// claimedState is a record as a claim leaves it, the usual state an
// acquisition finds.
var claimedState = state{version: 1, status: webhook.StatusReceived}

// maxHints bounds the hints a table remembers.
const maxHints = 4096

// hints remembers, per event key, the state this table last wrote or saw,
// so that the next lease-taking write of the same key (the processor's next
// attempt after a retry, in the same process) guesses it at once. A wrong
// or missing hint costs one failed conditional write, which returns the
// record as it is; correctness never depends on a hint.
type hints struct {
	mu sync.Mutex
	m  map[string]state
}

func (h *hints) get(key string) (state, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s, ok := h.m[key]
	return s, ok
}

func (h *hints) put(key string, s state) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m == nil || len(h.m) >= maxHints {
		h.m = map[string]state{}
	}
	h.m[key] = s
}

func (h *hints) drop(key string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.m, key)
}

package intake

import (
	"sync"
	"sync/atomic"
)

// flight is one delivery's hand-off of one event in this instance. A
// duplicate that arrives while it is in progress waits for it instead of
// going to DynamoDB (where it would find the record RECEIVED inside the
// grace and answer 503).
type flight struct {
	hash     string
	done     chan struct{} // closed when onItsWay is set
	onItsWay bool
}

// flights are the hand-offs in progress, by event key.
type flights struct {
	mu      sync.Mutex
	m       map[string]*flight
	waiters atomic.Int64 // deliveries' items awaiting a flight now
}

// join registers each item's hand-off, or, when a concurrent delivery is
// handing off the same event (same key and payload hash), makes the item
// await that one.
func (fs *flights) join(items []admitted) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.m == nil {
		fs.m = make(map[string]*flight)
	}
	for i := range items {
		it := &items[i]
		if it.cached {
			continue
		}
		if f := fs.m[it.new.Key]; f != nil {
			if f.hash == it.new.PayloadHash {
				it.awaits = f
				fs.waiters.Add(1)
			}
			continue // a conflicting payload goes to DynamoDB
		}
		it.flight = &flight{hash: it.new.PayloadHash, done: make(chan struct{})}
		fs.m[it.new.Key] = it.flight
	}
}

// land ends the items' own hand-offs with their outcome and wakes the
// duplicates that await them.
func (fs *flights) land(items []admitted) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	for i := range items {
		it := &items[i]
		if it.flight == nil {
			continue
		}
		it.flight.onItsWay = it.onItsWay
		close(it.flight.done)
		if fs.m[it.new.Key] == it.flight {
			delete(fs.m, it.new.Key)
		}
		it.flight = nil
	}
}

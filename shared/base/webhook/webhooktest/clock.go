package webhooktest

import (
	"sync"
	"time"
)

// Clock is a settable clock for tests: it stands still until Advance or
// AdvanceTo moves it, so that leases, windows and graces run out exactly
// when a test says, never because a loaded machine was slow. Pass its Now
// method wherever a component takes a clock. It is safe for concurrent use.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock returns a Clock showing start.
func NewClock(start time.Time) *Clock { return &Clock{t: start} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock on by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// AdvanceTo moves the clock on to t; a t before the clock's time is ignored
// (the clock never goes back).
func (c *Clock) AdvanceTo(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.After(c.t) {
		c.t = t
	}
}

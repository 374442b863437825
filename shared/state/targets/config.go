package targets

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hookwall/hookwall/shared/config/settings"
)

// Config is the behaviour of breakers and buckets, the same for every Gate
// over one table. A zero field takes its default; settings.Targets (the
// HOOKWALL_BREAKER_* and HOOKWALL_TARGET_RATE variables) overrides them
// through [Config.With].
type Config struct {
	// MinCalls is the least number of completed calls in a window before its
	// failure rate can open the breaker (default DefaultMinCalls).
	MinCalls int
	// FailureRate opens the breaker once fails/completed calls reach it, in
	// (0, 1] (default DefaultFailureRate).
	FailureRate float64
	// Window is the length of a breaker's counting window (default
	// DefaultWindow).
	Window time.Duration
	// ProbeInterval is the time between probes of an open breaker (default
	// DefaultProbeInterval).
	ProbeInterval time.Duration
	// Rate is the calls per second [Gate.Take] grants per target, with a
	// burst of one second's worth (at least one call) (default DefaultRate).
	Rate float64
	// Wait is the most an admission waits for the outcomes of pending calls
	// before it holds the event (default DefaultWait); keep it well under
	// the handlers' timeouts.
	Wait time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Defaults of [Config]. MinCalls and FailureRate are chosen for their
// false-open rate (docs/OPERATIONS.md, "Choosing the breaker's
// defaults"): a target failing 20% of calls at random opens in about
// 0.01% of full windows (P(X >= 12 | n = 20, p = 0.2), 0.011% over a window
// of up to 600 calls), where 5 calls at 0.5 opened in 5.8% (11.6% over a
// longer window); a dead target still opens after 20 failed calls.
const (
	DefaultMinCalls      = 20
	DefaultFailureRate   = 0.6
	DefaultWindow        = 60 * time.Second
	DefaultProbeInterval = 30 * time.Second
	DefaultRate          = 10.0
	DefaultWait          = 2 * time.Second
)

// How long an instance trusts what it read: a breaker's state (a window
// that admits freely stays free on this instance that long after another
// instance reported a failure) and the list of pauses (a pause made on
// another instance is seen that late; on the same instance at once).
const (
	BreakerCacheFor = time.Second
	PauseCacheFor   = 2 * time.Second
)

// PollEvery is how often a waiting admission reads the breaker again.
const PollEvery = 50 * time.Millisecond

// Poll waits PollEvery, the pause of a gate between two reads of its state
// (a waiting admission, keys a batch read left unprocessed), or returns
// ctx's cause once ctx ends.
func Poll(ctx context.Context) error {
	t := time.NewTimer(PollEvery)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return fmt.Errorf("targets: wait: %w", context.Cause(ctx))
	case <-t.C:
		return nil
	}
}

// PauseRecheck is the RecheckAt of an event held by a pause, from the hold:
// a resume drains held events itself; the sweeper's recheck only catches a
// drain that was cut short.
const PauseRecheck = 5 * time.Minute

// With returns c with the variables set in s (its zero fields are unset).
func (c Config) With(s settings.Targets) Config {
	c.MinCalls = cmp.Or(s.MinCalls, c.MinCalls)
	c.FailureRate = cmp.Or(s.FailureRate, c.FailureRate)
	c.Window = cmp.Or(s.Window, c.Window)
	c.ProbeInterval = cmp.Or(s.ProbeInterval, c.ProbeInterval)
	c.Rate = cmp.Or(s.Rate, c.Rate)
	return c
}

// WithDefaults returns c with its zero fields set to their defaults, or an
// error naming each field out of its domain.
func (c Config) WithDefaults() (Config, error) {
	c.MinCalls = cmp.Or(c.MinCalls, DefaultMinCalls)
	c.FailureRate = cmp.Or(c.FailureRate, DefaultFailureRate)
	c.Window = cmp.Or(c.Window, DefaultWindow)
	c.ProbeInterval = cmp.Or(c.ProbeInterval, DefaultProbeInterval)
	c.Rate = cmp.Or(c.Rate, DefaultRate)
	c.Wait = cmp.Or(c.Wait, DefaultWait)
	if c.Now == nil {
		c.Now = time.Now
	}
	var errs []error
	if c.MinCalls < 1 {
		errs = append(errs, fmt.Errorf("MinCalls %d: want at least 1", c.MinCalls))
	}
	if !(c.FailureRate > 0 && c.FailureRate <= 1) {
		errs = append(errs, fmt.Errorf("FailureRate %g: want more than 0, at most 1", c.FailureRate))
	}
	if c.Window < time.Millisecond || c.ProbeInterval < time.Millisecond || c.Wait < 0 {
		errs = append(errs, fmt.Errorf("Window %s, ProbeInterval %s, Wait %s: want at least 1ms (Wait: not negative)", c.Window, c.ProbeInterval, c.Wait))
	}
	if !(c.Rate > 0) || c.Rate > 1e6 {
		errs = append(errs, fmt.Errorf("Rate %g: want more than 0, at most 1e6 per second", c.Rate))
	}
	if err := errors.Join(errs...); err != nil {
		return c, fmt.Errorf("targets: config: %w", err)
	}
	return c, nil
}

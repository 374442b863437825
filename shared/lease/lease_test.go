package lease

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"
)

type cfg struct {
	d, timeout, base, cap, retention, reserve time.Duration
	attempts                                  int
	log                                       *slog.Logger
	transport                                 http.RoundTripper
	now                                       func() time.Time
	jitter                                    func(int64) int64
	owner                                     func() string
}

func (c *cfg) settings() Settings {
	return Settings{Duration: &c.d, Timeout: &c.timeout, RetryBase: &c.base, RetryCap: &c.cap, Retention: &c.retention,
		FinishReserve: &c.reserve, MaxAttempts: &c.attempts, Logger: &c.log, Transport: &c.transport, Now: &c.now,
		Jitter: &c.jitter, NewOwner: &c.owner}
}

func TestSetDefaults(t *testing.T) {
	var c cfg
	c.settings().SetDefaults()
	if c.d != DefaultDuration || c.base != DefaultRetryBase || c.cap != DefaultRetryCap || c.retention != DefaultRetention ||
		c.reserve != DefaultFinishReserve || c.attempts != DefaultMaxAttempts || c.timeout != 0 {
		t.Errorf("got %+v, want the defaults", c)
	}
	if c.log == nil || c.transport != http.DefaultTransport || c.now == nil || c.jitter == nil || c.owner == nil {
		t.Errorf("got %+v, want every func and the logger set", c)
	}
	if a, b := c.owner(), c.owner(); len(a) != 26 || a == b {
		t.Errorf("got owners %q and %q, want two different 26-character tokens", a, b)
	}
	c = cfg{base: time.Hour}
	c.settings().SetDefaults()
	if c.cap != time.Hour {
		t.Errorf("got RetryCap %v under RetryBase 1h, want 1h", c.cap)
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    cfg
		want string
	}{
		{"zero", cfg{}, ""},
		{"negative timeout", cfg{timeout: -1}, "x: config: negative duration or count"},
		{"negative attempts", cfg{attempts: -1}, "x: config: negative duration or count"},
		{"cap above SQS's maximum", cfg{cap: 13 * time.Hour}, "x: config: RetryCap 13h0m0s above SQS's maximum 12h0m0s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.c.settings().Validate("x")
			if got := ""; err != nil {
				got = err.Error()
				if got != tc.want {
					t.Errorf("got %q, want %q", got, tc.want)
				}
			} else if tc.want != "" {
				t.Errorf("got nil, want %q", tc.want)
			}
		})
	}
}

func TestUntil(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if got := Until(context.Background(), now, time.Minute); !got.Equal(now.Add(time.Minute)) {
		t.Errorf("got %v, want now + 1m", got)
	}
	dl := now.Add(time.Second)
	ctx, cancel := context.WithDeadline(context.Background(), dl)
	defer cancel()
	if got := Until(ctx, now, time.Minute); !got.Equal(dl) {
		t.Errorf("got %v, want the deadline %v", got, dl)
	}
}

func TestKeeperLost(t *testing.T) {
	errLost := errors.New("lost")
	var logs strings.Builder
	log := slog.New(slog.NewTextHandler(&logs, nil))
	var k Keeper
	beats := 0
	hctx, stop := k.Start(context.Background(), 3*time.Millisecond, time.Second, errLost, log,
		func(context.Context) (bool, error) {
			beats++
			if beats == 1 {
				return false, errors.New("throttled")
			}
			return false, nil
		})
	defer stop()
	<-hctx.Done()
	if !k.Lost() || context.Cause(hctx) != errLost {
		t.Errorf("got lost %v, cause %v; want true, %v", k.Lost(), context.Cause(hctx), errLost)
	}
	if !strings.Contains(logs.String(), "throttled") {
		t.Errorf("got logs %q, want the heartbeat error", logs.String())
	}
}

func TestKeeperStopEndsContext(t *testing.T) {
	var k Keeper
	hctx, stop := k.Start(context.Background(), time.Hour, time.Second, errors.New("lost"),
		slog.New(slog.NewTextHandler(io.Discard, nil)), func(context.Context) (bool, error) { return true, nil })
	stop()
	if hctx.Err() == nil || k.Lost() {
		t.Errorf("got err %v, lost %v; want cancelled, not lost", hctx.Err(), k.Lost())
	}
	k.MarkLost() // after stop: no panic
}

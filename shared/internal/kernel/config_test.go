package kernel

import (
	"net/http"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook/webhooktest"
)

type nopQueue struct{ webhooktest.Queue }

func TestSetDefaults(t *testing.T) {
	var c Config
	c.SetDefaults()
	if c.LeaseDuration != DefaultLeaseDuration || c.RetryBase != DefaultRetryBase || c.RetryCap != DefaultRetryCap ||
		c.Retention != DefaultRetention || c.FinishReserve != DefaultFinishReserve || c.MaxAttempts != DefaultMaxAttempts || c.Timeout != 0 {
		t.Errorf("got %+v, want the defaults", c)
	}
	if c.Logger == nil || c.Transport != http.DefaultTransport || c.Now == nil || c.Jitter == nil || c.NewOwner == nil {
		t.Errorf("got %+v, want every func and the logger set", c)
	}
	if a, b := c.NewOwner(), c.NewOwner(); len(a) != OwnerLength || a == b {
		t.Errorf("got owners %q and %q, want two different %d-character tokens", a, b, OwnerLength)
	}
	c = Config{RetryBase: time.Hour}
	c.SetDefaults()
	if c.RetryCap != time.Hour {
		t.Errorf("got RetryCap %v under RetryBase 1h, want 1h", c.RetryCap)
	}
}

func TestValidate(t *testing.T) {
	q := &nopQueue{}
	for _, tc := range []struct {
		name string
		c    Config
		want string
	}{
		{"zero but the queue", Config{Queue: q}, ""},
		{"no queue", Config{}, "x: config: nil Queue"},
		{"negative timeout", Config{Queue: q, Timeout: -1}, "x: config: negative duration or count"},
		{"negative attempts", Config{Queue: q, MaxAttempts: -1}, "x: config: negative duration or count"},
		{"cap above SQS's maximum", Config{Queue: q, RetryCap: 13 * time.Hour}, "x: config: RetryCap 13h0m0s above SQS's maximum 12h0m0s"},
		{"a required field first", Config{Timeout: -1}, "x: config: nil Store"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ""
			if err := tc.c.Validate("x", Field{"Registry", true}, Field{"Store", tc.name != "a required field first"}); err != nil {
				got = err.Error()
			}
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// The defaults lie within the bounds the deployed settings are held to.
func TestDefaultsWithinBounds(t *testing.T) {
	if DefaultLeaseDuration < MinLeaseDuration || DefaultLeaseDuration > MaxLeaseDuration ||
		DefaultRetryBase < MinRetry || DefaultRetryCap > MaxRetry || DefaultRetryBase > DefaultRetryCap ||
		DefaultMaxAttempts < MinMaxAttempts || DefaultMaxAttempts > MaxMaxAttempts ||
		DefaultRetention < MinRetention || DefaultRetention > MaxRetention ||
		DefaultConcurrency < MinConcurrency || DefaultConcurrency > MaxConcurrency {
		t.Error("a default is outside its bounds")
	}
}

func TestBackoffBounds(t *testing.T) {
	base, cap := 2*time.Second, 5*time.Minute
	top := func(n int64) int64 { return n - 1 }
	bottom := func(int64) int64 { return 0 }
	for n := 1; n <= 80; n++ {
		want := cap
		if n <= 8 {
			want = base << (n - 1)
			want = min(want, cap)
		}
		if got := Backoff(n, base, cap, top); got != want {
			t.Errorf("attempt %d: got max %v, want %v", n, got, want)
		}
		if got := Backoff(n, base, cap, bottom); got != 0 {
			t.Errorf("attempt %d: got min %v, want 0", n, got)
		}
	}
	// The default jitter stays within the bound and spreads over it (full
	// jitter, not a constant).
	var c Config
	c.SetDefaults()
	seen := map[time.Duration]bool{}
	var lo, hi int
	for range 1000 {
		got := Backoff(3, base, cap, c.Jitter)
		if got < 0 || got > 8*time.Second {
			t.Fatalf("got %v, want within [0, 8s]", got)
		}
		seen[got] = true
		if got < 4*time.Second {
			lo++
		} else {
			hi++
		}
	}
	if len(seen) < 900 || lo < 400 || hi < 400 {
		t.Fatalf("default jitter: %d distinct values, %d below and %d above the middle; want ~uniform", len(seen), lo, hi)
	}
}

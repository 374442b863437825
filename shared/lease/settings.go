package lease

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	mrand "math/rand/v2"
	"net/http"
	"time"

	"github.com/hookwall/hookwall/shared/webhook"
)

// Defaults of the settings.
const (
	DefaultDuration      = 60 * time.Second
	DefaultMaxAttempts   = 5
	DefaultRetryBase     = 2 * time.Second
	DefaultRetryCap      = 15 * time.Minute
	DefaultRetention     = 7 * 24 * time.Hour
	DefaultFinishReserve = 3 * time.Second
)

// Settings points at the lease, retry and clock fields of an engine's
// config, which [Settings.Validate] checks and [Settings.SetDefaults] fills.
type Settings struct {
	Duration, Timeout, RetryBase, RetryCap, Retention, FinishReserve *time.Duration
	MaxAttempts                                                      *int
	Logger                                                           **slog.Logger
	Transport                                                        *http.RoundTripper
	Now                                                              *func() time.Time
	Jitter                                                           *func(n int64) int64
	NewOwner                                                         *func() string
}

// Validate reports a negative duration or count, or a RetryCap above SQS's
// maximum delay; pkg prefixes the message.
func (s Settings) Validate(pkg string) error {
	switch {
	case *s.Duration < 0, *s.MaxAttempts < 0, *s.Timeout < 0, *s.RetryBase < 0, *s.RetryCap < 0,
		*s.Retention < 0, *s.FinishReserve < 0:
		return errors.New(pkg + ": config: negative duration or count")
	case *s.RetryCap > webhook.MaxQueueDelay:
		return fmt.Errorf("%s: config: RetryCap %v above SQS's maximum %v", pkg, *s.RetryCap, webhook.MaxQueueDelay)
	}
	return nil
}

// SetDefaults fills the zero fields: a discarding logger, the Default
// durations and count (RetryCap at least RetryBase), http.DefaultTransport,
// time.Now, math/rand/v2 and [NewOwner].
func (s Settings) SetDefaults() {
	if *s.Logger == nil {
		*s.Logger = slog.New(slog.NewJSONHandler(io.Discard, nil))
	}
	orDefault(s.Duration, DefaultDuration)
	if *s.MaxAttempts == 0 {
		*s.MaxAttempts = DefaultMaxAttempts
	}
	orDefault(s.RetryBase, DefaultRetryBase)
	orDefault(s.RetryCap, DefaultRetryCap)
	if *s.RetryCap < *s.RetryBase {
		*s.RetryCap = *s.RetryBase
	}
	orDefault(s.Retention, DefaultRetention)
	orDefault(s.FinishReserve, DefaultFinishReserve)
	if *s.Transport == nil {
		*s.Transport = http.DefaultTransport
	}
	if *s.Now == nil {
		*s.Now = time.Now
	}
	if *s.Jitter == nil {
		*s.Jitter = mrand.Int64N
	}
	if *s.NewOwner == nil {
		*s.NewOwner = NewOwner
	}
}

func orDefault(d *time.Duration, def time.Duration) {
	if *d == 0 {
		*d = def
	}
}

// NewOwner returns a lease owner token: 26 random base32 characters
// (130 bits).
func NewOwner() string { return rand.Text() }

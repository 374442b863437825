package settings

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/internal/kernel"
)

// Common holds the variables every function reads.
type Common struct {
	// TableName is the events table: TABLE_NAME (required).
	TableName string
	// QueueURL is the main queue: QUEUE_URL (required).
	QueueURL string
	// TenantsFile (HOOKWALL_TENANTS_FILE, a local path) or TenantsSecretARN
	// (TENANTS_SECRET_ARN, a Secrets Manager secret) locates the tenants
	// document; exactly one is required.
	TenantsFile      string
	TenantsSecretARN string
	// LogLevel is LOG_LEVEL: debug, info, warn or error (optional; default
	// info). It is set even when loading fails, so that main can log the error.
	LogLevel slog.Level
}

// Warnings are the non-fatal findings of a load, one sentence each: a
// deprecated name in use, or one ignored because its new name is set too.
type Warnings []string

// Log logs the warnings, if any, as one line at level warn.
func (w Warnings) Log(log *slog.Logger) {
	if len(w) > 0 {
		log.Warn("deprecated configuration", slog.Any("warnings", []string(w)))
	}
}

// reader reads variables through getenv, collecting one error per variable
// at fault and the warnings. It records every name it reads and the
// deprecated aliases, for the test that holds README and template.yaml to
// the code.
type reader struct {
	getenv   func(string) string
	errs     []error
	warnings Warnings
	read     []string          // every name looked up, in order
	aliases  map[string]string // deprecated name → its replacement
}

func newReader(getenv func(string) string) *reader {
	return &reader{getenv: getenv, aliases: map[string]string{}}
}

func (r *reader) get(name string) string {
	r.read = append(r.read, name)
	return r.getenv(name)
}

func (r *reader) fail(format string, args ...any) {
	r.errs = append(r.errs, fmt.Errorf(format, args...))
}

func (r *reader) err(what string) error {
	if err := errors.Join(r.errs...); err != nil {
		return fmt.Errorf("%s configuration: %w", what, err)
	}
	return nil
}

// lookup returns the value of name or, when name is unset and old is a
// deprecated alias, the value of old; from is the name the value came from
// ("" when neither is set).
func (r *reader) lookup(name, old string) (v, from string) {
	v = r.get(name)
	if old != "" {
		r.aliases[old] = name
		ov := r.get(old)
		switch {
		case ov != "" && v != "":
			r.warnings = append(r.warnings, fmt.Sprintf("%s is ignored because %s is set; remove %s (deprecated)", old, name, old))
		case ov != "":
			return ov, old
		}
	}
	if v == "" {
		return "", ""
	}
	return v, name
}

// deprecatedUse records the use of the deprecated old, to be replaced by name=v.
func (r *reader) deprecatedUse(old, name, v string) {
	r.warnings = append(r.warnings, fmt.Sprintf("%s is deprecated: set %s=%s instead", old, name, v))
}

// required reads name and fails if it is empty.
func (r *reader) required(name string) string { return r.value(name, true) }

// value reads name and fails if it is empty but required.
func (r *reader) value(name string, required bool) string {
	v := r.get(name)
	if v == "" && required {
		r.fail("%s is required", name)
	}
	return v
}

// duration reads a Go duration from name or, as a deprecated alias, an
// integer count of oldUnit from old. It returns def when neither is set or
// the value is invalid, and the name the value came from.
func (r *reader) duration(name, old string, oldUnit, def time.Duration) (time.Duration, string) {
	v, from := r.lookup(name, old)
	switch {
	case from == "":
		return def, name
	case from == old:
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 || n > int64((1<<63-1)/oldUnit) {
			r.fail("%s=%q: want a whole number of %s", old, v, unitName(oldUnit))
			return def, old
		}
		d := time.Duration(n) * oldUnit
		r.deprecatedUse(old, name, formatDuration(d))
		return d, old
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		r.fail("%s=%q: want a Go duration such as %q", name, v, formatDuration(def))
		return def, name
	}
	return d, name
}

// durationIn is duration with the value bounded to [lo, hi].
func (r *reader) durationIn(name, old string, oldUnit, def, lo, hi time.Duration) (time.Duration, string) {
	n := len(r.errs)
	d, from := r.duration(name, old, oldUnit, def)
	if len(r.errs) == n && (d < lo || d > hi) {
		r.fail("%s=%s: want %s to %s", from, formatDuration(d), formatDuration(lo), formatDuration(hi))
		return def, from
	}
	return d, from
}

// lease reads HOOKWALL_LEASE (old: its deprecated name, in oldUnit) within
// the kernel's lease bounds.
func (r *reader) lease(old string, oldUnit time.Duration) (time.Duration, string) {
	return r.durationIn("HOOKWALL_LEASE", old, oldUnit, kernel.DefaultLeaseDuration, kernel.MinLeaseDuration, kernel.MaxLeaseDuration)
}

// retry reads HOOKWALL_RETRY_BASE and HOOKWALL_RETRY_CAP (oldBase, oldCap:
// their deprecated names, in oldUnit) within the kernel's retry bounds, the
// base not above the cap.
func (r *reader) retry(oldBase, oldCap string, oldUnit time.Duration) (base, cap time.Duration) {
	base, baseFrom := r.durationIn("HOOKWALL_RETRY_BASE", oldBase, oldUnit, kernel.DefaultRetryBase, kernel.MinRetry, kernel.MaxRetry)
	cap, capFrom := r.durationIn("HOOKWALL_RETRY_CAP", oldCap, oldUnit, kernel.DefaultRetryCap, kernel.MinRetry, kernel.MaxRetry)
	if base > cap {
		r.fail("%s (%s) is above %s (%s)", baseFrom, formatDuration(base), capFrom, formatDuration(cap))
	}
	return base, cap
}

// attempts reads an attempt limit (old: its deprecated name) within the
// kernel's bounds.
func (r *reader) attempts(name, old string) int {
	return int(r.integer(name, old, kernel.DefaultMaxAttempts, kernel.MinMaxAttempts, kernel.MaxMaxAttempts))
}

// retention reads HOOKWALL_RETENTION (old: its deprecated name, in oldUnit)
// within the kernel's bounds.
func (r *reader) retention(old string, oldUnit time.Duration) (time.Duration, string) {
	return r.durationIn("HOOKWALL_RETENTION", old, oldUnit, kernel.DefaultRetention, kernel.MinRetention, kernel.MaxRetention)
}

// integer reads a decimal integer in [lo, hi] from name or, when it is
// unset, from the deprecated old; def when neither is set or it is invalid.
func (r *reader) integer(name, old string, def, lo, hi int64) int64 {
	v, from := r.lookup(name, old)
	if from == "" {
		return def
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < lo || n > hi {
		if hi == math.MaxInt64 {
			r.fail("%s=%q: want an integer of at least %d", from, v, lo)
		} else {
			r.fail("%s=%q: want an integer from %d to %d", from, v, lo, hi)
		}
		return def
	}
	if from == old {
		r.deprecatedUse(old, name, v)
	}
	return n
}

// boolean reads a strconv.ParseBool value from name or, when it is unset,
// from the deprecated old; def when neither is set or it is invalid.
// outcomeEvents reads HOOKWALL_OUTCOME_EVENTS: which outcome events the
// engines publish (unset: kernel.DefaultOutcomeEvents).
func (r *reader) outcomeEvents() kernel.OutcomeEvents {
	const name = "HOOKWALL_OUTCOME_EVENTS"
	v := r.get(name)
	o, err := kernel.ParseOutcomeEvents(v)
	if err != nil {
		r.fail("%s=%q: want each, failures or none", name, v)
		return kernel.DefaultOutcomeEvents
	}
	return o
}

func (r *reader) boolean(name, old string, def bool) bool {
	v, from := r.lookup(name, old)
	if from == "" {
		return def
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		r.fail("%s=%q: want true or false", from, v)
		return def
	}
	if from == old {
		r.deprecatedUse(old, name, strconv.FormatBool(b))
	}
	return b
}

// httpURL reads an absolute http(s) URL from name (required or optional).
func (r *reader) httpURL(name string, required bool) string {
	v := r.value(name, required)
	if u, err := url.Parse(v); v != "" && (err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "") {
		r.fail("%s: want an absolute http(s) URL", name)
	}
	return v
}

// validTableName reports whether v is a DynamoDB table name: 3 to 255 of
// A-Z a-z 0-9 _ . - (a loop, not a regular expression with counted
// repetition, which costs a cold start 0.26 ms to compile).
func validTableName(v string) bool {
	return len(v) >= 3 && len(v) <= 255 && webhook.OnlyBytes(v, "_.-")
}

// table reads a DynamoDB table name or ARN from name.
func (r *reader) table(name string, required bool) string {
	v := r.value(name, required)
	if v != "" && !validTableName(v) && !strings.HasPrefix(v, "arn:") {
		r.fail("%s=%q: want a DynamoDB table name (3 to 255 of A-Z a-z 0-9 _ . -) or ARN", name, v)
	}
	return v
}

// plain reads an optional value that must not carry spaces or control
// characters (a name, an ARN, a path): a pasted value's usual accident.
func (r *reader) plain(name string) string {
	v := r.get(name)
	if strings.ContainsFunc(v, func(c rune) bool { return c <= ' ' || c == 0x7f }) {
		r.fail("%s: contains a space or control character", name)
	}
	return v
}

// common reads the variables of [Common].
func (r *reader) common() Common {
	c := Common{
		TableName: r.table("TABLE_NAME", true),
		QueueURL:  r.httpURL("QUEUE_URL", true),
	}
	r.tenantsAndLogLevel(&c)
	return c
}

// tenantsAndLogLevel reads the tenants document's location and LOG_LEVEL
// into c: what every function reads, the pre-traffic hook included.
func (r *reader) tenantsAndLogLevel(c *Common) {
	c.TenantsFile = r.get("HOOKWALL_TENANTS_FILE")
	c.TenantsSecretARN = r.plain("TENANTS_SECRET_ARN")
	if (c.TenantsFile == "") == (c.TenantsSecretARN == "") {
		r.fail("set exactly one of HOOKWALL_TENANTS_FILE (local) and TENANTS_SECRET_ARN (AWS)")
	}
	switch v := r.get("LOG_LEVEL"); strings.ToLower(strings.TrimSpace(v)) {
	case "", "info":
		c.LogLevel = slog.LevelInfo
	case "debug":
		c.LogLevel = slog.LevelDebug
	case "warn", "warning":
		c.LogLevel = slog.LevelWarn
	case "error":
		c.LogLevel = slog.LevelError
	default:
		r.fail("LOG_LEVEL=%q: want debug, info, warn or error", v)
	}
}

// formatDuration writes d as time.Duration.String does, without the zero
// units it appends: 15m, not 15m0s; 168h, not 168h0m0s.
func formatDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

func unitName(u time.Duration) string {
	switch u {
	case time.Second:
		return "seconds"
	case 24 * time.Hour:
		return "days"
	}
	return formatDuration(u)
}

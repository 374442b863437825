package settings

import (
	"math"
	"time"
)

// Receiver is the receiver's configuration. Field comments name the variable.
type Receiver struct {
	Common
	// DedupWindow is HOOKWALL_DEDUP_WINDOW: how long a claimed key stays a
	// duplicate (the record's TTL). Positive.
	DedupWindow time.Duration
	// ReenqueueGrace is HOOKWALL_REENQUEUE_GRACE: how long after a claim the
	// delivery that made it may still be sending the event (see
	// intake.Config.ReenqueueGrace). Unset or 0: Budget plus
	// [ReceiverDefaults.GraceMargin]. It must exceed Budget.
	ReenqueueGrace time.Duration
	// MaxEventAge is HOOKWALL_MAX_EVENT_AGE: the oldest event accepted, by
	// the provider's own event time (see intake.Config.MaxEventAge). Unset or
	// 0: DedupWindow less [ReceiverDefaults.EventAgeMargin] (at most half the
	// window). It must be positive and shorter than DedupWindow.
	MaxEventAge time.Duration
	// Budget is HOOKWALL_RECEIVE_BUDGET: the most one delivery may spend on
	// DynamoDB and SQS before it answers 503. Positive.
	Budget time.Duration
	// MaxBody is HOOKWALL_MAX_BODY_BYTES: the body limit in bytes. Positive.
	MaxBody int64
	// HandedOffBytes is HOOKWALL_HANDOFF_CACHE_BYTES: the memory bound of the
	// cache of events this instance handed off, whose duplicates it answers
	// with no AWS call (intake.Config.HandedOff). 0 turns the cache off.
	HandedOffBytes int64
	// HandedOffTTL is HOOKWALL_HANDOFF_CACHE_TTL: how long after its claim a
	// hand-off is remembered. Unset or 0: ReenqueueGrace less
	// [ReceiverDefaults.HandedOffMargin]. It must be shorter than
	// ReenqueueGrace.
	HandedOffTTL time.Duration
	// Tolerance is HOOKWALL_TIMESTAMP_TOLERANCE: how far a signed
	// WeCom/WeChat/Standard Webhooks timestamp may be from now. Negative turns
	// the WeCom/WeChat check off (Standard Webhooks always checks).
	Tolerance time.Duration
}

// ReceiverDefaults are the receiver's defaults, which [LoadReceiver] does
// not state itself: intake.Defaults returns them from intake's constants.
type ReceiverDefaults struct {
	DedupWindow time.Duration // HOOKWALL_DEDUP_WINDOW
	Budget      time.Duration // HOOKWALL_RECEIVE_BUDGET
	MaxBody     int64         // HOOKWALL_MAX_BODY_BYTES
	Tolerance   time.Duration // HOOKWALL_TIMESTAMP_TOLERANCE
	// GraceMargin is added to the budget for the default ReenqueueGrace.
	GraceMargin time.Duration
	// EventAgeMargin is taken from the dedup window (at most half of it) for
	// the default MaxEventAge.
	EventAgeMargin time.Duration
	// HandedOffBytes is the default HOOKWALL_HANDOFF_CACHE_BYTES.
	HandedOffBytes int64
	// HandedOffMargin is taken from ReenqueueGrace for the default
	// HOOKWALL_HANDOFF_CACHE_TTL.
	HandedOffMargin time.Duration
}

// LoadReceiver reads the receiver's configuration through getenv (os.Getenv
// in main), with def for what is unset, and validates it. The error joins
// one error per variable at fault, each naming it.
func LoadReceiver(getenv func(string) string, def ReceiverDefaults) (Receiver, Warnings, error) {
	r := newReader(getenv)
	s := loadReceiver(r, def)
	return s, r.warnings, r.err("receiver")
}

func loadReceiver(r *reader, def ReceiverDefaults) Receiver {
	s := Receiver{Common: r.common()}
	s.DedupWindow, _ = r.duration("HOOKWALL_DEDUP_WINDOW", "", 0, def.DedupWindow)
	s.Budget, _ = r.duration("HOOKWALL_RECEIVE_BUDGET", "", 0, def.Budget)
	s.ReenqueueGrace, _ = r.duration("HOOKWALL_REENQUEUE_GRACE", "", 0, 0)
	s.MaxEventAge, _ = r.duration("HOOKWALL_MAX_EVENT_AGE", "", 0, 0)
	s.Tolerance, _ = r.duration("HOOKWALL_TIMESTAMP_TOLERANCE", "", 0, def.Tolerance)
	s.MaxBody = r.integer("HOOKWALL_MAX_BODY_BYTES", "", def.MaxBody, 1, math.MaxInt64)
	if s.DedupWindow <= 0 {
		r.fail("HOOKWALL_DEDUP_WINDOW=%s: must be positive", formatDuration(s.DedupWindow))
	}
	if s.Budget <= 0 {
		r.fail("HOOKWALL_RECEIVE_BUDGET=%s: must be positive", formatDuration(s.Budget))
	}
	if s.ReenqueueGrace == 0 {
		s.ReenqueueGrace = s.Budget + def.GraceMargin
	}
	if s.ReenqueueGrace <= s.Budget {
		r.fail("HOOKWALL_REENQUEUE_GRACE (%s) must exceed HOOKWALL_RECEIVE_BUDGET (%s)",
			formatDuration(s.ReenqueueGrace), formatDuration(s.Budget))
	}
	s.HandedOffBytes = r.integer("HOOKWALL_HANDOFF_CACHE_BYTES", "", def.HandedOffBytes, 0, 1<<30)
	s.HandedOffTTL, _ = r.duration("HOOKWALL_HANDOFF_CACHE_TTL", "", 0, 0)
	if s.HandedOffTTL == 0 {
		s.HandedOffTTL = max(s.ReenqueueGrace-max(def.HandedOffMargin, time.Millisecond), s.ReenqueueGrace/2)
	}
	if s.HandedOffTTL <= 0 || s.HandedOffTTL >= s.ReenqueueGrace {
		r.fail("HOOKWALL_HANDOFF_CACHE_TTL (%s) must be positive and shorter than HOOKWALL_REENQUEUE_GRACE (%s)",
			formatDuration(s.HandedOffTTL), formatDuration(s.ReenqueueGrace))
	}
	if s.MaxEventAge == 0 {
		s.MaxEventAge = s.DedupWindow - min(def.EventAgeMargin, s.DedupWindow/2)
	}
	if s.MaxEventAge <= 0 || s.MaxEventAge >= s.DedupWindow {
		r.fail("HOOKWALL_MAX_EVENT_AGE (%s) must be positive and shorter than HOOKWALL_DEDUP_WINDOW (%s)",
			formatDuration(s.MaxEventAge), formatDuration(s.DedupWindow))
	}
	return s
}

package sweep

import (
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/state/store"
)

// action is what the sweeper does with a record it read.
type action int

const (
	ignore     action = iota // terminal or unknown status
	wait                     // not stuck yet: re-sweep at stuckAt
	requeue                  // stuck: send to the main queue
	deadLetter               // stuck: send to the dead-letter queue
)

// verdict is the sweeper's decision on one record.
type verdict struct {
	action action
	// since is what the record has been waiting on since: its last
	// enqueue, transition or lease end.
	since time.Time
	// stuckAt is when the record counts (or counted) as stuck.
	stuckAt time.Time
}

// verdict decides what to do with rec at now (see the package doc for the
// rules). A record is stuck when stuckAt is not after now.
func (s *Sweeper) verdict(rec *store.Record, now time.Time) verdict {
	ms := func(n int64) time.Time { return time.UnixMilli(n) }
	enqueued := ms(rec.EnqueuedAt)
	if rec.EnqueuedAt == 0 {
		enqueued = ms(rec.UpdatedAt)
	}
	updated := ms(rec.UpdatedAt)
	var v verdict
	switch rec.Status {
	case webhook.StatusReceived:
		// The receiver's grace: no message is coming once it has passed.
		v = verdict{action: requeue, since: enqueued, stuckAt: enqueued.Add(s.cfg.Grace)}
	case webhook.StatusRetry:
		v = verdict{action: requeue, since: updated, stuckAt: updated.Add(s.cfg.RetryCap + s.cfg.StuckAfter)}
	case webhook.StatusProcessing:
		v = s.leased(rec, requeue)
	case webhook.StatusFailed:
		v = verdict{action: deadLetter, since: updated, stuckAt: updated.Add(s.cfg.StuckAfter)}
	case webhook.StatusCompensating:
		v = s.leased(rec, deadLetter)
	default: // terminal, or a status this version does not know
		return verdict{action: ignore}
	}
	return s.decide(v, now)
}

// leased is the verdict on a PROCESSING or COMPENSATING record: stuck once
// its lease ran out StuckAfter ago; without a lease (a compensation waiting
// for its retry), once its retry is StuckAfter overdue.
func (s *Sweeper) leased(rec *store.Record, a action) verdict {
	if rec.LeaseUntil == 0 {
		updated := time.UnixMilli(rec.UpdatedAt)
		return verdict{action: a, since: updated, stuckAt: updated.Add(s.cfg.RetryCap + s.cfg.StuckAfter)}
	}
	until := time.UnixMilli(rec.LeaseUntil)
	return verdict{action: a, since: until, stuckAt: until.Add(s.cfg.StuckAfter)}
}

// decide turns v into wait when it is not stuck at now.
func (s *Sweeper) decide(v verdict, now time.Time) verdict {
	if v.stuckAt.After(now) {
		v.action = wait
	}
	return v
}

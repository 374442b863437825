package sweep

import (
	"context"
	"log/slog"
	"slices"

	"github.com/hookwall/hookwall/shared/engine/drain"
	"github.com/hookwall/hookwall/shared/state/store"
	"github.com/hookwall/hookwall/shared/state/targets"
)

// held handles a due HELD record: it is never stuck. Its scope no longer
// blocked, the scope is drained (once per run, at the rate); still blocked
// (or the scope unreadable, or no gate), its next look is pushed by
// HeldRecheck and its TTL raised to now + Retention, so that nothing held
// expires. It reports whether the entry is handled (see [run.record]):
// rechecked, or its scope drained to the end (a drain that stopped early
// or failed may not have reached it).
func (r *run) held(ctx context.Context, log *slog.Logger, rec *store.Record) bool {
	cfg := &r.s.cfg
	sc, err := targets.ParseScope(rec.HeldOn)
	if err == nil && cfg.Gate != nil {
		blocked, ok := r.blocked[sc]
		if !ok {
			if blocked, err = cfg.Gate.Blocked(ctx, sc); err != nil {
				r.failed(ctx, log, rec.Key, "blocked "+sc.String(), err)
				return false
			}
			r.blocked[sc] = blocked
		}
		if !blocked {
			r.rep.Drained++
			r.drain(ctx, log, sc, drain.Options{})
			return r.drainedAll[sc]
		}
	} else if err != nil {
		log.ErrorContext(ctx, "held record with an unreadable scope: kept held", slog.String("held_on", rec.HeldOn), slog.Any("error", err))
	}
	ok, err := cfg.Store.Recheck(ctx, rec, r.now.Add(cfg.HeldRecheck), r.now.Add(cfg.Retention))
	if !r.pushed(ctx, log, rec.Key, "recheck", ok, err, &r.rep.Rechecked) {
		return false
	}
	log.DebugContext(ctx, "held record still blocked: looked at again later", slog.String("held_on", rec.HeldOn),
		slog.Time("recheck_at", r.now.Add(cfg.HeldRecheck)))
	return true
}

// drain releases sc's held records (once per run and scope), and notes in
// drainedAll whether it went to the end (no limit, no error, not blocked).
func (r *run) drain(ctx context.Context, log *slog.Logger, sc targets.Scope, opts drain.Options) drain.Progress {
	if r.drained[sc] && !opts.Force {
		return drain.Progress{}
	}
	r.drained[sc] = true
	p, err := r.s.cfg.Drain.Release(ctx, sc, opts)
	r.drainedAll[sc] = err == nil && opts.Limit == 0 && !p.More && !p.Blocked && p.Errors == 0
	r.rep.Released += p.Released + p.Waiting
	if err != nil {
		r.failed(ctx, log, sc.String(), "drain", err)
	}
	return p
}

// targets looks at every target's breaker once per run, writing its
// circuit metric (MetricsOut): a closed breaker's
// held records drain (the target is back: nothing else would release them
// before their recheck), and an open breaker whose probe is due gets one
// held record released, its probe carrier (the processor admits it as the
// probe, or holds it again when another run took the probe). A paused
// target is left alone: its resume drains it.
func (r *run) targets(ctx context.Context) {
	cfg := &r.s.cfg
	if cfg.Gate == nil {
		return
	}
	log := cfg.Logger
	breakers, err := cfg.Gate.Breakers(ctx)
	if err != nil {
		r.queryError(ctx, "breakers", err, "sweep could not list the breakers")
		return
	}
	if cfg.MetricsOut != nil {
		if err := targets.WriteCircuitOpen(cfg.MetricsOut, cfg.Namespace, breakers...); err != nil {
			log.WarnContext(ctx, "sweep could not write the circuit metric", slog.Any("error", err))
		}
	}
	pauses, err := cfg.Gate.Pauses(ctx)
	if err != nil {
		r.queryError(ctx, "pauses", err, "sweep could not list the pauses")
		return
	}
	paused := map[targets.Scope]bool{}
	for _, p := range pauses {
		paused[p.Scope] = true
	}
	for _, b := range breakers {
		if r.halt(ctx) || r.full() {
			r.rep.More = true
			return
		}
		sc := targets.Scope{Kind: targets.KindTarget, Name: b.Target}
		switch {
		case slices.ContainsFunc(targets.Within(sc), func(w targets.Scope) bool { return paused[w] }):
			// Paused itself, or a tenant's share of a paused target.
			r.blocked[sc] = true
		case b.Open():
			r.blocked[sc] = true
			if b.ProbeAt.After(r.now) {
				continue
			}
			p := r.drain(ctx, log, sc, drain.Options{Force: true, Limit: 1})
			r.rep.Carriers += p.Released
			if p.Released > 0 {
				log.InfoContext(ctx, "probe carrier released for an open circuit", slog.String("target", b.Target))
			}
		default:
			if p := r.drain(ctx, log, sc, drain.Options{}); p.Released > 0 {
				log.InfoContext(ctx, "held events of a closed circuit released", slog.String("target", b.Target),
					slog.Int("released", p.Released), slog.Bool("more", p.More))
			}
		}
	}
}

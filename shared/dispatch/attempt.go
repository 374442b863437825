package dispatch

import (
	"context"
	"log/slog"
	"runtime/debug"
	"sync"

	"github.com/hookwall/hookwall/shared/internal/registry"
	"github.com/hookwall/hookwall/shared/lease"
	"github.com/hookwall/hookwall/shared/obs"
	"github.com/hookwall/hookwall/shared/webhook"
)

// attempt is one attempt at one event: the lease, the heartbeat, the journal.
type attempt struct {
	d      *Dispatcher
	lease  webhook.Lease
	env    webhook.Envelope
	log    *slog.Logger
	keep   lease.Keeper    // the heartbeat; lost lease
	failed *registry.Entry // the handler whose error ended the attempt

	mu      sync.Mutex
	loaded  bool
	journal map[string]webhook.JournalEntry // by handler + "#" + step
}

func (a *attempt) failedName() string {
	if a.failed == nil {
		return ""
	}
	return a.failed.Name
}

// run runs the handlers under the heartbeat and returns the first error.
func (a *attempt) run(ctx context.Context, regs []*registry.Entry) error {
	hctx, stop := a.keep.Start(ctx, a.d.cfg.LeaseDuration, a.d.cfg.FinishReserve, registry.ErrLeaseLost, a.log,
		func(ctx context.Context) (bool, error) {
			return a.d.cfg.Store.Heartbeat(ctx, a.lease, a.d.leaseUntil(ctx))
		})
	defer stop()

	if a.lease.Attempt > 1 && len(regs) > 1 {
		// Completed handlers are to be skipped: read the journal now.
		if err := a.load(hctx); err != nil {
			return err
		}
	}
	for i, reg := range regs {
		if a.keep.Lost() {
			return registry.ErrLeaseLost
		}
		if a.journaled(reg.Name, webhook.DoneStep) {
			a.d.cfg.Metrics.Count(MetricStepSkipped, 1)
			a.log.DebugContext(ctx, "handler already completed; skipped", slog.String("handler", reg.Name))
			continue
		}
		if err := a.runHandler(hctx, reg); err != nil {
			a.failed = reg
			return err
		}
		if i < len(regs)-1 {
			// Mark the handler done so a retry caused by a later handler skips it.
			if _, err := a.save(hctx, webhook.JournalEntry{Handler: reg.Name, Step: webhook.DoneStep}); err != nil {
				a.failed = reg
				return err
			}
		}
	}
	return nil
}

func (a *attempt) runHandler(ctx context.Context, reg *registry.Entry) (err error) {
	timeout := reg.Timeout
	if timeout == 0 {
		timeout = a.d.cfg.Timeout
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	log := a.log.With(slog.String("handler", reg.Name))
	ctx = obs.WithAttrs(ctx, slog.String(obs.KeyEventKey, a.env.Key), slog.String("handler", reg.Name))
	defer func() {
		if v := recover(); v != nil {
			pe := &registry.PanicError{Value: v, Stack: debug.Stack()}
			log.ErrorContext(ctx, "handler panicked", slog.Any("panic", v), slog.String("stack", string(pe.Stack)))
			err = pe
		}
	}()
	run := &handlerRun{att: a, handler: reg.Name, used: map[string]bool{}}
	err = reg.Run(ctx, registry.Call{Envelope: a.env, Attempt: a.lease.Attempt, Log: log, Steps: run, Transport: a.d.transport})
	if err == nil && ctx.Err() != nil && a.keep.Lost() {
		err = registry.ErrLeaseLost
	}
	return err
}

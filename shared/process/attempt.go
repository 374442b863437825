package process

import (
	"context"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hookwall/hookwall/shared/obs"
	"github.com/hookwall/hookwall/shared/webhook"
)

// attempt is one attempt at one event: the lease, the heartbeat, the journal.
type attempt struct {
	d      *Dispatcher
	lease  webhook.Lease
	env    webhook.Envelope
	log    *slog.Logger
	lost   atomic.Bool
	cancel context.CancelCauseFunc
	failed *Registration // the handler whose error ended the attempt

	mu      sync.Mutex
	loaded  bool
	journal map[string]webhook.JournalEntry // by handler + "#" + step
}

func (a *attempt) failedName() string {
	if a.failed == nil {
		return ""
	}
	return a.failed.name
}

// markLost records that the lease is gone and cancels the handlers.
func (a *attempt) markLost() {
	if a.lost.CompareAndSwap(false, true) && a.cancel != nil {
		a.cancel(ErrLeaseLost)
	}
}

// run runs the handlers under the heartbeat and returns the first error.
func (a *attempt) run(ctx context.Context, regs []*Registration) error {
	hctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	a.cancel = cancel
	if dl, ok := ctx.Deadline(); ok {
		var c context.CancelFunc
		hctx, c = context.WithDeadline(hctx, dl.Add(-a.d.cfg.FinishReserve))
		defer c()
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		a.heartbeat(ctx, stop)
	}()
	defer func() { close(stop); wg.Wait() }()

	if a.lease.Attempt > 1 && len(regs) > 1 {
		// Completed handlers are to be skipped: read the journal now.
		if err := a.load(hctx); err != nil {
			return err
		}
	}
	for i, reg := range regs {
		if a.lost.Load() {
			return ErrLeaseLost
		}
		if a.journaled(reg.name, webhook.DoneStep) {
			a.d.cfg.Metrics.Count(MetricStepSkipped, 1)
			a.log.DebugContext(ctx, "handler already completed; skipped", slog.String("handler", reg.name))
			continue
		}
		if err := a.runHandler(hctx, reg); err != nil {
			a.failed = reg
			return err
		}
		if i < len(regs)-1 {
			// Mark the handler done so a retry caused by a later handler skips it.
			if _, err := a.save(hctx, webhook.JournalEntry{Handler: reg.name, Step: webhook.DoneStep}); err != nil {
				a.failed = reg
				return err
			}
		}
	}
	return nil
}

func (a *attempt) heartbeat(ctx context.Context, stop <-chan struct{}) {
	t := time.NewTicker(max(a.d.cfg.LeaseDuration/3, time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-ctx.Done():
			return
		case <-t.C:
		}
		held, err := a.d.cfg.Store.Heartbeat(ctx, a.lease, a.d.leaseUntil(ctx))
		switch {
		case err != nil:
			a.log.WarnContext(ctx, "heartbeat", slog.Any("error", err))
		case !held:
			a.markLost()
			return
		}
	}
}

func (a *attempt) runHandler(ctx context.Context, reg *Registration) (err error) {
	timeout := reg.timeout
	if timeout == 0 {
		timeout = a.d.cfg.Timeout
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	log := a.log.With(slog.String("handler", reg.name))
	ctx = obs.WithAttrs(ctx, slog.String(obs.KeyEventKey, a.env.Key), slog.String("handler", reg.name))
	defer func() {
		if v := recover(); v != nil {
			pe := &PanicError{Value: v, Stack: debug.Stack()}
			log.ErrorContext(ctx, "handler panicked", slog.Any("panic", v), slog.String("stack", string(pe.Stack)))
			err = pe
		}
	}()
	run := &handlerRun{att: a, handler: reg.name, used: map[string]bool{}}
	err = reg.run(ctx, eventInfo{env: a.env, attempt: a.lease.Attempt, log: log, run: run})
	if err == nil && ctx.Err() != nil && a.lost.Load() {
		err = ErrLeaseLost
	}
	return err
}

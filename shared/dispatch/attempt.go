package dispatch

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/hookwall/hookwall/shared/internal/kernel"
	"github.com/hookwall/hookwall/shared/internal/registry"
	"github.com/hookwall/hookwall/shared/obs"
	"github.com/hookwall/hookwall/shared/webhook"
)

// attempt is one attempt at one event: its handlers and their journal,
// under the kernel's lease and heartbeat.
type attempt struct {
	d       *Dispatcher
	a       *kernel.Attempt
	regs    []*registry.Entry // the handlers that run, in order
	loadErr error             // the payload could not be loaded
	failed  *registry.Entry   // the handler whose error ended the attempt

	mu      sync.Mutex
	loaded  bool
	journal map[string]webhook.JournalEntry // by handler + "#" + step
	pending []webhook.JournalEntry          // done, waiting for the attempt's next write
}

func (t *attempt) failedName() string {
	if t.failed == nil {
		return ""
	}
	return t.failed.Name
}

// Run runs the handlers (ctx is cancelled when the lease is lost) and
// returns the first error. An event no handler serves is counted, and with
// UnhandledToDLQ fails permanently.
func (t *attempt) Run(ctx context.Context, _ *Result) (err error) {
	defer func() {
		if err != nil {
			err = t.flushed(ctx, err)
		}
	}()
	a, cfg := t.a, &t.d.cfg
	switch {
	case t.loadErr != nil:
		return t.loadErr
	case len(t.regs) == 0:
		cfg.Metrics.Count(MetricUnhandled, 1)
		a.Log.WarnContext(ctx, "no handler for the event type")
		if cfg.UnhandledToDLQ {
			return registry.Permanent(fmt.Errorf("no handler for %s/%s", a.Env.Provider, a.Env.Type))
		}
		return nil
	}
	if a.Lease.Attempt > 1 && len(t.regs) > 1 {
		// Completed handlers are to be skipped: read the journal now.
		if err := t.load(ctx); err != nil {
			return err
		}
	}
	for i, reg := range t.regs {
		if a.Lost() {
			return registry.ErrLeaseLost
		}
		if t.journaled(reg.Name, webhook.DoneStep) {
			cfg.Metrics.Count(MetricStepSkipped, 1)
			a.Log.DebugContext(ctx, "handler already completed; skipped", slog.String("handler", reg.Name))
			continue
		}
		if err := t.runHandler(ctx, reg); err != nil {
			t.failed = reg
			return err
		}
		if i < len(t.regs)-1 {
			// Mark the handler done so a retry caused by a later handler skips it.
			if _, err := t.save(ctx, webhook.JournalEntry{Handler: reg.Name, Step: webhook.DoneStep}); err != nil {
				t.failed = reg
				return err
			}
		}
	}
	return nil
}

// runHandler runs one handler under its timeout, a panic turned into an
// error to retry.
func (t *attempt) runHandler(ctx context.Context, reg *registry.Entry) error {
	a := t.a
	log := a.Log.With(slog.String("handler", reg.Name))
	ctx = obs.WithAttrs(ctx, slog.String(obs.KeyEventKey, a.Env.Key), slog.String("handler", reg.Name))
	return a.Guard(ctx, reg.Timeout, log, func(ctx context.Context) error {
		run := &handlerRun{att: t, handler: reg.Name, used: map[string]bool{}}
		return reg.Run(ctx, registry.Call{Envelope: a.Env, Attempt: a.Lease.Attempt, Log: log, Steps: run, Transport: t.d.cfg.Transport})
	})
}

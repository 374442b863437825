package dispatch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/internal/kernel"
	"github.com/hookwall/hookwall/shared/internal/registry"
	"github.com/hookwall/hookwall/shared/state/targets"
)

// attempt is one attempt at one event: its handlers and their journal,
// under the kernel's lease and heartbeat.
type attempt struct {
	d       *Dispatcher
	a       *kernel.Attempt
	regs    []*registry.Entry // the handlers that run, in order
	loadErr error             // the payload could not be loaded
	failed  *registry.Entry   // the handler whose error ended the attempt
	calls   callLog           // the handlers' outside calls
	hold    *held             // the admission that held the event, if one did
	target  string            // the target of the handler run (or held) last

	j *kernel.Journal // the event's step journal, as this attempt sees it

	mu sync.Mutex // guards target
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
			err = t.j.Flushed(ctx, err)
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
	if len(t.regs) > 1 {
		// Completed handlers are to be skipped: read the journal now (load
		// skips the read on a fresh claim's first attempt; an event held
		// and released starts again at attempt 1, at a later version).
		if err := t.j.Load(ctx); err != nil {
			return err
		}
	}
	for i, reg := range t.regs {
		if a.Lost() {
			return registry.ErrLeaseLost
		}
		if t.j.HandlerDone(reg.Name) {
			cfg.Metrics.Count(MetricStepSkipped, 1)
			a.Log.DebugContext(ctx, "handler already completed; skipped", slog.String("handler", reg.Name))
			continue
		}
		// The breaker (and the holds it makes) is the tenant's own: the
		// target's key with the tenant when the target does not name it.
		target := reg.TargetOf(a.Env.Tenant)
		sub := targets.Subject{Handler: reg.Name, Tenant: a.Env.Tenant, Target: reg.BreakerOf(a.Env.Tenant)}
		t.mu.Lock()
		t.target = target
		t.mu.Unlock()
		adm, err := t.admit(ctx, sub)
		if err != nil {
			t.failed = reg
			return err
		}
		if adm.Verdict == targets.Hold {
			t.hold = &held{adm: adm, sub: sub, target: target}
			return errHeld
		}
		err = t.runHandler(ctx, reg)
		opened := t.report(ctx, adm, sub, err)
		if err != nil {
			t.failed = reg
			if opened && t.a.Lease.GivenBack == 0 && !registry.IsPermanent(err) && !errors.Is(err, registry.ErrLeaseLost) {
				// The call that opened the breaker is taken for the
				// outage's, not the event's: the event is held like those
				// the gate now holds, its attempt given back, so that a
				// lone event does not spend its attempts on an outage.
				// Once per event (the record's givenBack): an event whose
				// calls fail on their own (a poison event) spends its
				// attempts like any other, and so does a failed probe
				// (settled below as a failure: RETRY, or FAILED and
				// dead-lettered on its last attempt), so that an open
				// breaker never keeps an event alive past its attempts
				// and one more call.
				t.hold = &held{adm: targets.HoldOpen(sub.Target, time.Time{}), sub: sub, target: target, givesBack: true}
				a.Log.WarnContext(ctx, "call failed while the circuit opened; event held, its attempt given back once",
					slog.String("handler", reg.Name), slog.String("target", sub.Target), slog.Any("error", err))
				return errHeld
			}
			return err
		}
		if i < len(t.regs)-1 {
			// Mark the handler done so a retry caused by a later handler skips it.
			if err := t.j.Save(ctx, webhook.JournalEntry{Handler: reg.Name, Step: webhook.DoneStep}); err != nil {
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
	return a.Call(ctx, reg.Timeout, func(ctx context.Context, log *slog.Logger) error {
		run := &handlerRun{att: t, handler: reg.Name, used: map[string]bool{}}
		return reg.Run(ctx, registry.Call{Envelope: a.Env, Attempt: a.Lease.Attempt, Log: log, Steps: run,
			Transport: t.calls.transport(t.d.cfg.Transport, reg.TargetOf(a.Env.Tenant))})
	}, slog.String("handler", reg.Name))
}

// lease is the attempt's lease with the calls its handlers made and the
// target it was last bound for, for the settling write to store (which
// records it as the record's target, held or not, so that `recover
// --handler` selects by it).
func (t *attempt) lease() webhook.Lease {
	l := t.calls.onto(t.a.Lease)
	t.mu.Lock()
	l.Target = t.target
	t.mu.Unlock()
	return l
}

// held is the admission that held an attempt's event, its subject, the
// handler's target (sub.Target is the breaker key) and whether the attempt
// made the call that opened the breaker (its attempt is given back, once
// per event: webhook.Hold.GiveBack).
type held struct {
	adm       targets.Admission
	sub       targets.Subject
	target    string
	givesBack bool
}

// errHeld ends an attempt whose next handler run the gate held.
var errHeld = errors.New("held by the gate")

// admit asks the gate (if any) whether sub may run.
func (t *attempt) admit(ctx context.Context, sub targets.Subject) (targets.Admission, error) {
	g := t.d.cfg.Gate
	if g == nil {
		return targets.Admission{Verdict: targets.Allow}, nil
	}
	adm, err := g.Admit(ctx, sub)
	if err != nil {
		t.a.Log.ErrorContext(ctx, "gate admit", slog.String("handler", sub.Handler), slog.String("target", sub.Target), slog.Any("error", err))
		return targets.Admission{}, fmt.Errorf("admit %s to %s: %w", sub.Handler, sub.Target, err)
	}
	if adm.Verdict == targets.Probe {
		t.a.Log.InfoContext(ctx, "probing an open circuit", slog.String("handler", sub.Handler), slog.String("target", sub.Target))
	}
	return adm, nil
}

// report tells the gate (if any) the outcome of sub's run: failed when the
// handler's error is retryable (a timeout, a connection error, a 429 or 5xx
// it returned, a panic, a lost lease), not when it succeeded or failed
// permanently. A breaker transition is logged and published as an
// operational event. A failed report is logged and counted; the attempt
// goes on.
//
// It returns whether this failed run opened the target's breaker (a failed
// probe keeps it open: that is not an opening, and spends the attempt).
func (t *attempt) report(ctx context.Context, adm targets.Admission, sub targets.Subject, herr error) (opened bool) {
	cfg := &t.d.cfg
	if cfg.Gate == nil {
		return false
	}
	failed := herr != nil && !registry.IsPermanent(herr)
	tr, err := cfg.Gate.Report(ctx, adm, sub, failed)
	if err != nil {
		cfg.Metrics.Count(MetricGateFailed, 1)
		t.a.Log.WarnContext(ctx, "gate report", slog.String("target", sub.Target), slog.Bool("failed", failed), slog.Any("error", err))
		return false
	}
	opened = failed && tr.Opened
	var op Op
	switch {
	case tr.Opened:
		op = Op{Kind: OpCircuitOpened, Target: tr.Target, At: tr.At, Reason: lastErrorOf(herr)}
		t.a.Log.WarnContext(ctx, "circuit opened: the target's events are held", slog.String("target", tr.Target))
	case tr.Closed:
		op = Op{Kind: OpCircuitClosed, Target: tr.Target, At: tr.At}
		t.a.Log.InfoContext(ctx, "circuit closed: the target's held events drain", slog.String("target", tr.Target))
	default:
		return opened
	}
	t.d.circuitGauge(ctx, t.a.Log, tr.Target, tr.Opened)
	t.d.publishOps(ctx, t.a.Log, op)
	return opened
}

// lastErrorOf is lastError of err, "" for nil.
func lastErrorOf(err error) string {
	if err == nil {
		return ""
	}
	return lastError(err)
}

// publishOps publishes ops, if an Ops publisher is configured; a failure is
// logged and counted.
func (d *Dispatcher) publishOps(ctx context.Context, log *slog.Logger, ops ...Op) {
	if d.cfg.Ops == nil {
		return
	}
	if err := d.cfg.Ops.PublishOps(ctx, ops); err != nil {
		d.cfg.Metrics.Count(MetricOpsFailed, 1)
		log.ErrorContext(ctx, "publish operational events", slog.Int("events", len(ops)), slog.Any("error", err))
	}
}

package kernel

import (
	"context"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/hookwall/hookwall/shared/base/obs"
	"github.com/hookwall/hookwall/shared/base/webhook"
)

// Attempt is one attempt at one event, as the kernel passes it to a phase.
type Attempt struct {
	// Message is the queue message.
	Message Message
	// Env is its envelope; the phase's Begin may complete it (the payload).
	Env webhook.Envelope
	// Acq is the acquisition, and Lease its lease (when taken).
	Acq   webhook.Acquisition
	Lease webhook.Lease
	// Log is tagged with the event; Begin may tag it further.
	Log *slog.Logger
	// Now is when the attempt settles (set before Task.Settle).
	Now time.Time

	e    *Engine
	keep Keeper
}

// Lost reports whether the attempt's lease is known to be lost.
func (a *Attempt) Lost() bool { return a.keep.Lost() }

// MarkLost records that the lease is gone (a fenced write found it so) and
// cancels the work's context.
func (a *Attempt) MarkLost() { a.keep.MarkLost() }

// Outcome returns the attempt's outcome event with status and lastError,
// at a.Now; Attempts is the lease's attempt.
func (a *Attempt) Outcome(status webhook.Status, lastError string) *webhook.Outcome {
	env := a.Env
	return &webhook.Outcome{Key: env.Key, Provider: env.Provider, Tenant: env.Tenant, Type: env.Type, Status: status,
		ReceivedAt: env.ReceivedAt, TraceID: env.TraceID, Attempts: a.Lease.Attempt, LastError: lastError, At: a.Now}
}

// Guard runs fn, a handler's or an undo's code, within the time limit
// timeout (0: Config.Timeout; neither: none). A panic becomes a
// *PanicError, logged to log with its stack; an fn that returns nil after
// its context ended because the lease was lost returns ErrLeaseLost.
func (a *Attempt) Guard(ctx context.Context, timeout time.Duration, log *slog.Logger, fn func(ctx context.Context) error) (err error) {
	if timeout == 0 {
		timeout = a.e.cfg.Timeout
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	defer func() {
		if v := recover(); v != nil {
			pe := &panicError{Value: v, Stack: debug.Stack()}
			log.ErrorContext(ctx, a.e.names.Panicked, slog.Any("panic", v), slog.String("stack", string(pe.Stack)))
			err = pe
		}
	}()
	err = fn(ctx)
	if err == nil && ctx.Err() != nil && a.Lost() {
		err = errLeaseLost
	}
	return err
}

// Call runs fn, one function of a team's (a handler, an undo), under
// [Attempt.Guard] within timeout: its log and its context's log attributes
// carry the event key and attrs (the handler, the step).
func (a *Attempt) Call(ctx context.Context, timeout time.Duration, fn func(ctx context.Context, log *slog.Logger) error, attrs ...slog.Attr) error {
	args := make([]any, len(attrs))
	for i, at := range attrs {
		args[i] = at
	}
	log := a.Log.With(args...)
	ctx = obs.WithAttrs(ctx, append([]slog.Attr{slog.String(obs.KeyEventKey, a.Env.Key)}, attrs...)...)
	return a.Guard(ctx, timeout, log, func(ctx context.Context) error { return fn(ctx, log) })
}

// run runs the task under the heartbeat.
func (a *Attempt) run(ctx context.Context, task Task, res *Result) error {
	e := a.e
	hctx, stop := a.keep.Start(ctx, e.cfg.LeaseDuration, e.cfg.FinishReserve, errLeaseLost, a.Log,
		func(ctx context.Context) (bool, error) { return e.leases.Heartbeat(ctx, a.Lease, e.leaseUntil(ctx)) })
	defer stop()
	return task.Run(hctx, res)
}

package kernel

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
)

// fakePhase is a Phase and its Leases on fakes: Acquire answers acq (or acqErr),
// Heartbeat answers beat, and each attempt's task runs work and settles
// with settle; it records what the kernel asked of it.
type fakePhase struct {
	mu     sync.Mutex
	acq    webhook.Acquisition
	acqErr error
	beat   func() (bool, error)
	check  func(webhook.Envelope) error
	refuse func(a *Attempt, res Result) (Result, bool)
	work   func(ctx context.Context, a *Attempt) error
	settle func(a *Attempt, err error) Settlement

	malformed []error
	begun     []*Attempt
	settled   []error
	beats     int
	gens      []int64 // the generations Acquire was asked for
}

func (p *fakePhase) Check(env webhook.Envelope) error {
	if p.check != nil {
		return p.check(env)
	}
	if env.Key == "" {
		return errors.New("missing key")
	}
	return nil
}

func (p *fakePhase) Malformed(_ context.Context, _ Message, err error, res Result) Result {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.malformed = append(p.malformed, err)
	res.Verdict, res.Err = Malformed, err
	return res
}

func (p *fakePhase) Acquire(_ context.Context, key string, gen int64, owner string, until time.Time) (webhook.Acquisition, error) {
	p.mu.Lock()
	p.gens = append(p.gens, gen)
	p.mu.Unlock()
	acq := p.acq
	if acq.Outcome == webhook.Acquired {
		acq.Lease.Key, acq.Lease.Owner, acq.Lease.Until = key, owner, until
	}
	return acq, p.acqErr
}

func (p *fakePhase) Heartbeat(context.Context, webhook.Lease, time.Time) (bool, error) {
	p.mu.Lock()
	p.beats++
	p.mu.Unlock()
	if p.beat != nil {
		return p.beat()
	}
	return true, nil
}

func (p *fakePhase) Refused(_ context.Context, a *Attempt, res Result) (Result, bool) {
	if p.refuse != nil {
		return p.refuse(a, res)
	}
	return res, false
}

func (p *fakePhase) Begin(_ context.Context, a *Attempt) Task {
	p.mu.Lock()
	p.begun = append(p.begun, a)
	p.mu.Unlock()
	return &fakeTask{p: p, a: a}
}

type fakeTask struct {
	p *fakePhase
	a *Attempt
}

func (t *fakeTask) Run(ctx context.Context, res *Result) error {
	res.Undone = []string{"h/s"}
	if t.p.work == nil {
		return nil
	}
	return t.p.work(ctx, t.a)
}

func (t *fakeTask) Settle(_ context.Context, err error) Settlement {
	t.p.mu.Lock()
	t.p.settled = append(t.p.settled, err)
	t.p.mu.Unlock()
	if t.p.settle != nil {
		return t.p.settle(t.a, err)
	}
	return Settlement{Op: "complete", Write: func(context.Context) (bool, error) { return true, nil },
		Verdict: Succeeded, Ack: true, Event: t.a.Outcome(webhook.StatusSucceeded, "")}
}

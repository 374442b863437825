package backend

import (
	"context"
	"fmt"

	"github.com/hookwall/hookwall/shared/bus"
	"github.com/hookwall/hookwall/shared/dispatch"
	"github.com/hookwall/hookwall/shared/targets"
)

// Gate adapts g to the dispatcher's port (nil for a nil g): the
// dispatcher imports no AWS SDK, so it declares its own view of the gate.
func Gate(g targets.Gate) dispatch.Gate {
	if g == nil {
		return nil
	}
	return gatePort{g}
}

type gatePort struct{ g targets.Gate }

func (p gatePort) Admit(ctx context.Context, s dispatch.Subject) (dispatch.Admission, error) {
	a, err := p.g.Admit(ctx, targets.Subject(s))
	if err != nil {
		return dispatch.Admission{}, err
	}
	v := dispatch.Allow
	switch a.Verdict {
	case targets.Probe:
		v = dispatch.Probe
	case targets.Hold:
		v = dispatch.Hold
	}
	out := dispatch.Admission{Verdict: v, Reason: a.Reason, RecheckAt: a.RecheckAt, Ticket: a}
	if !a.On.IsZero() {
		out.On = a.On.String()
	}
	return out, nil
}

func (p gatePort) Report(ctx context.Context, a dispatch.Admission, s dispatch.Subject, failed bool) (dispatch.Transition, error) {
	adm, ok := a.Ticket.(targets.Admission)
	if !ok {
		return dispatch.Transition{}, fmt.Errorf("backend: report to the gate: an admission it did not give (%T)", a.Ticket)
	}
	tr, err := p.g.Report(ctx, adm, targets.Subject(s), failed)
	return dispatch.Transition(tr), err
}

// Ops adapts p to the dispatcher's port for operational events (nil for a
// nil p: publishing off).
func Ops(p *bus.Publisher) dispatch.Ops {
	if p == nil {
		return nil
	}
	return opsPort{p}
}

type opsPort struct{ p *bus.Publisher }

// opTypes are the detail-types of the dispatcher's op kinds.
var opTypes = map[dispatch.OpKind]string{
	dispatch.OpCircuitOpened:    bus.DetailTypeCircuitOpened,
	dispatch.OpCircuitClosed:    bus.DetailTypeCircuitClosed,
	dispatch.OpAttemptExhausted: bus.DetailTypeAttemptExhausted,
}

func (p opsPort) PublishOps(ctx context.Context, ops []dispatch.Op) error {
	out := make([]bus.Op, 0, len(ops))
	for _, o := range ops {
		typ, ok := opTypes[o.Kind]
		if !ok {
			return fmt.Errorf("backend: publish ops: unknown kind %d", o.Kind)
		}
		out = append(out, bus.Op{Type: typ, Target: o.Target, Key: o.Key, Provider: o.Provider, Tenant: o.Tenant,
			Reason: o.Reason, Count: o.Count, At: o.At})
	}
	return p.p.PublishOps(ctx, out)
}

package backend

import (
	"context"
	"fmt"

	"github.com/hookwall/hookwall/shared/aws/bus"
	"github.com/hookwall/hookwall/shared/engine/dispatch"
)

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

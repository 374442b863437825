package targets

import (
	"fmt"
	"io"

	"github.com/hookwall/hookwall/shared/base/obs"
)

// MetricCircuitOpen is the EMF metric of a breaker's state, with the
// dimension Target: 1 open, 0 closed. An alarm on its maximum ≥ 1 per
// target says a target is down.
const MetricCircuitOpen = "CircuitOpen"

// WriteCircuitOpen writes one EMF document per breaker to w (the
// function's metrics output), in namespace: MetricCircuitOpen 1 or 0 with
// the dimension Target. The engine writes it on each transition, the
// sweeper for every breaker on each run (from [Gate.Breakers]).
func WriteCircuitOpen(w io.Writer, namespace string, bs ...Breaker) error {
	for _, b := range bs {
		m := obs.NewMetrics(w, namespace, map[string]string{"Target": b.Target})
		open := 0
		if b.Open() {
			open = 1
		}
		m.Count(MetricCircuitOpen, open)
		if err := m.Flush(); err != nil {
			return fmt.Errorf("targets: circuit metric of %s: %w", b.Target, err)
		}
	}
	return nil
}

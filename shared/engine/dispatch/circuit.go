package dispatch

import (
	"context"
	"log/slog"
)

// MetricCircuitOpen is the EMF gauge of a target's circuit breaker,
// written at once when the processor opens it (1) or a probe closes it (0),
// with the dimension Target besides the processor's own (Function): what
// template.yaml's CircuitOpenAlarm and dashboard read.
const MetricCircuitOpen = "CircuitOpen"

// circuitGauge writes MetricCircuitOpen for target; a failed write is
// logged (the transition's operational event says the same).
func (d *Dispatcher) circuitGauge(ctx context.Context, log *slog.Logger, target string, open bool) {
	v := 0.0
	if open {
		v = 1
	}
	if err := d.cfg.Metrics.Gauge(MetricCircuitOpen, v, map[string]string{"Target": target}); err != nil {
		log.WarnContext(ctx, "write the circuit gauge", slog.String("target", target), slog.Any("error", err))
	}
}

package dispatch_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/base/obs"
	"github.com/hookwall/hookwall/shared/base/webhook/webhooktest"
	"github.com/hookwall/hookwall/shared/engine/dispatch"
	"github.com/hookwall/hookwall/shared/engine/process"
	"github.com/hookwall/hookwall/shared/state/store/memstore"
	"github.com/hookwall/hookwall/shared/state/targets"
	"github.com/hookwall/hookwall/shared/state/targets/memgate"
)

// The processor writes the CircuitOpen gauge of a target when it opens its
// breaker (1) and when a probe closes it (0), with the dimension Target.
func TestCircuitGaugeFollowsTheBreaker(t *testing.T) {
	clk := webhooktest.NewClock(time.Now())
	gate, err := memgate.New(targets.Config{MinCalls: 2, ProbeInterval: 30 * time.Second, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	var emf strings.Builder
	failing := true
	reg := process.NewRegistry()
	process.Handle(reg, "b", heldFollowType, func(context.Context, *process.Event[heldFollow]) error {
		if failing {
			return errors.New("503")
		}
		return nil
	}, process.Target("b.example/{tenant}"))
	r := gatedRig{st: memstore.New(memstore.Config{Now: clk.Now}), gate: gate}
	if r.d, err = dispatch.New(dispatch.Config{Registry: reg, Store: r.st, DLQ: holdQueue{}, Gate: gate,
		Kernel: dispatch.Kernel{Queue: holdQueue{}, MaxAttempts: 1, Now: clk.Now,
			Metrics: obs.NewMetrics(&emf, "Hookwall", map[string]string{"Function": "processor"})}}); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"line#t1#c1", "line#t1#c2"} {
		r.claim(t, k)
		r.handle(t, k)
	}
	if got := emf.String(); strings.Count(got, `"CircuitOpen":1`) != 1 || !strings.Contains(got, `"Target":"b.example/t1"`) ||
		!strings.Contains(got, `["Function","Target"]`) || strings.Contains(got, `"CircuitOpen":0`) {
		t.Fatalf("after the breaker opened: want one CircuitOpen 1 for Target b.example/t1, got %s", got)
	}
	emf.Reset()
	failing = false
	clk.Advance(time.Minute) // the probe is due
	r.claim(t, "line#t1#c3")
	if res := r.handle(t, "line#t1#c3"); res.Verdict != dispatch.Succeeded {
		t.Fatalf("the probe: got %v (%v), want succeeded", res.Verdict, res.Err)
	}
	if got := emf.String(); strings.Count(got, `"CircuitOpen":0`) != 1 || !strings.Contains(got, `"Target":"b.example/t1"`) {
		t.Errorf("after the probe closed it: want one CircuitOpen 0 for Target b.example/t1, got %s", got)
	}
}

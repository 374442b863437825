package sweep_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/engine/drain"
	"github.com/hookwall/hookwall/shared/engine/sweep"
	"github.com/hookwall/hookwall/shared/state/targets"
	"github.com/hookwall/hookwall/shared/state/targets/memgate"
)

// fakeJobs records each Continue: when it was called (on the test's
// clock), the until it was given and what it then saw of the sweep.
type fakeJobs struct {
	e      *env
	calls  []time.Time
	untils []time.Time
	sent   []int // records sent by the sweep before each call
	err    error
}

func (f *fakeJobs) Continue(_ context.Context, until time.Time) (int, int, error) {
	f.calls = append(f.calls, f.e.clock.Now())
	f.untils = append(f.untils, until)
	f.sent = append(f.sent, len(f.e.q.sent))
	return 1, 7, f.err
}

// Each run continues the detached recovery jobs after its own work, for
// at most JobBudget, and never past its deadline less Reserve; a run too
// close to its deadline leaves them to the next. A failure is counted and
// returned, the sweep's own work done.
func TestRunContinuesTheJobsAfterItsOwnWork(t *testing.T) {
	jobs := &fakeJobs{}
	e := newEnv(t, func(c *sweep.Config) { c.Jobs, c.JobBudget = jobs, 15*time.Second })
	jobs.e = e
	e.claim("line#t1#stuck")
	e.clock.Advance(time.Hour)
	want(t, e.run(), sweep.Report{Scanned: 1, Requeued: 1, Jobs: 1, JobRecords: 7})
	if len(jobs.calls) != 1 || jobs.sent[0] != 1 {
		t.Fatalf("Continue called %d times, after %v records sent; want once, after the sweep's own send", len(jobs.calls), jobs.sent)
	}
	if got, want := jobs.untils[0], e.clock.Now().Add(15*time.Second); !got.Equal(want) {
		t.Errorf("until %s, want now + JobBudget (%s)", got, want)
	}

	// A deadline nearer than the budget bounds it, less Reserve.
	ctx, cancel := context.WithTimeout(e.ctx, time.Hour)
	defer cancel()
	if _, err := e.sw.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if got := jobs.untils[1].Sub(e.clock.Now()); got != 15*time.Second {
		t.Errorf("with a far deadline: budget %s, want JobBudget", got)
	}
	dl, _ := ctx.Deadline()
	short, cancel2 := context.WithDeadline(e.ctx, dl.Add(-time.Hour+10*time.Second))
	defer cancel2()
	if _, err := e.sw.Run(short); err != nil {
		t.Fatal(err)
	}
	if got := jobs.untils[2].Sub(e.clock.Now()); got <= 0 || got > 10*time.Second-sweep.DefaultReserve {
		t.Errorf("with a deadline in 10s: budget %s, want at most 10s less Reserve", got)
	}
	tooShort, cancel3 := context.WithTimeout(e.ctx, sweep.DefaultReserve/2)
	defer cancel3()
	_, _ = e.sw.Run(tooShort)
	if len(jobs.calls) != 3 {
		t.Errorf("Continue called %d times, want none within Reserve of the deadline", len(jobs.calls))
	}

	jobs.err = errors.New("throttled")
	rep, err := e.sw.Run(e.ctx)
	if err == nil || !strings.Contains(err.Error(), "throttled") || rep.JobErrors != 1 {
		t.Errorf("a failed Continue: %+v %v, want it counted and returned", rep, err)
	}
}

// Each run with a gate writes the circuit metric of every breaker: 1 open,
// 0 closed, with the dimension Target.
func TestRunWritesTheCircuitMetric(t *testing.T) {
	var out bytes.Buffer
	var gate *memgate.Gate
	e := newEnv(t, func(c *sweep.Config) {
		var err error
		if gate, err = memgate.New(targets.Config{Now: c.Now}); err != nil {
			t.Fatal(err)
		}
		d, err := drain.New(drain.Config{Store: c.Store.(drain.Store), Gate: gate, Queue: c.Queue, Now: c.Now})
		if err != nil {
			t.Fatal(err)
		}
		c.Gate, c.Drain, c.MetricsOut, c.Namespace = gate, d, &out, "Hookwall"
	})
	h := &heldEnv{env: e, gate: gate}
	h.openBreaker("forward/down")
	ok := targets.Subject{Handler: "crm", Tenant: "t1", Target: "crm"}
	a, err := gate.Admit(e.ctx, ok)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gate.Report(e.ctx, a, ok, false); err != nil {
		t.Fatal(err)
	}
	for run := range 2 {
		out.Reset()
		e.run()
		got := map[string]float64{}
		for line := range strings.Lines(out.String()) {
			var doc map[string]any
			if err := json.Unmarshal([]byte(line), &doc); err != nil {
				t.Fatalf("run %d: %q: %v", run, line, err)
			}
			target, _ := doc["Target"].(string)
			v, _ := doc[targets.MetricCircuitOpen].(float64)
			if !strings.Contains(line, `"Dimensions":[["Target"]]`) || !strings.Contains(line, `"Namespace":"Hookwall"`) {
				t.Errorf("run %d: %s: want namespace Hookwall, dimension Target", run, line)
			}
			got[target] = v
		}
		if len(got) != 2 || got["forward/down"] != 1 || got["crm"] != 0 {
			t.Errorf("run %d: CircuitOpen %v, want forward/down 1 and crm 0", run, got)
		}
	}
	if _, err := sweep.New(sweep.Config{Store: e.st, Queue: e.q, DLQ: e.dlq, MetricsOut: &out}); err == nil {
		t.Error("MetricsOut without a Namespace: got no error")
	}
}

package main

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/aws/bus"
	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/base/webhook/webhooktest"
	"github.com/hookwall/hookwall/shared/config/settings"
	"github.com/hookwall/hookwall/shared/ops/control"
	"github.com/hookwall/hookwall/shared/ops/recovery"
	"github.com/hookwall/hookwall/shared/state/targets"
	"github.com/hookwall/hookwall/shared/state/targets/memgate"
)

// fakeHeld counts held records by scope ("kind#name").
type fakeHeld map[string]int

func (h fakeHeld) HeldCount(_ context.Context, on string) (int, error) { return h[on], nil }

// fakeJobs is the recovery jobs: Run reports steps progress reports, one
// event each, the clock advancing by tick between them, then ends the job
// in end (with err).
type fakeJobs struct {
	jobs    map[string]*recovery.Job
	created []recovery.Filter
	rates   []float64
	steps   int
	tick    func()
	end     recovery.State
	err     error
	runs    int
	why     string // the Why of a job Run ends with
	// onGet, when set, changes the job before each Get returns it (a
	// sweep run moving it on).
	onGet func(*recovery.Job)
}

func newFakeJobs() *fakeJobs {
	return &fakeJobs{jobs: map[string]*recovery.Job{}, end: recovery.StateDone}
}

func (f *fakeJobs) Create(_ context.Context, fl recovery.Filter, rate float64, by string) (*recovery.Job, error) {
	f.created, f.rates = append(f.created, fl), append(f.rates, rate)
	j := &recovery.Job{ID: "20261201-120000-abcdef", Filter: fl, Rate: rate, State: recovery.StateInterrupted, By: by}
	f.jobs[j.ID] = j
	return j, nil
}

func (f *fakeJobs) Run(_ context.Context, id string, progress func(recovery.Job)) (*recovery.Job, error) {
	j, ok := f.jobs[id]
	if !ok {
		return nil, recovery.ErrNotFound
	}
	f.runs++
	j.State = recovery.StateRunning
	j.Counts.Counted, j.Counts.Total, j.Counts.Replayed = true, f.steps, 0
	for range f.steps {
		j.Counts.Replayed++
		if f.tick != nil {
			f.tick()
		}
		progress(*j)
	}
	j.State, j.Why = f.end, f.why
	return j, f.err
}

func (f *fakeJobs) Cancel(_ context.Context, id string) (*recovery.Job, bool, error) {
	j, ok := f.jobs[id]
	if !ok {
		return nil, false, recovery.ErrNotFound
	}
	if j.State == recovery.StateDone || j.State == recovery.StateCancelled {
		return j, false, nil
	}
	j.State = recovery.StateCancelled
	return j, true, nil
}

func (f *fakeJobs) Get(_ context.Context, id string) (*recovery.Job, error) {
	if j, ok := f.jobs[id]; ok {
		if f.onGet != nil {
			f.onGet(j)
		}
		c := *j
		return &c, nil
	}
	return nil, recovery.ErrNotFound
}

func (f *fakeJobs) Detach(_ context.Context, id string) (*recovery.Job, error) {
	j, ok := f.jobs[id]
	switch {
	case !ok:
		return nil, recovery.ErrNotFound
	case j.State == recovery.StateDone:
		return j, recovery.ErrDone
	}
	j.Detached, j.State = true, recovery.StateRunning
	return j, nil
}

func (f *fakeJobs) List(context.Context, int) ([]*recovery.Job, error) {
	var out []*recovery.Job
	for _, j := range f.jobs {
		out = append(out, j)
	}
	return out, nil
}

func gateFixture(t *testing.T) *fixture {
	t.Helper()
	fx := newFixture()
	g, err := memgate.New(targets.Config{Now: func() time.Time { return testNow }})
	if err != nil {
		t.Fatal(err)
	}
	fx.gate, fx.held, fx.ops = g, map[string]int{}, &webhooktest.Ops[bus.Op]{}
	return fx
}

func TestPauseResumeAndTargets(t *testing.T) {
	fx := gateFixture(t)
	fx.env["USER"] = "ana"
	code, out, errOut := fx.run(t, "pause", "target/forward/acme", "--reason", "migration")
	want(t, code, out, errOut, exitOK, []string{"paused target/forward/acme", "'hookwall resume target/forward/acme' drains them"}, nil)
	fx.held["target#forward/acme"] = 3

	code, out, errOut = fx.run(t, "targets")
	want(t, code, out, errOut, exitOK, []string{"no target has been called yet"}, nil)
	if !hasRow(out, "target/forward/acme", "2026-12-01T12:00:00Z", "ana", "3", "migration") {
		t.Errorf("the pause row is missing:\n%s", out)
	}
	code, out, _ = fx.run(t, "targets", "--json")
	var v struct {
		Pauses []control.Pause
	}
	if code != exitOK || json.Unmarshal([]byte(out), &v) != nil || len(v.Pauses) != 1 || v.Pauses[0].Held != 3 || v.Pauses[0].By != "ana" {
		t.Errorf("targets --json: exit %d %s", code, out)
	}

	code, out, errOut = fx.run(t, "resume", "target/forward/acme")
	want(t, code, out, errOut, exitOK, []string{"resumed target/forward/acme: released 3 held event(s)"},
		[]string{"resume target/forward/acme: released 1 of about 3 held"})
	if !slices.Equal(fx.drained, []string{"target#forward/acme"}) {
		t.Errorf("drained %v", fx.drained)
	}
	if ps, _ := fx.gate.Pauses(context.Background()); len(ps) != 0 {
		t.Errorf("still paused: %v", ps)
	}
	var types []string
	ops := fx.ops.All()
	for _, op := range ops {
		types = append(types, op.Type+" "+op.Scope)
	}
	if !slices.Equal(types, []string{bus.DetailTypeControlPaused + " target#forward/acme", bus.DetailTypeControlResumed + " target#forward/acme"}) ||
		ops[1].Count != 3 || ops[0].Reason != "migration" {
		t.Errorf("op events: %+v", ops)
	}

	code, out, errOut = fx.run(t, "resume", "tenant/acme", "--no-drain", "--json")
	want(t, code, out, errOut, exitOK, []string{`"wasPaused": false`, `"released": 0`}, nil)

	for _, bad := range [][]string{{"pause"}, {"pause", "acme"}, {"pause", "queue/x"}, {"resume", "tenant/"}, {"pause", "tenant/a", "tenant/b"}} {
		code, out, errOut := fx.run(t, bad...)
		want(t, code, out, errOut, exitUsage, nil, []string{"handler/NAME, tenant/NAME or target/NAME"})
	}
	// A scope no event can ever be held on is refused, with the rule, and
	// never answered "paused".
	before := len(fx.ops.All())
	for _, bad := range []string{"tenant/a#b", "target/../x", "tenant/" + strings.Repeat("a", 400), "handler/a#b"} {
		code, out, errOut := fx.run(t, "pause", bad)
		want(t, code, out, errOut, exitUsage, nil, []string{"can never match"})
		if strings.Contains(out+errOut, "paused") {
			t.Errorf("pause %.40s answered %q %q", bad, out, errOut)
		}
	}
	if ops := fx.ops.All(); len(ops) != before {
		t.Errorf("op events for refused pauses: %+v", ops[before:])
	}
}

func TestRecoverParsesItsWindowAndRefusesWhatItCannotDo(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"recover"}, "--since is required"},
		{[]string{"recover", "--since", "2h", "--status", "SUCCEEDED"}, "never sends back an event whose handlers ran to the end"},
		{[]string{"recover", "--since", "2h", "--status", "NOPE"}, "--status \"NOPE\""},
		{[]string{"recover", "--since", "1h", "--until", "2h"}, "--since must be before until"},
		{[]string{"recover", "--since", "1h", "--resume", "20261201-120000-abcdef"}, "give either a window"},
		{[]string{"recover", "--list", "--cancel", "x"}, "give either a window"},
		{[]string{"recover", "--resume", "a#b"}, "is not a job id"},
		{[]string{"recover", "--since", "1h", "--rate", "-1"}, "--rate -1"},
		{[]string{"recover", "--resume", "20261201-120000-abcdef", "--rate", "2"}, "--rate applies to a new job"},
		{[]string{"recover", "--since", "1h", "--tenant", "a b"}, "not a tenant name"},
		{[]string{"recover", "extra", "--since", "1h"}, "unexpected argument"},
	} {
		fx := gateFixture(t)
		fx.jobs = newFakeJobs()
		code, out, errOut := fx.run(t, tt.args...)
		want(t, code, out, errOut, exitUsage, nil, []string{tt.want})
		if len(fx.jobs.created) != 0 {
			t.Errorf("%v created a job", tt.args)
		}
	}
}

func TestRecoverShowsProgressAndAnETA(t *testing.T) {
	fx := gateFixture(t)
	fx.jobs = newFakeJobs()
	fx.jobs.steps = 4
	now := testNow
	fx.jobs.tick = func() { now = now.Add(600 * time.Millisecond) }
	var out, errOut strings.Builder
	a := newApp(&out, &errOut, func(k string) string { return fx.env[k] })
	a.now, a.wd, a.exe = func() time.Time { return now }, "", ""
	a.open = func(context.Context, settings.CLI) (*backend, error) {
		return &backend{gate: fx.gate, jobs: fx.jobs, held: fakeHeld(fx.held)}, nil
	}
	code := a.main(context.Background(), []string{"recover", "--since", "2026-12-01T10:00:00Z", "--until", "30m", "--status", "failed,dead",
		"--tenant", "acme", "--handler", "forward", "--rate", "5"})
	want(t, code, out.String(), errOut.String(), exitOK,
		[]string{"job 20261201-120000-abcdef done: 4/4 done: replayed 4"},
		[]string{"recover: job 20261201-120000-abcdef: FAILED, DEAD events received from 2026-12-01T10:00:00Z to 2026-12-01T11:30:00Z, tenant acme, handler forward",
			"recover 20261201-120000-abcdef: 1/4 (25%) replayed 1, skipped 0, missing 0, 1.7/s, ETA 2s",
			"recover 20261201-120000-abcdef: 3/4 (75%)", "4/4 (100%) replayed 4, skipped 0, missing 0; done"})
	if n := strings.Count(errOut.String(), "\n"); n != 4 { // the job line, two progress lines a second apart, the last
		t.Errorf("%d stderr lines, want 4 (a progress line a second at most):\n%s", n, errOut.String())
	}
	f := fx.jobs.created[0]
	if !slices.Equal(f.Statuses, []webhook.Status{webhook.StatusFailed, webhook.StatusDead}) || f.Tenant != "acme" || f.Handler != "forward" ||
		fx.jobs.rates[0] != 5 || !f.Until.Equal(testNow.Add(-30*time.Minute)) {
		t.Errorf("created %+v rate %v", f, fx.jobs.rates)
	}
}

// A job that selects nothing says why, after its summary.
func TestRecoverSelectingNothingSaysWhy(t *testing.T) {
	fx := gateFixture(t)
	fx.jobs = newFakeJobs()
	fx.jobs.why = "0 of the 3 DEAD records in the window had target crm or crm/…; their targets: forward/demo (3)"
	code, out, errOut := fx.run(t, "recover", "--since", "1h", "--status", "dead", "--handler", "crm")
	want(t, code, out, errOut, exitOK, []string{"done: 0/0 done", "selected nothing: 0 of the 3 DEAD records in the window had target crm"}, nil)
	code, out, errOut = fx.run(t, "recover", "--since", "1h", "--status", "dead", "--handler", "crm", "--json")
	want(t, code, out, errOut, exitOK, []string{`"why": "0 of the 3 DEAD records`}, nil)
}

func TestRecoverInterruptedOrCancelledSaysHowToResume(t *testing.T) {
	fx := gateFixture(t)
	fx.jobs = newFakeJobs()
	fx.jobs.steps, fx.jobs.end, fx.jobs.err = 2, recovery.StateInterrupted, context.Canceled
	code, out, errOut := fx.run(t, "recover", "--since", "1h", "--json")
	want(t, code, out, errOut, exitFailed, []string{`"state": "interrupted"`},
		[]string{"interrupted at 2/2 done", "'hookwall recover --resume 20261201-120000-abcdef'"})

	fx.jobs.err, fx.jobs.end = nil, recovery.StateCancelled
	code, out, errOut = fx.run(t, "recover", "--resume", "20261201-120000-abcdef")
	want(t, code, out, errOut, exitFailed, nil, []string{"was cancelled", "--resume 20261201-120000-abcdef' goes on"})

	code, out, errOut = fx.run(t, "recover", "--cancel", "20261201-120000-abcdef")
	want(t, code, out, errOut, exitRefused, nil, []string{"is cancelled: nothing to cancel"})
	fx.jobs.jobs["20261201-120000-abcdef"].State = recovery.StateRunning
	code, out, errOut = fx.run(t, "recover", "--cancel", "20261201-120000-abcdef")
	want(t, code, out, errOut, exitOK, []string{"cancelled job 20261201-120000-abcdef"}, nil)

	fx.jobs.jobs["20261201-120000-abcdef"].State = recovery.StateDone
	code, out, errOut = fx.run(t, "recover", "--resume", "20261201-120000-abcdef")
	want(t, code, out, errOut, exitRefused, nil, []string{"is done"})
	code, out, errOut = fx.run(t, "recover", "--resume", "20261201-000000-ffffff")
	want(t, code, out, errOut, exitRefused, nil, []string{"no such job", "hookwall recover --list"})

	code, out, errOut = fx.run(t, "recover", "--list")
	want(t, code, out, errOut, exitOK, nil, nil)
	if !strings.Contains(strings.Join(strings.Fields(out), " "), "20261201-120000-abcdef done 2/2 2 0") {
		t.Errorf("list:\n%s", out)
	}
	fx.jobs.err = errors.New("boom")
	fx.jobs.jobs["20261201-120000-abcdef"].State = recovery.StateInterrupted
	code, out, errOut = fx.run(t, "recover", "--resume", "20261201-120000-abcdef")
	want(t, code, out, errOut, exitFailed, nil, []string{"hookwall: boom"})
}

// --detach creates the job, hands it to the sweeper and prints its id at
// once, running nothing; --watch shows its progress from the job item
// until it is done; Ctrl-C stops watching, not the job.
func TestRecoverDetachThenWatch(t *testing.T) {
	fx := gateFixture(t)
	fx.jobs = newFakeJobs()
	const id = "20261201-120000-abcdef"
	code, out, errOut := fx.run(t, "recover", "--since", "1h", "--detach")
	want(t, code, out, errOut, exitOK, []string{id + "\n"}, []string{"the sweeper runs it in the background", "'hookwall recover --watch " + id + "'"})
	if j := fx.jobs.jobs[id]; fx.jobs.runs != 0 || !j.Detached || j.State != recovery.StateRunning {
		t.Fatalf("detach: %d runs, job %+v; want no run, the job detached", fx.jobs.runs, j)
	}
	for _, bad := range [][]string{{"recover", "--list", "--detach"}, {"recover", "--watch", id, "--detach"}, {"recover", "--watch", "a#b"},
		{"recover", "--watch", id, "--since", "1h"}} {
		code, out, errOut := fx.run(t, bad...)
		want(t, code, out, errOut, exitUsage, nil, nil)
	}

	// A sweep run between two reads moves it on by 2 of 6.
	fx.jobs.jobs[id].Counts = recovery.Counts{Total: 6, Counted: true}
	fx.jobs.onGet = func(j *recovery.Job) {
		if j.Counts.Replayed < j.Counts.Total {
			j.Counts.Replayed += 2
		}
		if j.Counts.Replayed == j.Counts.Total {
			j.State = recovery.StateDone
		}
	}
	code, out, errOut = fx.run(t, "recover", "--watch", id)
	want(t, code, out, errOut, exitOK, []string{"job " + id + " done: 6/6 done: replayed 6"},
		[]string{"recover " + id + ": 2/6 (33%)", "waiting for the next sweep run", "6/6 (100%) replayed 6, skipped 0, missing 0; done"})
	if fx.jobs.runs != 0 {
		t.Errorf("watch ran the job %d times", fx.jobs.runs)
	}

	// Ctrl-C while watching: the watch ends, the job goes on.
	fx.jobs.jobs[id].State, fx.jobs.jobs[id].Counts = recovery.StateRunning, recovery.Counts{Total: 100, Counted: true}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	gets := 0
	fx.jobs.onGet = func(j *recovery.Job) {
		if gets++; gets == 3 {
			cancel()
		}
	}
	var sout, serr strings.Builder
	a := newApp(&sout, &serr, func(k string) string { return fx.env[k] })
	a.now, a.wd, a.exe, a.pollEvery = func() time.Time { return testNow }, "", "", time.Millisecond
	a.open = func(context.Context, settings.CLI) (*backend, error) {
		return &backend{gate: fx.gate, jobs: fx.jobs}, nil
	}
	code = a.main(ctx, []string{"recover", "--watch", id})
	want(t, code, sout.String(), serr.String(), exitOK, nil, []string{"stopped watching job " + id + "; the job goes on"})
	if st := fx.jobs.jobs[id].State; st != recovery.StateRunning {
		t.Errorf("after Ctrl-C: the job is %s, want still running", st)
	}

	// A job that no process runs any more (not detached) ends the watch,
	// saying how to go on; a done job cannot be detached.
	fx.jobs.onGet = nil
	fx.jobs.jobs[id].Detached, fx.jobs.jobs[id].State = false, recovery.StateInterrupted
	code, out, errOut = fx.run(t, "recover", "--watch", id)
	want(t, code, out, errOut, exitFailed, []string{"job " + id + " interrupted"}, []string{"--resume " + id + "' goes on"})
	fx.jobs.jobs[id].State = recovery.StateDone
	code, out, errOut = fx.run(t, "recover", "--resume", id, "--detach")
	want(t, code, out, errOut, exitRefused, nil, []string{"is done"})
}

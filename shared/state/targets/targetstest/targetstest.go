// Package targetstest is the contract suite of [targets.Gate]: every
// implementation (targets.Table on DynamoDB Local, memgate in memory)
// passes [Run]. It checks the promises the chaos test and the drain rely
// on: a dead target gets at most MinCalls calls before its breaker opens,
// across instances and concurrency, then exactly one probe per interval;
// a window of MinCalls successes admits with no write; buckets honour
// their rate across instances; pauses hold, and a resume is seen at once
// by the instance that made it.
package targetstest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook/webhooktest"
	"github.com/hookwall/hookwall/shared/state/targets"
)

// Env is one shared state (a table) under test.
type Env struct {
	// Gate returns a new instance over the state, configured by cfg (a
	// processor instance, the sweeper, the CLI).
	Gate func(t *testing.T, cfg targets.Config) targets.Gate
	// Writes returns the writes every instance made to the state so far
	// (DynamoDB: write requests, those whose condition failed included).
	Writes func() int
}

// RateSetter is implemented by the gates that can set one target's rate.
type RateSetter interface {
	SetRate(ctx context.Context, target string, rate float64) error
}

// start is the clock's start: whole milliseconds, as the table keeps them.
var start = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// config returns the suite's configuration on clock c: the defaults'
// shape, with a wait long enough for goroutines to report.
func config(c *webhooktest.Clock) targets.Config {
	return targets.Config{MinCalls: 5, FailureRate: 0.5, Window: time.Minute, ProbeInterval: 30 * time.Second,
		Rate: 10, Wait: 10 * time.Second, Now: c.Now}
}

// Run runs the suite; newEnv returns a new, empty state.
func Run(t *testing.T, newEnv func(t *testing.T) Env) {
	tests := []struct {
		name string
		run  func(t *testing.T, env Env)
	}{
		{"a dead target gets at most MinCalls calls, then one probe per interval", deadTarget},
		{"a window of MinCalls successes admits with no write until a failure", freeWindow},
		{"healthy traffic writes at most twice MinCalls per window", healthyWrites},
		{"a new window forgets the failures of the last", windowRolls},
		{"failures under the rate keep the breaker closed", underRate},
		{"an admission waits for pending outcomes, then holds", pendingWait},
		{"reservations never reported expire a window later", lostReservations},
		{"take honours the rate across instances", takeRate},
		{"take's burst is one second's worth", takeBurst},
		{"a target's own rate", takeOwnRate},
		{"pauses hold and resumes release", pauses},
		{"a pause covers handler, then tenant, then target", pausePriority},
		{"a pause of a shared target covers every tenant's breaker", sharedTargetPause},
		{"bad scopes are refused", badScopes},
		{"breakers lists every target admitted", breakers},
		{"no target and held admissions", noTarget},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.run(t, newEnv(t))
		})
	}
}

const target = "forward/acme"

var subject = targets.Subject{Handler: "forward.all", Tenant: "acme", Target: target}

// must returns what f returns on a background context, failing t on its
// error: the gate's calls the suite expects to succeed.
func must[T any](t *testing.T, f func(ctx context.Context) (T, error)) T {
	t.Helper()
	v, err := f(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func admit(t *testing.T, g targets.Gate, sub targets.Subject) targets.Admission {
	t.Helper()
	return must(t, func(ctx context.Context) (targets.Admission, error) { return g.Admit(ctx, sub) })
}

func report(t *testing.T, g targets.Gate, a targets.Admission, sub targets.Subject, failed bool) targets.Transition {
	t.Helper()
	return must(t, func(ctx context.Context) (targets.Transition, error) { return g.Report(ctx, a, sub, failed) })
}

func blocked(t *testing.T, g targets.Gate, sc targets.Scope) bool {
	t.Helper()
	return must(t, func(ctx context.Context) (bool, error) { return g.Blocked(ctx, sc) })
}

// call admits sub on g and, when admitted, reports the outcome; it returns
// the admission and the transition.
func call(t *testing.T, g targets.Gate, sub targets.Subject, failed bool) (targets.Admission, targets.Transition) {
	t.Helper()
	a := admit(t, g, sub)
	if a.Verdict == targets.Hold {
		return a, targets.Transition{}
	}
	return a, report(t, g, a, sub, failed)
}

// callTime is how long a storm's call takes, so that calls overlap.
const callTime = 20 * time.Millisecond

// storm runs per goroutines on each gate, each admitting tries times and
// reporting failed for every admission; it returns the verdicts' counts
// and the transitions.
func storm(t *testing.T, gates []targets.Gate, per, tries int, failed bool) (verdicts map[targets.Verdict]int, opened, closed int) {
	t.Helper()
	var mu sync.Mutex
	verdicts = map[targets.Verdict]int{}
	var wg sync.WaitGroup
	errs := make(chan error, len(gates)*per)
	for _, g := range gates {
		for range per {
			wg.Go(func() {
				ctx := context.Background()
				for range tries {
					a, err := g.Admit(ctx, subject)
					if err != nil {
						errs <- err
						return
					}
					var tr targets.Transition
					if a.Verdict != targets.Hold {
						time.Sleep(callTime) // the call is in flight: others admit meanwhile
						if tr, err = g.Report(ctx, a, subject, failed); err != nil {
							errs <- err
							return
						}
					}
					mu.Lock()
					verdicts[a.Verdict]++
					if tr.Opened {
						opened++
					}
					if tr.Closed {
						closed++
					}
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	return verdicts, opened, closed
}

func breakerOf(t *testing.T, g targets.Gate, name string) targets.Breaker {
	t.Helper()
	for _, b := range must(t, g.Breakers) {
		if b.Target == name {
			return b
		}
	}
	t.Fatalf("Breakers() lists no %s", name)
	return targets.Breaker{}
}

func deadTarget(t *testing.T, env Env) {
	clock := webhooktest.NewClock(start)
	cfg := config(clock)
	a, b := env.Gate(t, cfg), env.Gate(t, cfg)
	gates := []targets.Gate{a, b}

	v, opened, _ := storm(t, gates, 10, 3, true)
	calls := v[targets.Allow] + v[targets.Probe]
	if calls > cfg.MinCalls || opened != 1 {
		t.Fatalf("20 callers on a dead target: %d calls, %d openings (verdicts %v); want at most %d calls and 1 opening",
			calls, opened, v, cfg.MinCalls)
	}
	br := breakerOf(t, a, target)
	if !br.Open() || !br.ProbeAt.Equal(clock.Now().Add(cfg.ProbeInterval)) {
		t.Fatalf("breaker %+v; want open, probe at %v", br, clock.Now().Add(cfg.ProbeInterval))
	}
	if !blocked(t, b, targets.Scope{Kind: targets.KindTarget, Name: target}) {
		t.Fatal("Blocked(target) = false on an open breaker")
	}
	for interval := range 3 {
		clock.Advance(cfg.ProbeInterval - time.Millisecond)
		v, _, _ := storm(t, gates, 10, 1, true)
		if v[targets.Hold] != 20 {
			t.Fatalf("interval %d, 1ms before the probe: verdicts %v; want 20 holds", interval, v)
		}
		held := admit(t, a, subject)
		if held.Verdict != targets.Hold || held.On != (targets.Scope{Kind: targets.KindTarget, Name: target}) ||
			held.Reason != "circuit open: "+target || held.RecheckAt.IsZero() {
			t.Fatalf("held admission %+v; want Hold on target#%s, circuit open, a recheck time", held, target)
		}
		clock.Advance(time.Millisecond)
		v, _, closed := storm(t, gates, 10, 1, true)
		if v[targets.Probe] != 1 || v[targets.Allow] != 0 || closed != 0 {
			t.Fatalf("interval %d: verdicts %v, %d closings; want exactly one probe, no allow", interval, v, closed)
		}
	}
	clock.Advance(cfg.ProbeInterval)
	v, _, closed := storm(t, gates, 10, 1, false)
	if v[targets.Probe] != 1 || closed != 1 {
		t.Fatalf("a successful probe: verdicts %v, %d closings; want one probe closing it", v, closed)
	}
	if br := breakerOf(t, b, target); br.Open() {
		t.Fatalf("breaker %+v after a successful probe; want closed", br)
	}
	if blocked(t, b, targets.Scope{Kind: targets.KindTarget, Name: target}) {
		t.Fatal("Blocked(target) = true after the breaker closed")
	}
	clock.Advance(targets.BreakerCacheFor + time.Millisecond)
	if adm, _ := call(t, b, subject, false); adm.Verdict != targets.Allow {
		t.Fatalf("after closing: %v; want allow", adm.Verdict)
	}
}

func freeWindow(t *testing.T, env Env) {
	clock := webhooktest.NewClock(start)
	cfg := config(clock)
	a, b := env.Gate(t, cfg), env.Gate(t, cfg)
	for range cfg.MinCalls {
		call(t, a, subject, false)
	}
	w := env.Writes()
	for i := range 100 {
		if adm, _ := call(t, []targets.Gate{a, b}[i%2], subject, false); adm.Verdict != targets.Allow {
			t.Fatalf("call %d: %v; want allow", i, adm.Verdict)
		}
	}
	if got := env.Writes() - w; got != 0 {
		t.Fatalf("100 calls in a window of %d successes wrote %d times; want 0", cfg.MinCalls, got)
	}
	call(t, a, subject, true)
	w = env.Writes()
	call(t, a, subject, false)
	if env.Writes() == w {
		t.Fatal("after a failure, the instance that saw it admitted with no write")
	}
	clock.Advance(targets.BreakerCacheFor + time.Millisecond)
	w = env.Writes()
	call(t, b, subject, false)
	if env.Writes() == w {
		t.Fatalf("%s after a failure, another instance admitted with no write", targets.BreakerCacheFor+time.Millisecond)
	}
}

func healthyWrites(t *testing.T, env Env) {
	clock := webhooktest.NewClock(start)
	cfg := config(clock)
	a, b := env.Gate(t, cfg), env.Gate(t, cfg)
	call(t, a, subject, false) // the first call also lists the target
	clock.Advance(cfg.Window)
	w := env.Writes()
	const windows, perWindow = 3, 60
	for range windows {
		for i := range perWindow {
			call(t, []targets.Gate{a, b}[i%2], subject, false)
			clock.Advance(cfg.Window / perWindow)
		}
	}
	if got, most := env.Writes()-w, windows*2*cfg.MinCalls; got > most {
		t.Fatalf("%d healthy calls over %d windows wrote %d times; want at most %d", windows*perWindow, windows, got, most)
	}
}

func windowRolls(t *testing.T, env Env) {
	clock := webhooktest.NewClock(start)
	cfg := config(clock)
	g := env.Gate(t, cfg)
	for range cfg.MinCalls - 1 {
		call(t, g, subject, true)
	}
	clock.Advance(cfg.Window)
	outcomes := []bool{true, false, false, false, false}
	for i, failed := range outcomes {
		adm, tr := call(t, g, subject, failed)
		if adm.Verdict != targets.Allow || tr.Opened {
			t.Fatalf("call %d of the new window: %v, opened %v; want allow, closed", i, adm.Verdict, tr.Opened)
		}
	}
	if br := breakerOf(t, g, target); br.Open() || br.Calls != 5 || br.Fails != 1 || br.Oks != 4 {
		t.Fatalf("breaker %+v; want closed with 5 calls, 1 failure, 4 successes", br)
	}
}

func underRate(t *testing.T, env Env) {
	clock := webhooktest.NewClock(start)
	cfg := config(clock)
	g := env.Gate(t, cfg)
	for i, failed := range []bool{true, false, true, false, false, false, true, false, true} {
		if adm, tr := call(t, g, subject, failed); adm.Verdict != targets.Allow || tr.Opened {
			t.Fatalf("call %d: %v, opened %v; want allow, closed (failures under the rate)", i, adm.Verdict, tr.Opened)
		}
	}
	// 4 of 9 failed; one more failure makes 5 of 10, the rate.
	if _, tr := call(t, g, subject, true); !tr.Opened {
		t.Fatalf("5 failures of 10 calls: breaker %+v; want it opened", breakerOf(t, g, target))
	}
}

func pendingWait(t *testing.T, env Env) {
	clock := webhooktest.NewClock(start)
	cfg := config(clock)
	cfg.Wait = 200 * time.Millisecond
	g := env.Gate(t, cfg)
	var pending []targets.Admission
	for range cfg.MinCalls {
		pending = append(pending, admit(t, g, subject))
	}
	a := admit(t, g, subject)
	if a.Verdict != targets.Hold || a.Reason != "circuit deciding: "+target || a.On != (targets.Scope{Kind: targets.KindTarget, Name: target}) {
		t.Fatalf("with %d calls pending: %+v; want Hold, circuit deciding", cfg.MinCalls, a)
	}
	for _, p := range pending {
		report(t, g, p, subject, false)
	}
	if a, _ := call(t, g, subject, false); a.Verdict != targets.Allow {
		t.Fatalf("after the pending calls succeeded: %v; want allow", a.Verdict)
	}
}

func lostReservations(t *testing.T, env Env) {
	clock := webhooktest.NewClock(start)
	cfg := config(clock)
	cfg.Wait = 100 * time.Millisecond
	g := env.Gate(t, cfg)
	admit(t, g, subject) // never reported: the processor died
	clock.Advance(cfg.Window / 2)
	for range cfg.MinCalls - 1 {
		admit(t, g, subject) // nor these
	}
	clock.Advance(cfg.Window / 2)
	if a := admit(t, g, subject); a.Verdict != targets.Hold {
		t.Fatalf("the window over, its last reservation half a window old, outcomes pending: %v; want hold", a.Verdict)
	}
	clock.Advance(cfg.Window / 2)
	if a := admit(t, g, subject); a.Verdict != targets.Allow {
		t.Fatalf("a window after the last reservation: %v; want allow (a new window)", a.Verdict)
	}
}

func takeRate(t *testing.T, env Env) {
	clock := webhooktest.NewClock(start)
	cfg := config(clock)
	a, b := env.Gate(t, cfg), env.Gate(t, cfg)
	ctx := context.Background()
	var granted atomic.Int64
	var wg sync.WaitGroup
	for _, g := range []targets.Gate{a, b} {
		for range 5 {
			wg.Go(func() {
				for range 3 {
					n, _, err := g.Take(ctx, target, 1)
					if err != nil {
						t.Error(err)
						return
					}
					granted.Add(int64(n))
				}
			})
		}
	}
	wg.Wait()
	if got := granted.Load(); got != int64(cfg.Rate) {
		t.Fatalf("30 takes of 1 at once from two instances: %d granted; want %g (a full bucket)", got, cfg.Rate)
	}
	total := 0
	const steps = 30
	for range steps {
		clock.Advance(100 * time.Millisecond)
		for _, g := range []targets.Gate{a, b} {
			n, next, err := g.Take(ctx, target, 3)
			if err != nil {
				t.Fatal(err)
			}
			if n < 3 && (!next.After(clock.Now()) || next.After(clock.Now().Add(100*time.Millisecond))) {
				t.Fatalf("granted %d of 3 at %v, next token at %v; want within the next 100ms", n, clock.Now(), next)
			}
			total += n
		}
	}
	if most := int(cfg.Rate * steps / 10); total > most || total < most-1 {
		t.Fatalf("%d takes of 3 over %ds: %d granted; want %d (the rate)", 2*steps, steps/10, total, most)
	}
}

func takeBurst(t *testing.T, env Env) {
	clock := webhooktest.NewClock(start)
	cfg := config(clock)
	g := env.Gate(t, cfg)
	ctx := context.Background()
	if _, _, err := g.Take(ctx, target, 1); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Hour)
	n, next, err := g.Take(ctx, target, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if n != int(cfg.Rate) || !next.Equal(clock.Now().Add(100*time.Millisecond)) {
		t.Fatalf("after an idle hour: %d granted, next at %v; want %g, then one 100ms later", n, next.Sub(clock.Now()), cfg.Rate)
	}
	if n, _, _ := g.Take(ctx, target, 0); n != 0 {
		t.Fatalf("take of 0 granted %d", n)
	}
	if _, _, err := g.Take(ctx, target, -1); err == nil {
		t.Fatal("take of -1: no error")
	}
}

func takeOwnRate(t *testing.T, env Env) {
	clock := webhooktest.NewClock(start)
	cfg := config(clock)
	a, b := env.Gate(t, cfg), env.Gate(t, cfg)
	rs, ok := a.(RateSetter)
	if !ok {
		t.Skip("this gate sets no rate per target")
	}
	ctx := context.Background()
	if err := rs.SetRate(ctx, target, 2); err != nil {
		t.Fatal(err)
	}
	if n, _, _ := b.Take(ctx, target, 100); n != 2 {
		t.Fatalf("rate 2: first take granted %d; want 2 (one second's worth)", n)
	}
	if err := rs.SetRate(ctx, target, 0.5); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Hour)
	n, next, err := a.Take(ctx, target, 100)
	if err != nil || n != 1 || !next.Equal(clock.Now().Add(2*time.Second)) {
		t.Fatalf("rate 0.5: %d granted, next in %v (%v); want 1 (at least one token), next in 2s", n, next.Sub(clock.Now()), err)
	}
}

func pauses(t *testing.T, env Env) {
	clock := webhooktest.NewClock(start)
	cfg := config(clock)
	a, b := env.Gate(t, cfg), env.Gate(t, cfg)
	ctx := context.Background()
	b.Pauses(ctx) // b reads the pauses before the pause: it may keep them PauseCacheFor
	call(t, b, subject, false)
	h := targets.Scope{Kind: targets.KindHandler, Name: subject.Handler}
	if err := a.Pause(ctx, h, "ops@acme", "deploy"); err != nil {
		t.Fatal(err)
	}
	adm := admit(t, a, subject)
	if adm.Verdict != targets.Hold || adm.On != h || adm.Reason != "paused handler "+subject.Handler ||
		!adm.RecheckAt.Equal(clock.Now().Add(targets.PauseRecheck)) {
		t.Fatalf("paused handler: %+v; want Hold on %s, recheck %v later", adm, h, targets.PauseRecheck)
	}
	ps := must(t, b.Pauses)
	if len(ps) != 1 || ps[0].Scope != h || ps[0].By != "ops@acme" || ps[0].Reason != "deploy" || !ps[0].At.Equal(clock.Now()) {
		t.Fatalf("Pauses() = %+v; want the one pause", ps)
	}
	clock.Advance(targets.PauseCacheFor + time.Millisecond)
	if adm := admit(t, b, subject); adm.Verdict != targets.Hold {
		t.Fatalf("%s after a pause on another instance: %v; want hold", targets.PauseCacheFor+time.Millisecond, adm.Verdict)
	}
	if !blocked(t, b, h) {
		t.Fatal("Blocked(paused handler) = false")
	}
	if err := a.Resume(ctx, h); err != nil {
		t.Fatal(err)
	}
	if blocked(t, a, h) {
		t.Fatal("Blocked right after a resume on the same instance = true")
	}
	if adm := admit(t, a, subject); adm.Verdict != targets.Allow {
		t.Fatalf("right after a resume on the same instance: %v; want allow", adm.Verdict)
	}
	clock.Advance(targets.PauseCacheFor + time.Millisecond)
	if adm := admit(t, b, subject); adm.Verdict != targets.Allow {
		t.Fatalf("%s after a resume on another instance: %v; want allow", targets.PauseCacheFor+time.Millisecond, adm.Verdict)
	}
	if ps := must(t, b.Pauses); len(ps) != 0 {
		t.Fatalf("Pauses() after resume = %+v; want none", ps)
	}
	if err := a.Resume(ctx, h); err != nil {
		t.Fatalf("resume of a scope not paused: %v", err)
	}
}

func pausePriority(t *testing.T, env Env) {
	clock := webhooktest.NewClock(start)
	g := env.Gate(t, config(clock))
	ctx := context.Background()
	scopes := []targets.Scope{{Kind: targets.KindTarget, Name: target}, {Kind: targets.KindTenant, Name: subject.Tenant},
		{Kind: targets.KindHandler, Name: subject.Handler}}
	for i, sc := range scopes {
		if err := g.Pause(ctx, sc, "ops", ""); err != nil {
			t.Fatal(err)
		}
		if adm := admit(t, g, subject); adm.Verdict != targets.Hold || adm.On != sc {
			t.Fatalf("pauses %v: held on %v; want %v", scopes[:i+1], adm.On, sc)
		}
	}
	other := targets.Subject{Handler: "crm.lead", Tenant: "globex", Target: "crm"}
	if adm := admit(t, g, other); adm.Verdict != targets.Allow {
		t.Fatalf("a subject no pause covers: %v; want allow", adm.Verdict)
	}
	if ps := must(t, g.Pauses); len(ps) != 3 || ps[0].Scope != scopes[2] || ps[1].Scope != scopes[0] || ps[2].Scope != scopes[1] {
		t.Fatalf("Pauses() = %+v; want 3, by scope", ps)
	}
}

// sharedTargetPause: a pause of a target shared by tenants holds each
// tenant's breaker key (<target>/@<tenant>) and blocks it; a pause of one
// tenant's key holds only that tenant's.
func sharedTargetPause(t *testing.T, env Env) {
	g := env.Gate(t, config(webhooktest.NewClock(start)))
	ctx := context.Background()
	acme := targets.Subject{Handler: "crm.lead", Tenant: "acme", Target: targets.BreakerKey("crm", "acme")}
	beta := targets.Subject{Handler: "crm.lead", Tenant: "beta", Target: targets.BreakerKey("crm", "beta")}
	shared := targets.Scope{Kind: targets.KindTarget, Name: "crm"}
	if err := g.Pause(ctx, shared, "ops", ""); err != nil {
		t.Fatal(err)
	}
	for _, sub := range []targets.Subject{acme, beta} {
		if adm := admit(t, g, sub); adm.Verdict != targets.Hold || adm.On != shared {
			t.Fatalf("%s under a pause of target/crm: %v on %v; want held on %v", sub.Target, adm.Verdict, adm.On, shared)
		}
		if !blocked(t, g, targets.Scope{Kind: targets.KindTarget, Name: sub.Target}) {
			t.Fatalf("%s under a pause of target/crm: not blocked", sub.Target)
		}
	}
	if err := g.Resume(ctx, shared); err != nil {
		t.Fatal(err)
	}
	own := targets.Scope{Kind: targets.KindTarget, Name: acme.Target}
	if err := g.Pause(ctx, own, "ops", ""); err != nil {
		t.Fatal(err)
	}
	if adm := admit(t, g, acme); adm.Verdict != targets.Hold || adm.On != own {
		t.Fatalf("acme under a pause of its key: %v on %v; want held on %v", adm.Verdict, adm.On, own)
	}
	if adm := admit(t, g, beta); adm.Verdict != targets.Allow {
		t.Fatalf("beta under a pause of acme's key: %v; want allow", adm.Verdict)
	}
}

func badScopes(t *testing.T, env Env) {
	g := env.Gate(t, config(webhooktest.NewClock(start)))
	ctx := context.Background()
	for _, sc := range []targets.Scope{{}, {Kind: "queue", Name: "x"}, {Kind: targets.KindTenant}, {Kind: targets.KindTarget, Name: "a\nb"},
		{Kind: targets.KindTenant, Name: "a#b"}, {Kind: targets.KindTenant, Name: strings.Repeat("a", 400)},
		{Kind: targets.KindTarget, Name: "../x"}, {Kind: targets.KindHandler, Name: "a#b"}} {
		for name, err := range map[string]error{
			"Pause":  g.Pause(ctx, sc, "ops", ""),
			"Resume": g.Resume(ctx, sc),
			"Blocked": func() error {
				_, err := g.Blocked(ctx, sc)
				return err
			}(),
		} {
			if !errors.Is(err, targets.ErrBadScope) {
				t.Errorf("%s(%q) = %v; want ErrBadScope", name, sc, err)
			}
		}
	}
}

func breakers(t *testing.T, env Env) {
	clock := webhooktest.NewClock(start)
	g := env.Gate(t, config(clock))
	for _, name := range []string{"b", "a", "b"} {
		call(t, g, targets.Subject{Handler: "h", Tenant: "t", Target: name}, name == "b")
	}
	bs := must(t, env.Gate(t, config(clock)).Breakers)
	want := []targets.Breaker{
		{Target: "a", State: targets.StateClosed, WindowStart: start, Calls: 1, Oks: 1},
		{Target: "b", State: targets.StateClosed, WindowStart: start, Calls: 2, Fails: 2},
	}
	if fmt.Sprint(bs) != fmt.Sprint(want) {
		t.Fatalf("Breakers() = %+v; want %+v", bs, want)
	}
}

func noTarget(t *testing.T, env Env) {
	clock := webhooktest.NewClock(start)
	g := env.Gate(t, config(clock))
	ctx := context.Background()
	sub := targets.Subject{Handler: "h", Tenant: "t"}
	if adm, tr := call(t, g, sub, true); adm.Verdict != targets.Allow || tr.Opened || tr.Closed {
		t.Fatalf("no target: %+v, %+v; want allow and nothing changed", adm, tr)
	}
	held := targets.Admission{Verdict: targets.Hold, On: targets.Scope{Kind: targets.KindTarget, Name: target}}
	for range 10 {
		if tr, err := g.Report(ctx, held, subject, true); err != nil || tr.Opened {
			t.Fatalf("report of a held admission: %+v, %v; want nothing", tr, err)
		}
	}
	if bs := must(t, g.Breakers); len(bs) != 0 {
		t.Fatalf("Breakers() = %+v; want none (nothing admitted to a target)", bs)
	}
}

package breaker

import (
	"math/rand/v2"
	"testing"
)

// p is the defaults' shape: 5 calls, 50%, a 60 s window, 30 s probes, 10/s.
var p = Params{MinCalls: 5, FailureRate: 0.5, WindowMs: 60_000, ProbeMs: 30_000, RatePerSecond: 10}

const t0 = 1_900_000_000_000 // ms

func TestAdmit(t *testing.T) {
	closed := func(calls, fails, oks int64) State {
		return State{Exists: true, WindowStart: t0, Calls: calls, Fails: fails, Oks: oks, LastCallAt: t0 + 1000}
	}
	tests := []struct {
		name string
		s    State
		now  int64
		want Decision
	}{
		{"no breaker yet", State{}, t0, Roll},
		{"a fresh window", closed(0, 0, 0), t0, Reserve},
		{"under MinCalls, all pending", closed(4, 0, 0), t0 + 1, Reserve},
		{"MinCalls pending: if they all fail it opens", closed(5, 0, 0), t0 + 1, Wait},
		{"MinCalls, one success pending", closed(5, 0, 4), t0 + 1, Reserve},
		{"MinCalls successes: free", closed(5, 0, 5), t0 + 1, Free},
		{"many successes, pending beyond: free", closed(9, 0, 5), t0 + 1, Free},
		{"a failure ends free admission", closed(6, 1, 5), t0 + 1, Reserve},
		{"judged on MinCalls outcomes under the rate: pending calls do not hold it", closed(8, 3, 4), t0 + 1, Reserve},
		{"fewer than MinCalls outcomes, pending calls could open it", closed(6, 2, 1), t0 + 1, Wait},
		{"the outcomes open it, not yet written", closed(8, 4, 3), t0 + 1, Wait},
		{"the window over, nothing pending", closed(5, 0, 5), t0 + 60_000, Roll},
		{"the window over, calls pending, the last recent", closed(5, 0, 2), t0 + 60_000, Wait},
		{"the window over, calls pending, recent, under the rate", closed(5, 0, 3), t0 + 60_000, Reserve},
		{"the window over, calls pending a window long", closed(5, 0, 3), t0 + 61_000, Roll},
		{"the window just not over: free", closed(5, 0, 5), t0 + 59_999, Free},
		{"open, probe not due", State{Exists: true, Open: true, ProbeAt: t0 + 30_000}, t0 + 29_999, Hold},
		{"open, probe due", State{Exists: true, Open: true, ProbeAt: t0 + 30_000}, t0 + 30_000, TryProbe},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := p.Admit(tc.s, tc.now); got != tc.want {
				t.Errorf("Admit(%+v, +%dms) = %v, want %v", tc.s, tc.now-t0, got, tc.want)
			}
		})
	}
}

func TestShouldOpen(t *testing.T) {
	tests := []struct {
		fails, oks int64
		want       bool
	}{
		{4, 0, false}, // under MinCalls
		{5, 0, true},
		{2, 3, false},
		{3, 3, true}, // 50%
		{4, 6, false},
		{5, 5, true},
		{1, 99, false},
	}
	for _, tc := range tests {
		s := State{Exists: true, Calls: tc.fails + tc.oks, Fails: tc.fails, Oks: tc.oks}
		if got := p.ShouldOpen(s); got != tc.want {
			t.Errorf("ShouldOpen(%d fails, %d oks) = %v, want %v", tc.fails, tc.oks, got, tc.want)
		}
	}
	if p.ShouldOpen(State{Exists: true, Open: true, Calls: 9, Fails: 9}) {
		t.Error("ShouldOpen of an open breaker = true")
	}
}

func TestReport(t *testing.T) {
	s := State{Exists: true, WindowStart: t0, Calls: 3}
	tests := []struct {
		name   string
		s      State
		window int64
		failed bool
		want   Outcome
	}{
		{"success in its window", s, t0, false, CountOk},
		{"failure in its window", s, t0, true, CountFail},
		{"success of an earlier window", s, t0 - 1, false, Ignore},
		{"failure of an earlier window counts now", s, t0 - 1, true, AddFail},
		{"free success", s, 0, false, Ignore},
		{"free failure", s, 0, true, AddFail},
		{"anything while open", State{Exists: true, Open: true}, t0, true, Ignore},
		{"no breaker", State{}, t0, true, Ignore},
	}
	for _, tc := range tests {
		if got := Report(tc.s, tc.window, tc.failed); got != tc.want {
			t.Errorf("%s: Report = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// A dead target, callers in any order: reservations stop at MinCalls until
// the outcomes open the breaker, whatever the interleaving.
func TestDeadTargetInterleavings(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 1000 {
		s := State{}
		now := int64(t0)
		calls, pending := 0, []int64{}
		for s.Open == false && now < t0+p.WindowMs {
			if len(pending) > 0 && r.IntN(2) == 0 { // an outcome
				w := pending[0]
				pending = pending[1:]
				s = Apply(s, Report(s, w, true))
				if p.ShouldOpen(s) {
					s = p.Opened(s, now)
				}
				continue
			}
			switch p.Admit(s, now) {
			case Roll:
				s = Rolled(s, now)
			case Reserve:
				s = Reserved(s, now)
			case Wait:
				now += 50
				continue
			default:
				t.Fatalf("unexpected decision on %+v", s)
			}
			calls++
			pending = append(pending, s.WindowStart)
		}
		if calls > int(p.MinCalls) || !s.Open {
			t.Fatalf("%d calls, open %v; want at most %d and open", calls, s.Open, p.MinCalls)
		}
	}
}

func TestTake(t *testing.T) {
	tests := []struct {
		name      string
		b         Bucket
		now       int64
		rate      float64
		n         int
		granted   int
		milli     int64
		nextAfter int64 // ms after now
	}{
		{"a new bucket is full", Bucket{}, t0, 10, 3, 3, 7000, 0},
		{"a new bucket, more than its burst", Bucket{}, t0, 10, 30, 10, 0, 100},
		{"empty, 250ms later", Bucket{Exists: true, UpdatedAt: t0}, t0 + 250, 10, 5, 2, 500, 50},
		{"idle: at most one second's worth", Bucket{Exists: true, UpdatedAt: t0}, t0 + 3_600_000, 10, 50, 10, 0, 100},
		{"a slow rate keeps one token", Bucket{Exists: true, UpdatedAt: t0}, t0 + 3_600_000, 0.5, 5, 1, 0, 2000},
		{"a clock behind refills nothing", Bucket{Exists: true, Milli: 1500, UpdatedAt: t0}, t0 - 5000, 10, 5, 1, 500, 5050},
		{"take of none", Bucket{Exists: true, Milli: 2000, UpdatedAt: t0}, t0, 10, 0, 0, 2000, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g, after, next := Take(tc.b, tc.now, tc.rate, tc.n)
			if g != tc.granted || after.Milli != tc.milli || next-tc.now != tc.nextAfter {
				t.Errorf("Take = %d granted, %d millitokens left, next in %dms; want %d, %d, %dms",
					g, after.Milli, next-tc.now, tc.granted, tc.milli, tc.nextAfter)
			}
		})
	}
}

// Whatever the takes, a bucket grants at most its burst plus rate × time.
func TestTakeNeverExceedsTheRate(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, rate := range []float64{0.5, 1, 7, 10, 250} {
		b := Bucket{}
		now := int64(t0)
		total := 0
		for range 10_000 {
			now += r.Int64N(300)
			g, after, _ := Take(b, now, rate, r.IntN(20))
			total += g
			if g > 0 {
				b = after
			}
		}
		if most := float64(Capacity(rate))/1000 + rate*float64(now-t0)/1000; float64(total) > most {
			t.Errorf("rate %g over %dms: %d granted; want at most %g", rate, now-t0, total, most)
		}
		if least := rate*float64(now-t0)/1000 - 2; rate >= 7 && rate <= 10 && float64(total) < least*0.99 {
			t.Errorf("rate %g over %dms: %d granted; want about %g", rate, now-t0, total, least)
		}
	}
}

func TestParseToken(t *testing.T) {
	for _, tc := range []struct {
		tok    string
		kind   byte
		window int64
		owner  string
	}{
		{ReservedToken(t0), 'r', t0, ""}, {FreeToken, 'f', 0, ""}, {ProbeToken("X"), 'p', 0, "X"},
		{"", 0, 0, ""}, {"r:", 0, 0, ""}, {"r:x", 0, 0, ""}, {"p:", 0, 0, ""}, {"z:1", 0, 0, ""},
	} {
		k, w, o := ParseToken(tc.tok)
		if k != tc.kind || w != tc.window || o != tc.owner {
			t.Errorf("ParseToken(%q) = %c %d %q, want %c %d %q", tc.tok, k, w, o, tc.kind, tc.window, tc.owner)
		}
	}
}

package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/webhook"
)

// describe renders journal entries for comparison: handler/step=result@ms.
func describe(j []webhook.JournalEntry) string {
	s := ""
	for _, e := range j {
		r := "nil"
		if e.Result != nil {
			r = string(e.Result)
		}
		s += fmt.Sprintf("%s/%s=%s@%d ", e.Handler, e.Step, r, e.CompletedAt.UnixMilli())
	}
	return s
}

var journalCases = []testCase{
	{"a saved step is in its claim's journal with its result and time", func(t *testing.T, e *env) {
		e.claimed(t)
		l := e.leased(t, "w1")
		if !e.save(t, l, "crm.lead", "create", `{"id":"L1"}`) {
			t.Fatalf("save step: lease lost")
		}
		want := fmt.Sprintf(`crm.lead/create={"id":"L1"}@%d `, e.clk.Now().UnixMilli())
		if got := describe(e.journal(t, l)); got != want {
			t.Errorf("journal: got %s, want %s", got, want)
		}
		steps, err := e.s.Steps(e.ctx, key, l.ClaimID)
		if err != nil || describe(steps) != want {
			t.Errorf("steps: got %s (%v), want %s", describe(steps), err, want)
		}
	}},
	{"the journal lists entries in sort key order, an empty result as nil", func(t *testing.T, e *env) {
		e.claimed(t)
		l := e.leased(t, "w1")
		ms := e.clk.Now().UnixMilli()
		for _, s := range [][3]string{{"h2", "b", "2"}, {"h1", "z", "1"}, {"h1", webhook.DoneStep, ""}, {"h1", "a", ""}} {
			if !e.save(t, l, s[0], s[1], s[2]) {
				t.Fatalf("save %s/%s: lease lost", s[0], s[1])
			}
		}
		want := fmt.Sprintf("h1/$done=nil@%d h1/a=nil@%d h1/z=1@%d h2/b=2@%d ", ms, ms, ms, ms)
		if got := describe(e.journal(t, l)); got != want {
			t.Errorf("got %s, want %s", got, want)
		}
	}},
	{"saving a step again replaces its entry", func(t *testing.T, e *env) {
		e.claimed(t)
		l := e.leased(t, "w1")
		e.save(t, l, "h", "s", "1")
		e.clk.Advance(time.Second)
		e.save(t, l, "h", "s", "2")
		if got, want := describe(e.journal(t, l)), fmt.Sprintf("h/s=2@%d ", e.clk.Now().UnixMilli()); got != want {
			t.Errorf("got %s, want %s", got, want)
		}
	}},
	{"the next attempt of the same claim reads the journal", func(t *testing.T, e *env) {
		e.claimed(t)
		l := e.leased(t, "w1")
		e.save(t, l, "h", "s", "1")
		held(t, "retry")(e.s.Retry(e.ctx, l, "x"))
		next := e.leased(t, "w2")
		if got := describe(e.journal(t, next)); got == "" {
			t.Errorf("the next attempt sees an empty journal")
		}
	}},
	{"a new claim of an expired key starts with an empty journal", func(t *testing.T, e *env) {
		first := e.claimed(t)
		l := e.leased(t, "w1")
		e.save(t, l, "h", "s", "1")
		held(t, "complete")(e.s.Complete(e.ctx, l, e.clk.Now().Add(time.Minute)))
		e.clk.Advance(2 * time.Minute)
		second := e.claimed(t)
		if second.ClaimID == first.ClaimID {
			t.Fatalf("the new claim has the old claim id")
		}
		next := e.leased(t, "w2")
		if j := e.journal(t, next); len(j) != 0 {
			t.Errorf("the new claim sees the old claim's journal: %s", describe(j))
		}
		old, err := e.s.Steps(e.ctx, key, first.ClaimID)
		if err != nil || len(old) != 1 {
			t.Errorf("the old claim's journal: got %s (%v), want its one entry kept", describe(old), err)
		}
	}},
	{"the journal of a claim without steps is empty", func(t *testing.T, e *env) {
		e.claimed(t)
		l := e.leased(t, "w1")
		if j := e.journal(t, l); len(j) != 0 {
			t.Errorf("got %s, want empty", describe(j))
		}
	}},
}

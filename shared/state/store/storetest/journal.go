package storetest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/state/store"
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
	{"an entry keeps its run, in the record and in a journal item, saved or carried by the completion", func(t *testing.T, e *env) {
		l := e.firstLease(t)
		at := e.clk.Now()
		big := strings.Repeat("x", 2*store.RecordStepBytes) // too large for the record: a journal item
		entries := []webhook.JournalEntry{
			{Handler: "h", Step: "a", CompletedAt: at, Run: 2},                      // no result
			{Handler: "h", Step: "b", Result: []byte("1"), CompletedAt: at, Run: 1}, // a result
			{Handler: "h", Step: "$undo:a", CompletedAt: at, Run: 1},                // an undo of run 1
			{Handler: "h", Step: "c", CompletedAt: at},                              // run 0
		}
		if !held(t, "save steps")(e.s.SaveSteps(e.ctx, l, entries)) {
			t.Fatalf("save steps: lease lost")
		}
		if !held(t, "save step")(e.s.SaveStep(e.ctx, l, webhook.JournalEntry{Handler: "h", Step: "d", Result: []byte(big), CompletedAt: at, Run: 3})) {
			t.Fatalf("save step: lease lost")
		}
		if !held(t, "complete steps")(e.s.CompleteSteps(e.ctx, l, at.Add(time.Hour),
			[]webhook.JournalEntry{{Handler: "h", Step: "e", CompletedAt: at, Run: 4}})) {
			t.Fatalf("complete steps: lease lost")
		}
		got, err := e.s.Steps(e.ctx, key, l.ClaimID)
		if err != nil {
			t.Fatal(err)
		}
		runs := map[string]int{}
		for _, j := range got {
			runs[j.Step] = j.Run
		}
		want := map[string]int{"$undo:a": 1, "a": 2, "b": 1, "c": 0, "d": 3, "e": 4}
		if fmt.Sprint(runs) != fmt.Sprint(want) {
			t.Errorf("runs: got %v, want %v", runs, want)
		}
	}},
	{"a saved step is in its claim's journal with its result and time", func(t *testing.T, e *env) {
		l := e.firstLease(t)
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
		l := e.firstLease(t)
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
		l := e.firstLease(t)
		e.save(t, l, "h", "s", "1")
		e.clk.Advance(time.Second)
		e.save(t, l, "h", "s", "2")
		if got, want := describe(e.journal(t, l)), fmt.Sprintf("h/s=2@%d ", e.clk.Now().UnixMilli()); got != want {
			t.Errorf("got %s, want %s", got, want)
		}
	}},
	{"the next attempt of the same claim reads the journal", func(t *testing.T, e *env) {
		l := e.firstLease(t)
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
		// The old claim's entries may be gone with its record (the table
		// keeps small entries in the record, which the new claim
		// replaced); the new claim never sees them.
		old, err := e.s.Steps(e.ctx, key, first.ClaimID)
		if err != nil || len(old) > 1 {
			t.Errorf("the old claim's journal: got %s (%v), want at most its one entry", describe(old), err)
		}
	}},
	{"the journal of a claim without steps is empty", func(t *testing.T, e *env) {
		l := e.firstLease(t)
		if j := e.journal(t, l); len(j) != 0 {
			t.Errorf("got %s, want empty", describe(j))
		}
	}},
	{"several steps are saved in one write, in sort key order", func(t *testing.T, e *env) {
		l := e.firstLease(t)
		e.ops()
		if !held(t, "save steps")(e.s.SaveSteps(e.ctx, l, []webhook.JournalEntry{
			{Handler: "h1", Step: "b", Result: []byte("2"), CompletedAt: e.clk.Now()},
			{Handler: "h1", Step: webhook.DoneStep, CompletedAt: e.clk.Now()}})) {
			t.Fatalf("save steps: lease lost")
		}
		e.expectOps(t, "save two steps", map[string]int{"UpdateItem": 1})
		ms := e.clk.Now().UnixMilli()
		if got, want := describe(e.journal(t, l)), fmt.Sprintf("h1/$done=nil@%d h1/b=2@%d ", ms, ms); got != want {
			t.Errorf("got %s, want %s", got, want)
		}
	}},
	{"a step saved under a lost lease is not written", func(t *testing.T, e *env) {
		l := e.firstLease(t)
		e.clk.Advance(LeaseFor + time.Millisecond)
		next := e.leased(t, "w2")
		for _, result := range []string{"small", strings.Repeat("x", 2*store.RecordStepBytes)} {
			if e.save(t, l, "h", "s", result) {
				t.Errorf("a step of %d bytes saved under the lost lease: got held", len(result))
			}
		}
		if held(t, "save steps")(e.s.SaveSteps(e.ctx, l, []webhook.JournalEntry{{Handler: "h", Step: "t", CompletedAt: e.clk.Now()}})) {
			t.Errorf("save steps under the lost lease: got held")
		}
		if j := e.journal(t, next); len(j) != 0 {
			t.Errorf("the next lease sees %s, want nothing", describe(j))
		}
	}},
	{"steps beyond the record's room are journaled all the same", func(t *testing.T, e *env) {
		l := e.firstLease(t)
		big := strings.Repeat("r", 2*store.RecordStepBytes)
		e.save(t, l, "h", "big", big)
		var want []string
		for i := range 20 { // far more than RecordStepBytes holds
			name := fmt.Sprintf("s%02d", i)
			if !e.save(t, l, "h", name, "ok") {
				t.Fatalf("save %s: lease lost", name)
			}
			want = append(want, name)
		}
		j := e.journal(t, l)
		if len(j) != 21 || string(j[0].Result) != big {
			t.Fatalf("got %d entries (%s), want 21 with the big one first", len(j), describe(j))
		}
		for i, name := range want {
			if j[i+1].Step != name || string(j[i+1].Result) != "ok" {
				t.Errorf("entry %d: got %s/%s=%s, want h/%s=ok", i+1, j[i+1].Handler, j[i+1].Step, j[i+1].Result, name)
			}
		}
		held(t, "retry")(e.s.Retry(e.ctx, l, "x"))
		if got := e.journal(t, e.leased(t, "w2")); len(got) != 21 {
			t.Errorf("the next attempt sees %d entries, want 21", len(got))
		}
	}},
	{"the completion carries the last steps", func(t *testing.T, e *env) {
		l := e.firstLease(t)
		e.save(t, l, "h", "a", "1")
		e.ops()
		entries := []webhook.JournalEntry{{Handler: "h", Step: "b", Result: []byte("2"), CompletedAt: e.clk.Now()}}
		if !held(t, "complete with steps")(e.s.CompleteSteps(e.ctx, l, e.clk.Now().Add(Window), entries)) {
			t.Fatalf("complete with steps: lease lost")
		}
		e.expectOps(t, "complete with a step", map[string]int{"UpdateItem": 1})
		rec := e.mustGet(t)
		if rec.Status != webhook.StatusSucceeded || rec.Version != l.Version+1 {
			t.Errorf("got %s version %d, want SUCCEEDED version %d", rec.Status, rec.Version, l.Version+1)
		}
		ms := e.clk.Now().UnixMilli()
		steps, err := e.s.Steps(e.ctx, key, l.ClaimID)
		if want := fmt.Sprintf("h/a=1@%d h/b=2@%d ", ms, ms); err != nil || describe(steps) != want {
			t.Errorf("steps: got %s (%v), want %s", describe(steps), err, want)
		}
	}},
	{"a completion carrying steps under a lost lease writes nothing", func(t *testing.T, e *env) {
		l := e.firstLease(t)
		e.clk.Advance(LeaseFor + time.Millisecond)
		next := e.leased(t, "w2")
		for _, result := range []string{"small", strings.Repeat("x", 2*store.RecordStepBytes)} {
			entries := []webhook.JournalEntry{{Handler: "h", Step: "b", Result: []byte(result), CompletedAt: e.clk.Now()}}
			if held(t, "complete with steps")(e.s.CompleteSteps(e.ctx, l, e.clk.Now().Add(Window), entries)) {
				t.Errorf("complete with a step of %d bytes under the lost lease: got held", len(result))
			}
		}
		if rec := e.mustGet(t); rec.Status != webhook.StatusProcessing || rec.LeaseOwner != "w2" {
			t.Errorf("got %s owned by %s, want PROCESSING by w2", rec.Status, rec.LeaseOwner)
		}
		if j := e.journal(t, next); len(j) != 0 {
			t.Errorf("the next lease sees %s, want nothing", describe(j))
		}
	}},
	{"a completion carrying a large step journals it too", func(t *testing.T, e *env) {
		l := e.firstLease(t)
		big := strings.Repeat("r", 2*store.RecordStepBytes)
		entries := []webhook.JournalEntry{{Handler: "h", Step: "b", Result: []byte(big), CompletedAt: e.clk.Now()}}
		if !held(t, "complete with steps")(e.s.CompleteSteps(e.ctx, l, e.clk.Now().Add(Window), entries)) {
			t.Fatalf("complete with steps: lease lost")
		}
		steps, err := e.s.Steps(e.ctx, key, l.ClaimID)
		if err != nil || len(steps) != 1 || string(steps[0].Result) != big {
			t.Errorf("steps: got %d entries (%v), want the big one", len(steps), err)
		}
		if rec := e.mustGet(t); rec.Status != webhook.StatusSucceeded {
			t.Errorf("got %s, want SUCCEEDED", rec.Status)
		}
	}},
	{"a replay with fresh steps drops the old claim's entries, a plain replay keeps them", func(t *testing.T, e *env) {
		l := e.firstLease(t)
		e.save(t, l, "h", "a", "1")
		e.save(t, l, "h", "big", strings.Repeat("r", 2*store.RecordStepBytes))
		held(t, "fail")(e.s.Fail(e.ctx, l, "x"))
		e.replayed(t, store.ReplayOptions{Window: Window})
		if j := e.journal(t, e.leased(t, "w2")); len(j) != 2 {
			t.Errorf("after a plain replay: got %s, want both entries", describe(j))
		}
		e.clk.Advance(LeaseFor + time.Millisecond)
		e.replayed(t, store.ReplayOptions{FreshSteps: true, Window: Window})
		next := e.leased(t, "w3")
		if j := e.journal(t, next); len(j) != 0 {
			t.Errorf("after a replay with fresh steps: got %s, want none", describe(j))
		}
		e.save(t, next, "h", "b", "2")
		if j := e.journal(t, next); describe(j) != fmt.Sprintf("h/b=2@%d ", e.clk.Now().UnixMilli()) {
			t.Errorf("the fresh claim's journal: got %s, want its one entry", describe(j))
		}
	}},
}

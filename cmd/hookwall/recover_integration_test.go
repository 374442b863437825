//go:build integration

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/aws/queue"
	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/engine/dispatch"
	"github.com/hookwall/hookwall/shared/engine/process"
	"github.com/hookwall/hookwall/shared/ops/control"
	"github.com/hookwall/hookwall/shared/ops/recovery"
	"github.com/hookwall/hookwall/shared/state/targets"
	"github.com/hookwall/hookwall/shared/state/targets/targetsdb"
)

// TestRecoverEndsEveryFailedEventSucceeded is must-show 2 through the CLI:
// events the processor FAILED are sent back by `hookwall recover` once the
// bug is fixed (progress on stderr, the job on stdout), each ends SUCCEEDED
// with its journaled step not run again, and a second recover of the same
// window changes nothing.
func TestRecoverEndsEveryFailedEventSucceeded(t *testing.T) {
	s := newStack(t)
	p := newProcessor(t, s)
	var keys []string
	for i := range 12 {
		id := fmt.Sprintf("01JRECOVER00000000000000%02d", i)
		b := body(t, id+".json", `{"destination":"U1","events":[{"type":"follow","follow":{"isUnblocked":false},"webhookEventId":"`+id+`",`+
			`"deliveryContext":{"isRedelivery":false},"timestamp":{{now_ms}},"mode":"active","source":{"type":"user","userId":"U2"}}]}`)
		if code, out, errOut := s.cli(t, "sign", "line", "--tenant", "acme", "--body", b, "--send", s.receiver.URL); code != exitOK {
			t.Fatalf("sign --send: exit %d %s%s", code, out, errOut)
		}
		keys = append(keys, "line#acme#"+id)
	}
	if v := p.drain(t, s); len(v) != 12 || slices.ContainsFunc(v, func(v dispatch.Verdict) bool { return v != dispatch.Failed }) {
		t.Fatalf("the broken processor: %v, want 12 failed", v)
	}
	p.broken.Store(false) // the fix ships

	code, out, errOut := s.cli(t, "recover", "--since", "1h", "--json")
	var j recovery.Job
	if code != exitOK || json.Unmarshal([]byte(out), &j) != nil {
		t.Fatalf("recover: exit %d\n%s%s", code, out, errOut)
	}
	if j.State != recovery.StateDone || j.Counts.Total != 12 || j.Counts.Replayed != 12 {
		t.Fatalf("job: %+v", j)
	}
	for _, w := range []string{"recover: job " + j.ID + ": FAILED events received from", "12/12 (100%) replayed 12, skipped 0, missing 0; done"} {
		if !strings.Contains(errOut, w) {
			t.Errorf("stderr lacks %q:\n%s", w, errOut)
		}
	}
	if v := p.drain(t, s); len(v) != 12 || slices.ContainsFunc(v, func(v dispatch.Verdict) bool { return v != dispatch.Succeeded }) {
		t.Fatalf("after the recovery: %v, want 12 succeeded", v)
	}
	for _, k := range keys {
		if v := s.view(t, k); v.Record.Status != webhook.StatusSucceeded {
			t.Errorf("%s: %s", k, v.Record.Status)
		}
	}
	if p.steps.Load() != 12 || p.handled.Load() != 24 {
		t.Errorf("steps ran %d times and the handler %d, want 12 and 24 (each event once broken, once recovered)", p.steps.Load(), p.handled.Load())
	}

	code, out, errOut = s.cli(t, "recover", "--since", "1h")
	if code != exitOK || !strings.Contains(out, "done: 0/0 done: replayed 0") {
		t.Errorf("second recover: exit %d\n%s%s", code, out, errOut)
	}
	if v := p.drain(t, s); len(v) != 0 {
		t.Errorf("the second recover enqueued %d", len(v))
	}
	code, out, errOut = s.cli(t, "recover", "--list")
	if code != exitOK || strings.Count(out, " done ") != 2 {
		t.Errorf("list: exit %d\n%s%s", code, out, errOut)
	}
}

// TestPauseAndResumeThroughTheTable: pause, targets and resume through
// the CLI on the targets' table in DynamoDB Local.
func TestPauseAndResumeThroughTheTable(t *testing.T) {
	s := newStack(t)
	code, out, errOut := s.cli(t, "pause", "tenant/acme", "--reason", "maintenance")
	if code != exitOK {
		t.Fatalf("pause: exit %d %s%s", code, out, errOut)
	}
	code, out, errOut = s.cli(t, "targets", "--json")
	var v struct{ Pauses []control.Pause }
	if code != exitOK || json.Unmarshal([]byte(out), &v) != nil || len(v.Pauses) != 1 || v.Pauses[0].Scope != "tenant/acme" ||
		v.Pauses[0].Reason != "maintenance" {
		t.Fatalf("targets: exit %d %s%s", code, out, errOut)
	}
	code, out, errOut = s.cli(t, "resume", "tenant/acme")
	if code != exitOK || !strings.Contains(out, "resumed tenant/acme") {
		t.Fatalf("resume: exit %d %s%s", code, out, errOut)
	}
	code, out, errOut = s.cli(t, "targets")
	if code != exitOK || !strings.Contains(out, "no pause") {
		t.Errorf("targets after the resume: exit %d %s%s", code, out, errOut)
	}
}

// TestPausedEventsAreHeldThenDrainedByResume: with tenant acme paused
// through the CLI, the processor (admitting through the targets' table)
// holds acme's events instead of running the handler; `hookwall targets`
// counts them; `hookwall resume tenant/acme` releases them at the rate,
// and the processor then runs each once to SUCCEEDED.
func TestPausedEventsAreHeldThenDrainedByResume(t *testing.T) {
	s := newStack(t)
	p := newProcessor(t, s)
	p.broken.Store(false)
	gate, err := targetsdb.New(targetsdb.TableConfig{Client: s.db, TableName: s.env["TABLE_NAME"]})
	if err != nil {
		t.Fatal(err)
	}
	p.d = gatedDispatcher(t, s, p, gate)
	if code, out, errOut := s.cli(t, "pause", "tenant/acme", "--reason", "maintenance"); code != exitOK {
		t.Fatalf("pause: exit %d %s%s", code, out, errOut)
	}
	var keys []string
	for i := range 5 {
		id := fmt.Sprintf("01JPAUSED000000000000000%02d", i)
		b := body(t, id+".json", `{"destination":"U1","events":[{"type":"follow","follow":{"isUnblocked":false},"webhookEventId":"`+id+`",`+
			`"deliveryContext":{"isRedelivery":false},"timestamp":{{now_ms}},"mode":"active","source":{"type":"user","userId":"U2"}}]}`)
		if code, out, errOut := s.cli(t, "sign", "line", "--tenant", "acme", "--body", b, "--send", s.receiver.URL); code != exitOK {
			t.Fatalf("sign --send: exit %d %s%s", code, out, errOut)
		}
		keys = append(keys, "line#acme#"+id)
	}
	if v := p.drain(t, s); len(v) != 5 || slices.ContainsFunc(v, func(v dispatch.Verdict) bool { return v != dispatch.Held }) {
		t.Fatalf("while paused: %v, want 5 held", v)
	}
	if p.handled.Load() != 0 {
		t.Fatalf("the handler ran %d times while paused", p.handled.Load())
	}
	code, out, errOut := s.cli(t, "targets", "--json")
	var v struct{ Pauses []control.Pause }
	if code != exitOK || json.Unmarshal([]byte(out), &v) != nil || len(v.Pauses) != 1 || v.Pauses[0].Held != 5 {
		t.Fatalf("targets: exit %d %s%s", code, out, errOut)
	}
	code, out, errOut = s.cli(t, "resume", "tenant/acme")
	if code != exitOK || !strings.Contains(out, "resumed tenant/acme: released 5 held event(s)") {
		t.Fatalf("resume: exit %d %s%s", code, out, errOut)
	}
	time.Sleep(targets.PauseCacheFor + 100*time.Millisecond) // the processor's instance sees the resume within PauseCacheFor
	if v := p.drain(t, s); len(v) != 5 || slices.ContainsFunc(v, func(v dispatch.Verdict) bool { return v != dispatch.Succeeded }) {
		t.Fatalf("after the resume: %v, want 5 succeeded", v)
	}
	for _, k := range keys {
		if v := s.view(t, k); v.Record.Status != webhook.StatusSucceeded || v.Record.Attempts != 1 {
			t.Errorf("%s: %s after %d attempts, want SUCCEEDED after 1", k, v.Record.Status, v.Record.Attempts)
		}
	}
	if p.handled.Load() != 5 {
		t.Errorf("the handler ran %d times, want 5", p.handled.Load())
	}
}

// gatedDispatcher is p's dispatcher admitting each run through gate.
func gatedDispatcher(t *testing.T, s *stack, p *processor, gate targets.Gate) *dispatch.Dispatcher {
	t.Helper()
	reg := process.NewRegistry()
	process.HandleAll(reg, "test.crm", func(ctx context.Context, ev *process.Event[webhook.Envelope]) error {
		p.handled.Add(1)
		return nil
	})
	mainQ, err := queue.New(queue.Config{Client: s.sq, URL: s.queues.URL})
	if err != nil {
		t.Fatal(err)
	}
	dlq, err := queue.New(queue.Config{Client: s.sq, URL: s.queues.DLQURL})
	if err != nil {
		t.Fatal(err)
	}
	d, err := dispatch.New(dispatch.Config{Registry: reg, Store: s.table, DLQ: dlq, Kernel: dispatch.Kernel{Queue: mainQ},
		Gate: gate})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

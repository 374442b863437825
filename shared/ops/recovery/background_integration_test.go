//go:build integration

package recovery_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/hookwall/hookwall/shared/aws/awstest"
	"github.com/hookwall/hookwall/shared/aws/queue"
	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/engine/sweep"
	"github.com/hookwall/hookwall/shared/ops/recovery"
)

// sweeper returns the sweeper of the world as the compensator wires it in
// sweep mode, continuing js's detached jobs for at most budget a run.
func (w *world) sweeper(t *testing.T, js *recovery.Jobs, budget time.Duration) *sweep.Sweeper {
	t.Helper()
	dlq, err := queue.New(queue.Config{Client: w.sq, URL: w.queues.DLQURL})
	if err != nil {
		t.Fatal(err)
	}
	sw, err := sweep.New(sweep.Config{Store: w.table, Queue: w.mainQ, DLQ: dlq, Jobs: js, JobBudget: budget})
	if err != nil {
		t.Fatal(err)
	}
	return sw
}

// enqueued receives (and deletes) every message on the main queue and
// counts them by event key.
func (w *world) enqueued(t *testing.T, into map[string]int) {
	t.Helper()
	for _, m := range awstest.Drain(t, w.sq, w.queues.URL) {
		var env webhook.Envelope
		if err := json.Unmarshal([]byte(aws.ToString(m.Body)), &env); err != nil {
			t.Fatalf("message %s: %v", aws.ToString(m.MessageId), err)
		}
		into[env.Key]++
		if _, err := w.sq.DeleteMessage(w.ctx, &sqs.DeleteMessageInput{QueueUrl: &w.queues.URL, ReceiptHandle: m.ReceiptHandle}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDetachedJobIsFinishedBySweepRuns is item 1 of the background task: a
// detached job over a window of FAILED events is taken on by sweep runs
// alone (Run called as the schedule calls it), each run within its time
// budget, at the job's rate; a cancel between two runs stops it (the next
// run leaves it alone); detached again, the runs finish it and every event
// was enqueued exactly once; a second detached job over the same window
// changes nothing.
func TestDetachedJobIsFinishedBySweepRuns(t *testing.T) {
	const n, rate = 30, 20 // 30 events at 20 a second: more than one run of 0.5 s
	w := newWorld(t)
	since := time.Now().Add(-time.Minute)
	keys := w.failed(t, w.table, "bg", "acme", "crm.lead", n)
	cli, sweeps := w.jobs(t, "cli-1"), w.jobs(t, "compensator-1")
	sw := w.sweeper(t, sweeps, 500*time.Millisecond)
	f := recovery.Filter{Since: since, Until: time.Now().Add(time.Minute)}
	job, err := cli.Create(w.ctx, f, rate, "tester")
	if err != nil {
		t.Fatal(err)
	}
	if j, err := cli.Detach(w.ctx, job.ID); err != nil || !j.Detached || j.State != recovery.StateRunning || j.Owner != "" {
		t.Fatalf("detach: %+v %v, want running, detached, run by none", j, err)
	}
	sent := map[string]int{}

	// The first run does part of the window (the rate allows about 10 in
	// its budget) and leaves the job running, without a lease.
	rep, err := sw.Run(w.ctx)
	if err != nil || rep.Jobs != 1 {
		t.Fatalf("first run: %+v %v, want the job continued", rep, err)
	}
	first, err := cli.Get(w.ctx, job.ID)
	if err != nil || first.State != recovery.StateRunning || first.Owner != "" || first.Counts.Done() >= n ||
		first.Counts.Done() != rep.JobRecords || !first.Counts.Counted {
		t.Fatalf("after the first run: %+v %v (report %+v), want running, no owner, part of %d done", first, err, rep, n)
	}
	w.enqueued(t, sent)

	// Cancelled between two runs: the next run leaves it alone.
	if _, changed, err := cli.Cancel(w.ctx, job.ID); err != nil || !changed {
		t.Fatalf("cancel: %v %v", changed, err)
	}
	rep, err = sw.Run(w.ctx)
	if err != nil || rep.Jobs != 0 || rep.JobRecords != 0 {
		t.Fatalf("the run after the cancel: %+v %v, want the job left alone", rep, err)
	}
	if j, err := cli.Get(w.ctx, job.ID); err != nil || j.State != recovery.StateCancelled || j.Counts != first.Counts {
		t.Fatalf("after the cancel: %+v %v, want cancelled at %+v", j, err, first.Counts)
	}
	w.enqueued(t, sent)
	if len(sent) != first.Counts.Replayed {
		t.Errorf("%d events enqueued by the first run, want %d", len(sent), first.Counts.Replayed)
	}

	// Detached again (resume --detach): sweep runs alone finish it.
	if _, err := cli.Detach(w.ctx, job.ID); err != nil {
		t.Fatal(err)
	}
	runs := 0
	for ; runs < 40; runs++ {
		if _, err := sw.Run(w.ctx); err != nil {
			t.Fatal(err)
		}
		j, err := cli.Get(w.ctx, job.ID)
		if err != nil {
			t.Fatal(err)
		}
		if j.State == recovery.StateDone {
			break
		}
	}
	done, err := cli.Get(w.ctx, job.ID)
	if err != nil || done.State != recovery.StateDone || done.Counts.Replayed != n || done.Counts.NotEnqueued != 0 || done.FinishedAt.IsZero() {
		t.Fatalf("after %d more runs: %+v %v, want done with the %d replayed", runs, done, err, n)
	}
	t.Logf("the job took 1 + %d sweep runs of 0.5 s at %d/s", runs+1, rate)
	w.enqueued(t, sent)
	for _, k := range keys {
		if sent[k] != 1 {
			t.Errorf("%s enqueued %d times, want once", k, sent[k])
		}
	}
	if len(sent) != n {
		t.Errorf("%d events enqueued, want %d", len(sent), n)
	}
	if rep, err := sw.Run(w.ctx); err != nil || rep.Jobs != 0 {
		t.Errorf("a run after the job is done: %+v %v, want no job", rep, err)
	}

	// The events are handled; a second detached job over the window
	// selects nothing and sends nothing.
	for _, k := range keys {
		if st := w.status(t, k); st != webhook.StatusReceived {
			t.Fatalf("%s: %s, want RECEIVED (replayed)", k, st)
		}
	}
	again, err := cli.Create(w.ctx, f, rate, "tester")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Detach(w.ctx, again.ID); err != nil {
		t.Fatal(err)
	}
	// Runs until the job is done: its scan reads the whole table (events,
	// payloads, the sweep's shard cursors), which a loaded machine may not
	// finish within one run's 0.5 s; no run may select anything.
	for runs := 0; runs < 40; runs++ {
		rep, err := sw.Run(w.ctx)
		if err != nil || rep.Jobs != 1 || rep.JobRecords != 0 {
			t.Fatalf("the second job's run %d: %+v %v", runs+1, rep, err)
		}
		if j, err := cli.Get(w.ctx, again.ID); err != nil || j.State == recovery.StateDone {
			break
		}
	}
	second, err := cli.Get(w.ctx, again.ID)
	if err != nil || second.State != recovery.StateDone || second.Counts.Total != 0 || second.Counts.Done() != 0 {
		t.Errorf("second job: %+v %v, want done with nothing selected", second, err)
	}
	w.enqueued(t, sent)
	if len(sent) != n {
		t.Errorf("the second job enqueued %d more", len(sent)-n)
	}
	if _, err := cli.Detach(w.ctx, again.ID); err == nil {
		t.Error("detaching a done job: no error")
	}
}

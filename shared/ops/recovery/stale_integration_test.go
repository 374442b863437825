//go:build integration

package recovery_test

import (
	"context"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/hookwall/hookwall/shared/aws/awstest"
	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/engine/compensate"
	"github.com/hookwall/hookwall/shared/internal/kernel"
	"github.com/hookwall/hookwall/shared/ops/recovery"
	"github.com/hookwall/hookwall/shared/state/store"
)

// staleTries is how many replays race their own dead letter (issue #29,
// must-show 2: 100 tries).
const staleTries = 100

// TestReplayRacesItsOwnDeadLetter is issue #29 item 4's must-show: an event
// whose call fails is FAILED and dead-lettered; before the compensator
// takes that dead letter, the event is recovered (a recovery job of FAILED
// events, or a replay as the page and `hookwall replay` make it) with the
// target fixed. The processor (on the replay's message) and the
// compensator (on the old dead letter) then run at once, each message in a
// goroutine of its own with a random head start, beside a CPU hog. Every
// event must end SUCCEEDED with its lead live: the dead letter is of
// generation 0, the record of generation 1 after the replay, so the
// compensator acknowledges it as stale (StaleDeadLetters) instead of taking
// the RECEIVED record as redriven and deleting the lead, which it did
// before (the processor then dropped the replay as a duplicate of a
// COMPENSATED event).
func TestReplayRacesItsOwnDeadLetter(t *testing.T) {
	w := newRedoWorld(t)
	metrics := w.metrics
	const round = 10
	var keys []string
	verdicts := map[string]int{}
	for r := range staleTries / round {
		since := time.Now().Add(-time.Second)
		w.broken.Store(true)
		var batch []string
		for i := range round {
			batch = append(batch, w.claim(t, "stale-"+string(rune('a'+r))+string(rune('a'+i))))
		}
		if got := w.drain(t, w.queues.URL, w.d.Handle); len(got) != round || strings.Count(strings.Join(got, ","), "failed") != round {
			t.Fatalf("round %d, processor: %v, want %d failed", r, got, round)
		}
		w.broken.Store(false) // the target is fixed; the dead letters wait on the DLQ
		if r%2 == 0 {
			// the recovery job of FAILED events
			js := w.jobs(t, "cli-stale")
			job, err := js.Create(w.ctx, recovery.Filter{Since: since, Until: time.Now().Add(time.Minute), Tenant: "acme",
				Statuses: []webhook.Status{webhook.StatusFailed}}, 0, "tester")
			if err != nil {
				t.Fatal(err)
			}
			got, err := js.Run(w.ctx, job.ID, nil)
			if err != nil || got.State != recovery.StateDone || got.Counts.Replayed != round || got.Counts.NotEnqueued != 0 {
				t.Fatalf("round %d, job: %+v %v, want done with %d replayed and enqueued", r, got, err, round)
			}
		} else {
			// a replay as the page and `hookwall replay` make it
			for _, key := range batch {
				res, err := w.table.Replay(w.ctx, key, store.ReplayOptions{Force: true, Window: window})
				if err != nil || res.Outcome != store.Replayed || res.Record.Generation != 1 {
					t.Fatalf("replay %s: %v %v", key, res.Outcome, err)
				}
				if err := w.mainQ.Send(w.ctx, []webhook.Envelope{res.Record.Envelope()}); err != nil {
					t.Fatal(err)
				}
			}
		}
		for v, n := range w.race(t) {
			verdicts[v] += n
		}
		keys = append(keys, batch...)
	}
	var wrong []string
	for _, key := range keys {
		if st := w.status(t, key); st != webhook.StatusSucceeded {
			wrong = append(wrong, key+": "+string(st))
		}
	}
	live := w.crm.liveLeads()
	t.Logf("%d tries: %d SUCCEEDED, verdicts %v, %d live leads, metrics %v", len(keys), len(keys)-len(wrong), verdicts, live, metrics.Counts())
	if len(wrong) > 0 {
		t.Errorf("%d of %d replays did not end SUCCEEDED: %v", len(wrong), len(keys), wrong)
	}
	if live != len(keys) {
		t.Errorf("live leads: %d, want %d (one per event, none deleted by a stale dead letter)", live, len(keys))
	}
	if verdicts["stale"] != len(keys) || verdicts["compensated"] != 0 || verdicts["duplicate"] != 0 {
		t.Errorf("verdicts %v, want every dead letter stale, none compensated, no replay dropped as a duplicate", verdicts)
	}
	if n := metrics.Counts()[compensate.MetricStaleDeadLetters]; int(n) != len(keys) {
		t.Errorf("%s: %v, want %d", compensate.MetricStaleDeadLetters, n, len(keys))
	}
}

// race receives every message on the main queue and the DLQ, then handles
// each in a goroutine of its own (the processor's and the compensator's),
// after a random head start of up to 5 ms, beside a goroutine that keeps a
// core busy; it returns the verdicts counted.
func (w *redoWorld) race(t *testing.T) map[string]int {
	t.Helper()
	type delivery struct {
		url string
		m   sqstypes.Message
		h   func(context.Context, kernel.Message) kernel.Result
	}
	var all []delivery
	for _, m := range awstest.Drain(t, w.sq, w.queues.URL) {
		all = append(all, delivery{w.queues.URL, m, w.d.Handle})
	}
	for _, m := range awstest.Drain(t, w.sq, w.queues.DLQURL) {
		all = append(all, delivery{w.queues.DLQURL, m, w.c.Handle})
	}
	stop := make(chan struct{})
	go func() { // the load: a busy core
		for {
			select {
			case <-stop:
				return
			default:
			}
		}
	}()
	defer close(stop)
	var mu sync.Mutex
	verdicts := map[string]int{}
	var wg sync.WaitGroup
	for _, d := range all {
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(time.Duration(rand.IntN(5000)) * time.Microsecond)
			res := d.h(w.ctx, kernel.Message{MessageID: aws.ToString(d.m.MessageId), ReceiptHandle: aws.ToString(d.m.ReceiptHandle),
				Body: []byte(aws.ToString(d.m.Body))})
			mu.Lock()
			verdicts[res.Verdict.String()]++
			mu.Unlock()
			if res.Ack {
				if _, err := w.sq.DeleteMessage(w.ctx, &sqs.DeleteMessageInput{QueueUrl: &d.url, ReceiptHandle: d.m.ReceiptHandle}); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	return verdicts
}

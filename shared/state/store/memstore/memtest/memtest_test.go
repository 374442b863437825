package memtest_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/state/store"
	"github.com/hookwall/hookwall/shared/state/store/memstore/memtest"
)

// A seeded record and journal read back as seeded; the calls are counted,
// the landed journal writes recorded, and the lost heartbeats and writes
// report a lost lease without a write.
func TestSeedCountAndLose(t *testing.T) {
	ctx := context.Background()
	tb := memtest.New(t, nil)
	tb.Seed(store.Record{Key: "k", Status: webhook.StatusReceived, Attempts: 2})
	at := time.UnixMilli(1_700_000_000_000)
	tb.SeedJournal("k", webhook.JournalEntry{Handler: "h", Step: "s", CompletedAt: at, Run: 1})
	if rec := tb.Record("k"); rec.Status != webhook.StatusReceived || rec.Attempts != 2 || rec.ClaimID != "c-k" || rec.Version != 1 {
		t.Fatalf("seeded record: got %+v", rec)
	}
	if e, ok := tb.Entry("k", "h", "s"); !ok || e.Run != 1 || !e.CompletedAt.Equal(at) {
		t.Fatalf("seeded entry: got %+v (%v)", e, ok)
	}
	acq, err := tb.AcquireGeneration(ctx, "k", webhook.AnyGeneration, "me", time.Now().Add(time.Minute))
	if err != nil || acq.Outcome != webhook.Acquired || tb.Count("AcquireGeneration") != 1 {
		t.Fatalf("acquire: got %+v, %v, counted %d", acq, err, tb.Count("AcquireGeneration"))
	}
	if ok, err := tb.SaveStep(ctx, acq.Lease, webhook.JournalEntry{Handler: "h", Step: "t", CompletedAt: at}); !ok || err != nil {
		t.Fatalf("save: %v, %v", ok, err)
	}
	tb.LoseSaves()
	tb.LoseHeartbeats()
	if ok, _ := tb.SaveSteps(ctx, acq.Lease, []webhook.JournalEntry{{Handler: "h", Step: "u", CompletedAt: at}}); ok {
		t.Error("a save after LoseSaves landed")
	}
	if ok, _ := tb.Heartbeat(ctx, acq.Lease, time.Now().Add(time.Hour)); ok {
		t.Error("a heartbeat after LoseHeartbeats held")
	}
	if got := tb.Saves(); !slices.Equal(got, []string{"h/t"}) {
		t.Errorf("saves: got %v, want [h/t]", got)
	}
	if _, ok := tb.Entry("k", "h", "u"); ok {
		t.Error("the lost save was written")
	}
}

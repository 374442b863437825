package memstore_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/engine/dispatch"
	"github.com/hookwall/hookwall/shared/engine/intake"
	"github.com/hookwall/hookwall/shared/state/store"
	"github.com/hookwall/hookwall/shared/state/store/memstore"
	"github.com/hookwall/hookwall/shared/state/store/storetest"
)

// The in-memory store serves the receiver and the processor as the table does.
var (
	_ intake.Store           = (*memstore.Store)(nil)
	_ dispatch.Store         = (*memstore.Store)(nil)
	_ storetest.Store        = (*memstore.Store)(nil)
	_ store.UpdateItemAPI    = (*memstore.Table)(nil)
	_ storetest.TransitionDB = (*memstore.Table)(nil)
)

func TestContract(t *testing.T) {
	storetest.Run(t, func(_ *testing.T, now func() time.Time) storetest.Store {
		return memstore.New(memstore.Config{Now: now, Function: storetest.Function,
			HistoryKeep: storetest.HistoryKeep, SweepAfter: storetest.SweepAfter})
	}, storetest.Transitions(func(*testing.T) (storetest.TransitionDB, string) {
		return memstore.NewTable("rows", "pk", "sk"), "rows"
	}))
}

// A record stored without a history (as written before records had one)
// gets one with its next transition, as in the table.
func TestRecordWithoutHistory(t *testing.T) {
	now := time.Now()
	s := memstore.New(memstore.Config{Now: func() time.Time { return now }, Function: "processor", HistoryKeep: 2})
	s.Put(&store.Record{Key: "line#t1#old", Status: webhook.StatusReceived, Version: 1, ExpiresAt: now.Add(time.Hour).Unix(), ClaimID: "c"})
	acq, err := s.Acquire(context.Background(), "line#t1#old", "w1", now.Add(time.Minute))
	if err != nil || acq.Outcome != webhook.Acquired {
		t.Fatalf("acquire: %+v, %v", acq, err)
	}
	if ok, err := s.Retry(context.Background(), acq.Lease, "x"); !ok || err != nil {
		t.Fatalf("retry: %v, %v", ok, err)
	}
	if _, err := s.Acquire(context.Background(), "line#t1#old", "w2", now.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	rec, _ := s.Get(context.Background(), "line#t1#old")
	var got []string
	for _, e := range rec.History {
		got = append(got, fmt.Sprintf("v%d %s→%s", e.Version, e.From, e.To))
	}
	if want := []string{"v3 PROCESSING→RETRY", "v4 RETRY→PROCESSING"}; !slices.Equal(got, want) || rec.HistoryDropped() != 2 {
		t.Errorf("got history %v with %d dropped, want %v with 2", got, rec.HistoryDropped(), want)
	}
}

package dispatch

import (
	"context"
	"fmt"
	"testing"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/base/webhook/webhooktest"
	"github.com/hookwall/hookwall/shared/engine/process"
	"github.com/hookwall/hookwall/shared/state/store"
	"github.com/hookwall/hookwall/shared/state/store/memstore/memtest"
)

// benchProcess measures Dispatcher.Handle of one event whose handler runs
// steps steps, against the in-memory table (memstore) and queue fake (so the
// figures are the dispatcher's own cost plus memstore's, no I/O). The record
// is reset to RECEIVED with an empty journal (a new claim) before each
// delivery.
func benchProcess(b *testing.B, steps []string) {
	st, q := memtest.New(b, nil), &webhooktest.Queue{}
	reg := process.NewRegistry()
	process.Handle(reg, "bench.handler", followType, func(ctx context.Context, ev *process.Event[follow]) error {
		for _, s := range steps {
			if err := ev.Step(ctx, s, func(context.Context, string) error { return nil }); err != nil {
				return err
			}
		}
		return nil
	})
	d, err := New(Config{Registry: reg, Store: st, DLQ: q, Kernel: Kernel{Queue: q}})
	if err != nil {
		b.Fatal(err)
	}
	const key = "line#t1#bench"
	st.Seed(store.Record{Key: key, Status: webhook.StatusReceived})
	dv := delivery(key, "line", "follow", follow{UserID: "U1"})
	ctx := context.Background()
	b.ReportAllocs()
	claim := 0
	for b.Loop() {
		claim++
		st.Update(key, func(r *store.Record) {
			r.Status, r.Attempts, r.ClaimID, r.History = webhook.StatusReceived, 0, fmt.Sprintf("c%d", claim), nil
		})
		if res := d.Handle(ctx, dv); res.Verdict != Succeeded {
			b.Fatalf("got %v (%v), want succeeded", res.Verdict, res.Err)
		}
	}
}

// BenchmarkProcessNoSteps is one delivery of an event whose handler has no step:
// acquire and complete.
func BenchmarkProcessNoSteps(b *testing.B) { benchProcess(b, nil) }

// BenchmarkProcessTwoSteps is one delivery of an event whose handler runs two
// steps: acquire, two journal writes, complete (a first attempt reads no journal).
func BenchmarkProcessTwoSteps(b *testing.B) { benchProcess(b, []string{"create-lead", "tag-lead"}) }

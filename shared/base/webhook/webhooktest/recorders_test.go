package webhooktest_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/base/webhook/webhooktest"
)

func TestOutcomesRecordEachBatch(t *testing.T) {
	var o webhooktest.Outcomes
	ctx := context.Background()
	a, b, c := webhook.Outcome{Key: "a"}, webhook.Outcome{Key: "b"}, webhook.Outcome{Key: "c"}
	if err := o.Publish(ctx, []webhook.Outcome{a, b}); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("bus down")
	o.Fail(boom)
	if err := o.Publish(ctx, []webhook.Outcome{c}); !errors.Is(err, boom) {
		t.Errorf("after Fail: got %v, want %v", err, boom)
	}
	if got := o.Batches(); len(got) != 2 || len(got[0]) != 2 || got[1][0].Key != "c" {
		t.Errorf("batches: got %v", got)
	}
	var keys []string
	for _, e := range o.All() {
		keys = append(keys, e.Key)
	}
	if !slices.Equal(keys, []string{"a", "b", "c"}) {
		t.Errorf("all: got %v", keys)
	}
}

func TestQueueRecordsVisibilityAndDeadLetters(t *testing.T) {
	var q webhooktest.Queue
	ctx := context.Background()
	if _, ok := q.Visibility("rh"); ok {
		t.Error("a visibility before any change")
	}
	_ = q.ChangeVisibility(ctx, "rh", time.Second)
	_ = q.ChangeVisibility(ctx, "rh", 2*time.Second)
	if d, ok := q.Visibility("rh"); !ok || d != 2*time.Second {
		t.Errorf("visibility: got %v (%v), want the last, 2s", d, ok)
	}
	body := []byte("m")
	_ = q.SendDeadLetter(ctx, "k", body, "why")
	body[0] = 'x'
	if got := q.DeadLetters(); len(got) != 1 || got[0].Key != "k" || got[0].Reason != "why" || string(got[0].Body) != "m" {
		t.Errorf("dead letters: got %+v", got)
	}
}

func TestLockedBufferKeepsConcurrentWrites(t *testing.T) {
	var b webhooktest.LockedBuffer
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() { _, _ = b.Write([]byte("ab")) })
	}
	wg.Wait()
	if got := b.String(); got != strings.Repeat("ab", 8) {
		t.Errorf("got %q, want eight writes of ab", got)
	}
}

func TestOpsRecordInOrder(t *testing.T) {
	var o webhooktest.Ops[string]
	_ = o.PublishOps(context.Background(), []string{"a", "b"})
	_ = o.PublishOps(context.Background(), []string{"c"})
	if got := o.All(); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Errorf("got %v, want [a b c]", got)
	}
}

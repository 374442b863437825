package wiring

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/config/settings"
	"github.com/hookwall/hookwall/shared/engine/compensate"
	"github.com/hookwall/hookwall/shared/engine/process"
	"github.com/hookwall/hookwall/shared/engine/sweep"
	"github.com/hookwall/hookwall/shared/state/store/memstore"
)

func env(kv ...string) func(string) string {
	m := map[string]string{"TABLE_NAME": "hookwall-events", "QUEUE_URL": "http://127.0.0.1:9324/1/q",
		"DLQ_URL": "http://127.0.0.1:9324/1/dlq", "HOOKWALL_TENANTS_FILE": "tenants.json"}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

// Unset tuning variables take the engines' own defaults.
func TestDefaultsAreTheEngines(t *testing.T) {
	s, _, err := settings.LoadCompensator(env(), Defaults())
	if err != nil {
		t.Fatal(err)
	}
	sd := sweep.Defaults()
	if s.CompensationAttempts != compensate.DefaultMaxAttempts || s.SweepLimit != sd.Limit || s.ReenqueueGrace != sd.Grace ||
		s.SweepStuckAfter != sd.StuckAfter || s.SweepLag != sd.SweepLag || s.SweepMaxPassed != sd.MaxPassed {
		t.Errorf("got %+v, want the compensate and sweep defaults", s)
	}
}

type fakeSweeper struct {
	runs int
	err  error
}

func (f *fakeSweeper) Run(context.Context) (sweep.Report, error) {
	f.runs++
	return sweep.Report{Scanned: 7, Requeued: 2}, f.err
}

type noVisibility struct{}

func (noVisibility) ChangeVisibility(context.Context, string, time.Duration) error { return nil }

func newHandler(t *testing.T, sw Sweeper) *Handler {
	t.Helper()
	c, err := compensate.New(compensate.Config{Registry: process.NewRegistry(), Store: memstore.New(memstore.Config{}), Kernel: compensate.Kernel{Queue: noVisibility{}}})
	if err != nil {
		t.Fatal(err)
	}
	return New(c, sw, 0, nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
}

// The handler tells its two event sources apart by shape.
func TestHandleDispatchesByEventShape(t *testing.T) {
	sw := &fakeSweeper{}
	h := newHandler(t, sw)
	ctx := context.Background()

	sqsEvent := `{"Records":[
		{"messageId":"gone","receiptHandle":"rh1","body":"{\"key\":\"line#acme#gone\",\"provider\":\"line\",\"type\":\"follow\"}","eventSource":"aws:sqs"},
		{"messageId":"bad","receiptHandle":"rh2","body":"not an envelope","eventSource":"aws:sqs"}]}`
	out, err := h.Handle(ctx, json.RawMessage(sqsEvent))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(out)
	// A message without a record is acknowledged; a malformed one is kept.
	if want := `{"batchItemFailures":[{"itemIdentifier":"bad"}]}`; string(b) != want {
		t.Errorf("SQS: got %s, want %s", b, want)
	}
	if sw.runs != 0 {
		t.Error("an SQS batch ran the sweeper")
	}

	scheduled := `{"version":"0","id":"5c1d","detail-type":"Scheduled Event","source":"aws.events","account":"123456789012",
		"time":"2026-01-01T00:00:00Z","region":"us-east-1","resources":["arn:aws:events:us-east-1:123456789012:rule/sweep"],"detail":{}}`
	out, err = h.Handle(ctx, json.RawMessage(scheduled))
	if err != nil || sw.runs != 1 {
		t.Fatalf("schedule: got %v, %d runs; want one sweep", err, sw.runs)
	}
	if rep, ok := out.(sweep.Report); !ok || rep.Scanned != 7 || rep.Requeued != 2 {
		t.Errorf("schedule: got %#v, want the sweep's report", out)
	}

	// A failed sweep is logged and counted, not returned (no async retry).
	sw.err = errors.New("query shard 3: throttled")
	if _, err := h.Handle(ctx, json.RawMessage(scheduled)); err != nil || sw.runs != 2 {
		t.Errorf("failed sweep: got %v after %d runs, want nil after 2", err, sw.runs)
	}

	for _, raw := range []string{`{"hello":"world"}`, `[1,2]`, `{"Records":[{"eventSource":"aws:kinesis"}]}`} {
		if _, err := h.Handle(ctx, json.RawMessage(raw)); !errors.Is(err, ErrUnknownEvent) {
			t.Errorf("%s: got %v, want ErrUnknownEvent", raw, err)
		}
	}
}

func TestNewNeedsItsParts(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("New without a sweeper did not panic")
		}
	}()
	c, _ := compensate.New(compensate.Config{Registry: process.NewRegistry(), Store: memstore.New(memstore.Config{}), Kernel: compensate.Kernel{Queue: noVisibility{}}})
	New(c, nil, 0, nil, slog.Default())
}

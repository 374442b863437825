package bus

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/base/format"
	"github.com/hookwall/hookwall/shared/base/format/golden"
	"github.com/hookwall/hookwall/shared/base/release"
	"github.com/hookwall/hookwall/shared/base/webhook"
)

// An outcome event as Publish sends it matches its golden fixture
// (testdata/formats/event.v<N>.json) and carries its format version and
// release; the fixture's detail decodes into today's Detail.
func TestOutcomeEventMatchesItsGoldenFixture(t *testing.T) {
	fake, p := newFakePublisher(t)
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	ev := webhook.Outcome{Key: "line#acme#ev1", Provider: "line", Tenant: "acme", Type: "message", ReceivedAt: at, TraceID: "trace-1",
		Status: webhook.StatusDead, Attempts: 3, Compensations: 1, LastError: "gone", At: at}
	// The fake rejects the first entry of the first call: the second call carries it.
	if err := p.Publish(context.Background(), []webhook.Outcome{ev}); err != nil {
		t.Fatal(err)
	}
	detail := fake.calls[len(fake.calls)-1][0].Detail
	var d Detail
	if err := json.Unmarshal([]byte(detail), &d); err != nil {
		t.Fatal(err)
	}
	if d.FormatVersion != format.EventVersion || d.Release != release.Version {
		t.Errorf("format %d release %q, want %d %q", d.FormatVersion, d.Release, format.EventVersion, release.Version)
	}
	fields, err := golden.JSONFields([]byte(detail))
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "event", format.Event, fields, json.RawMessage(detail))

	for _, v := range []int{format.EventVersion - 1, format.EventVersion} {
		f, err := golden.Load("event", v)
		if v < format.EventVersion && err != nil {
			continue // the previous format wrote no fixture of its own (release 0.1.0)
		}
		if err != nil {
			t.Fatal(err)
		}
		var back Detail
		if err := json.Unmarshal(f.Sample, &back); err != nil || back.Key == "" || back.Status == "" {
			t.Errorf("the v%d fixture does not decode into today's Detail: %+v, %v", v, back, err)
		}
	}
}

package bus

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
)

func TestPublishOpsSendsEachOpWithItsDetailType(t *testing.T) {
	fake := &recordingBus{}
	p, err := New(Config{Client: fake, BusName: "ops", Backoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	at := time.UnixMilli(1_700_000_000_123).UTC()
	ops := []Op{
		{Type: DetailTypeCircuitOpened, Target: "forward/acme", Reason: "5 of 5 calls failed", At: at},
		{Type: DetailTypeCircuitClosed, Target: "forward/acme", At: at},
		{Type: DetailTypeControlPaused, Scope: "tenant#acme", Reason: "maintenance", At: at},
		{Type: DetailTypeControlResumed, Scope: "tenant#acme", Count: 42, At: at},
		{Type: DetailTypeAttemptExhausted, Key: "line#t1#e1", Provider: "line", Tenant: "t1", Target: "crm", Count: 5, Reason: "503", At: at},
		{Type: DetailTypeEventRecovered, Key: "line#t1#e2", Provider: "line", Tenant: "t1"},
	}
	if err := p.PublishOps(context.Background(), ops); err != nil {
		t.Fatal(err)
	}
	if len(fake.calls) != 1 || len(fake.calls[0]) != len(ops) {
		t.Fatalf("got calls %v, want one call of %d entries", len(fake.calls), len(ops))
	}
	for i, e := range fake.calls[0] {
		op := ops[i]
		if aws.ToString(e.Source) != Source || aws.ToString(e.EventBusName) != "ops" || aws.ToString(e.DetailType) != op.Type {
			t.Errorf("entry %d: got source %s bus %s detail-type %s, want %s ops %s",
				i, aws.ToString(e.Source), aws.ToString(e.EventBusName), aws.ToString(e.DetailType), Source, op.Type)
		}
		if op.At.IsZero() != (e.Time == nil) {
			t.Errorf("entry %d: got Time %v for At %v", i, e.Time, op.At)
		}
		var d OpDetail
		if err := json.Unmarshal([]byte(aws.ToString(e.Detail)), &d); err != nil {
			t.Fatal(err)
		}
		want := OpDetail{Target: op.Target, Scope: op.Scope, Key: op.Key, Provider: op.Provider, Tenant: op.Tenant,
			Reason: op.Reason, Count: op.Count, At: op.At}
		if !d.At.Equal(want.At) {
			t.Errorf("entry %d: got at %v, want %v", i, d.At, want.At)
		}
		d.At, want.At = time.Time{}, time.Time{}
		if d != want {
			t.Errorf("entry %d: got detail %+v, want %+v", i, d, want)
		}
	}
	// Empty fields are left out of the detail, so rules can match on presence.
	if got := aws.ToString(fake.calls[0][5].Detail); strings.Contains(got, "target") || strings.Contains(got, `"at"`) {
		t.Errorf("recovered detail %s carries empty fields", got)
	}
}

func TestPublishOpsRejectsAnUnknownTypeAndSendsNothing(t *testing.T) {
	fake := &recordingBus{}
	p, err := New(Config{Client: fake, BusName: "ops"})
	if err != nil {
		t.Fatal(err)
	}
	err = p.PublishOps(context.Background(), []Op{{Type: DetailTypeCircuitOpened, Target: "x"}, {Type: DetailTypeSucceeded}})
	if err == nil || !strings.Contains(err.Error(), DetailTypeSucceeded) {
		t.Errorf("got %v, want an error naming %s", err, DetailTypeSucceeded)
	}
	if len(fake.calls) != 0 {
		t.Errorf("got %d calls, want none", len(fake.calls))
	}
}

func TestNilPublisherPublishesNoOps(t *testing.T) {
	var p *Publisher
	if err := p.PublishOps(context.Background(), []Op{{Type: "anything"}}); err != nil {
		t.Errorf("got %v, want nil", err)
	}
}

func TestOpTypesAreTheDesignedDetailTypes(t *testing.T) {
	want := "hookwall.attempt.exhausted hookwall.circuit.opened hookwall.circuit.closed hookwall.event.recovered hookwall.control.paused hookwall.control.resumed"
	if got := strings.Join(opTypes, " "); got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

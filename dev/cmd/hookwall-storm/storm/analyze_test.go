package storm

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/protocol/provider/line"
	"github.com/hookwall/hookwall/shared/protocol/provider/standard"
	"github.com/hookwall/hookwall/shared/protocol/provider/wecom"
)

func TestDoubled(t *testing.T) {
	cases := []struct {
		name    string
		effects map[string]int
		want    bool
	}{
		{"none", nil, false},
		{"once", map[string]int{"k1": 1}, false},
		{"twice under one key", map[string]int{"k1": 2}, true},
		{"under two keys", map[string]int{"k1": 1, "k2": 1}, true},
	}
	if Doubled(map[string]int{"s1": 1, "s2": 1, "s3": 1}, 3) {
		t.Error("three steps, three keys: doubled")
	}
	if !Doubled(map[string]int{"s1": 1, "s2": 2, "s3": 1}, 3) {
		t.Error("a step applied twice: not doubled")
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Doubled(c.effects, 1); got != c.want {
				t.Errorf("Doubled(%v) = %v, want %v", c.effects, got, c.want)
			}
		})
	}
}

func TestLost(t *testing.T) {
	cases := []struct {
		name    string
		effects map[string]int
		rec     *RecordFacts
		want    bool
	}{
		{"effect", map[string]int{"k": 1}, &RecordFacts{Status: webhook.StatusSucceeded}, false},
		{"no record", nil, nil, true},
		{"succeeded without effect", nil, &RecordFacts{Status: webhook.StatusSucceeded}, true},
		{"stuck received", nil, &RecordFacts{Status: webhook.StatusReceived}, true},
		{"failed, not terminal", nil, &RecordFacts{Status: webhook.StatusFailed, LastError: "422"}, true},
		{"compensated with reason", nil, &RecordFacts{Status: webhook.StatusCompensated, LastError: "422"}, false},
		{"dead with reason", nil, &RecordFacts{Status: webhook.StatusDead, LastError: "gone"}, false},
		{"dead without reason", nil, &RecordFacts{Status: webhook.StatusDead}, true},
	}
	if !Lost(map[string]int{"s1": 1}, &RecordFacts{Status: webhook.StatusSucceeded}, 3) {
		t.Error("one effect of three steps: not lost")
	}
	if Lost(nil, &RecordFacts{Status: webhook.StatusSucceeded}, 0) || !Lost(nil, &RecordFacts{Status: webhook.StatusProcessing}, 0) {
		t.Error("no steps: lost unless SUCCEEDED")
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Lost(c.effects, c.rec, 1); got != c.want {
				t.Errorf("Lost = %v, want %v", got, c.want)
			}
		})
	}
}

func TestRescuers(t *testing.T) {
	undo := Attempt{Status: 503, Track: Track{Failed: 1, Undos: 1}}
	inflight := Attempt{Status: 503}
	takeover := Attempt{Status: 200, Track: Track{TookOver: true, Sent: 1}}
	manual := Attempt{Status: 200, Kind: KindManual}
	hist := func(h ...webhook.HistoryEntry) *RecordFacts {
		return &RecordFacts{Status: webhook.StatusSucceeded, History: h}
	}
	cases := []struct {
		name     string
		attempts []Attempt
		rec      *RecordFacts
		want     []string
	}{
		{"healthy", []Attempt{{Status: 200, Track: Track{Claimed: true}}}, hist(webhook.HistoryEntry{To: webhook.StatusReceived},
			webhook.HistoryEntry{From: webhook.StatusReceived, To: webhook.StatusProcessing}), nil},
		{"in-flight 503 is no rescue", []Attempt{inflight, {Status: 200}}, nil, nil},
		{"no answer", []Attempt{{Status: 0}, {Status: 200}}, nil, []string{RescueReceiverUndo}},
		{"undo", []Attempt{undo, {Status: 200}}, nil, []string{RescueReceiverUndo}},
		{"take-over", []Attempt{takeover}, nil, []string{RescueTakeOver}},
		{"manual", []Attempt{manual}, nil, []string{RescueManual}},
		{"lease expiry", nil, hist(webhook.HistoryEntry{From: webhook.StatusProcessing, To: webhook.StatusProcessing, Function: "processor"}), []string{RescueLeaseExpiry}},
		{"retry", nil, hist(webhook.HistoryEntry{From: webhook.StatusProcessing, To: webhook.StatusRetry, Function: "processor"}), []string{RescueRetry}},
		{"dlq", nil, hist(webhook.HistoryEntry{From: webhook.StatusProcessing, To: webhook.StatusFailed},
			webhook.HistoryEntry{From: webhook.StatusFailed, To: webhook.StatusCompensating, Function: "compensator"}), []string{RescueDLQ}},
		{"sweeper", nil, hist(webhook.HistoryEntry{From: webhook.StatusReceived, To: webhook.StatusReceived, Function: "sweeper"}), []string{RescueSweeper}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Rescuers(c.attempts, c.rec)
			if !slices.Equal(got, c.want) && !(len(got) == 0 && len(c.want) == 0) {
				t.Errorf("Rescuers = %v, want %v", got, c.want)
			}
		})
	}
}

// synthetic builds facts of three items: a healthy one, a duplicated one
// whose first delivery failed, and a LINE item with two events.
func synthetic() Facts {
	t0 := time.Unix(1000, 0)
	items := []Item{
		{Index: 0, Provider: standard.Name, Keys: []string{"a"}, Copies: 1},
		{Index: 1, Provider: wecom.Name, Keys: []string{"b"}, Copies: 2},
		{Index: 2, Provider: line.Name, Keys: []string{"c1", "c2"}, Copies: 1},
	}
	ok := func(k string) *RecordFacts { return &RecordFacts{Status: webhook.StatusSucceeded} }
	return Facts{
		Items: items,
		Attempts: []Attempt{
			{Item: 0, Kind: KindFirst, Status: 200, Latency: 10 * time.Millisecond, Track: Track{Claimed: true, Calls: map[string]int{"PutItem": 1, "SendMessageBatch": 1}}},
			{Item: 1, Kind: KindFirst, Status: 503, Latency: 20 * time.Millisecond, Track: Track{Failed: 1, Undos: 1, Calls: map[string]int{"PutItem": 1, "DeleteItem": 1}}},
			{Item: 1, Kind: KindRetry, Status: 200, Latency: 30 * time.Millisecond, Track: Track{Claimed: true, Calls: map[string]int{"PutItem": 1, "SendMessageBatch": 1}}},
			{Item: 1, Kind: KindFirst, Status: 200, Latency: 40 * time.Millisecond, Track: Track{Calls: map[string]int{"PutItem": 1}}},
			{Item: 2, Kind: KindFirst, Status: 200, Latency: 50 * time.Millisecond, Track: Track{Claimed: true, Calls: map[string]int{"PutItem": 2, "SendMessageBatch": 1}}},
		},
		Deliveries: []Delivery{
			{Item: 0, AcceptedAt: t0}, {Item: 1, AcceptedAt: t0.Add(time.Second)}, {Item: 1, AcceptedAt: t0.Add(500 * time.Millisecond)}, {Item: 2, AcceptedAt: t0},
		},
		Records:     map[string]*RecordFacts{"a": ok("a"), "b": ok("b"), "c1": ok("c1"), "c2": ok("c2")},
		Effects:     map[string]map[string]int{"a": {"i-a": 1}, "b": {"i-b": 1}, "c1": {"i-c1": 1}, "c2": {"i-c2": 1}},
		FirstEffect: map[string]time.Time{"a": t0.Add(100 * time.Millisecond), "b": t0.Add(700 * time.Millisecond), "c1": t0.Add(300 * time.Millisecond), "c2": t0.Add(300 * time.Millisecond)},
		Steps:       1,
	}
}

func TestAnalyzeHealthy(t *testing.T) {
	o := Analyze(synthetic())
	if o.UniqueEvents != 4 || o.Accepted != 4 || o.WithEffect != 4 || o.Lost != 0 || o.Doubled != 0 || o.NeverAccepted != 0 {
		t.Fatalf("got %+v", o)
	}
	if o.Rescued[RescueReceiverUndo] != 1 || o.NeededRescue != 1 {
		t.Errorf("rescued %v (needed %d), want the duplicated item's undo + retry only", o.Rescued, o.NeededRescue)
	}
	// The e2e latency of b counts from its first acceptance (t0+0.5 s).
	want := []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 300 * time.Millisecond, 300 * time.Millisecond}
	got := slices.Clone(o.EndToEnd)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("end to end %v, want %v", got, want)
	}
}

func TestAnalyzeFindsLostDoubledAndNeverAccepted(t *testing.T) {
	f := synthetic()
	delete(f.Effects, "c2")                           // accepted, SUCCEEDED, no effect: lost
	f.Effects["a"] = map[string]int{"i-a": 1, "x": 1} // two idempotency keys: doubled
	f.Deliveries = f.Deliveries[:3]                   // item 2 never accepted
	f.Effects["b"] = map[string]int{"i-b": 2}         // applied twice under one key: doubled
	o := Analyze(f)
	if o.Doubled != 2 || !slices.Contains(o.DoubledKeys, "a") || !slices.Contains(o.DoubledKeys, "b") {
		t.Errorf("doubled %d %v, want a and b", o.Doubled, o.DoubledKeys)
	}
	if o.NeverAccepted != 2 || o.Accepted != 2 {
		t.Errorf("never accepted %d, accepted %d; want 2 and 2", o.NeverAccepted, o.Accepted)
	}
	if o.Lost != 0 {
		t.Errorf("lost %d: a never-accepted event is counted there, not as lost", o.Lost)
	}
	f.Deliveries = synthetic().Deliveries
	o = Analyze(f)
	if o.Lost != 1 || o.LostKeys[0] != "c2" {
		t.Errorf("lost %d %v, want c2", o.Lost, o.LostKeys)
	}
	f.Records["c2"] = &RecordFacts{Status: webhook.StatusProcessing}
	if o := Analyze(f); o.Lost != 1 || o.Unsettled != 1 {
		t.Errorf("a PROCESSING record without effect: lost %d, unsettled %d; want 1 and 1", o.Lost, o.Unsettled)
	}
	if o.SameKeyRepeats != 1 {
		t.Errorf("same-key repeats %d, want 1", o.SameKeyRepeats)
	}
}

func TestBuildReportAddsUp(t *testing.T) {
	o := Defaults()
	f := synthetic()
	calls := map[string]map[string]int{
		"receiver":  {"PutItem": 5, "DeleteItem": 1, "SendMessageBatch": 3},
		"processor": {"UpdateItem": 8, "TransactWriteItems": 4},
	}
	r := Build(o, f, calls, nil, 2*time.Second, time.Second)
	if !r.OK || len(r.Failures()) != 0 {
		t.Fatalf("report not OK: %v", r.Failures())
	}
	if bad := r.CheckSums(); len(bad) != 0 {
		t.Errorf("counts do not add up: %v", bad)
	}
	if r.Delivers != 4 || r.DuplicateDeliveries != 1 || r.HTTPRequests != 5 || r.PlatformRetries != 1 {
		t.Errorf("deliveries %d dup %d requests %d retries %d", r.Delivers, r.DuplicateDeliveries, r.HTTPRequests, r.PlatformRetries)
	}
	if r.DeliveriesPerS != 2 || r.RequestsPerS != 2.5 {
		t.Errorf("rates %v %v, want 2 and 2.5", r.DeliveriesPerS, r.RequestsPerS)
	}
	// 4 unique events: DynamoDB 5+1+8+4 = 18 → 4.5; SQS 3 → 0.75; processor 12 → 3.
	if r.Calls.DynamoDBPerUnique != 4.5 || r.Calls.SQSPerUnique != 0.75 || r.Calls.ProcessorPerUnique != 3 {
		t.Errorf("calls %+v", r.Calls)
	}
	// First deliveries (claimed): 2, 2, 3 calls → 7/3; others: 2 and 1 → 1.5.
	if r.Calls.ReceiverPerFirst != 2.333 || r.Calls.ReceiverPerDuplicate != 1.5 {
		t.Errorf("receiver per first %v, per duplicate %v", r.Calls.ReceiverPerFirst, r.Calls.ReceiverPerDuplicate)
	}
	if r.ReceiverLatency.P50 != 30 || r.ReceiverLatency.P99 != 50 {
		t.Errorf("latency %+v", r.ReceiverLatency)
	}
	var sb strings.Builder
	r.Text(&sb)
	if !strings.Contains(sb.String(), "lost 0, doubled 0, never accepted 0") {
		t.Errorf("text report:\n%s", sb.String())
	}
	// A lost event turns the report red.
	delete(f.Effects, "a")
	if r := Build(o, f, calls, nil, time.Second, time.Second); r.OK {
		t.Error("report OK with a lost event")
	}
}

func TestPercentiles(t *testing.T) {
	var d []time.Duration
	for i := 100; i >= 1; i-- {
		d = append(d, time.Duration(i)*time.Millisecond)
	}
	p := PercentilesOf(d)
	if p.Count != 100 || p.P50 != 50 || p.P95 != 95 || p.P99 != 99 || p.Max != 100 || p.Mean != 50.5 {
		t.Errorf("got %+v", p)
	}
	if p := PercentilesOf(nil); p.Count != 0 {
		t.Errorf("empty: %+v", p)
	}
}

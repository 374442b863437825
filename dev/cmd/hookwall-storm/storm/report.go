package storm

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
)

// Report is the one report of a storm (text with [Report.Text], JSON as is).
type Report struct {
	Label    string         `json:"label"`
	Date     string         `json:"date"`
	Config   map[string]any `json:"config"`
	Items    int            `json:"items"`
	Unique   int            `json:"unique_events"`
	Delivers int            `json:"deliveries"`
	// DuplicateDeliveries are the platform's extra copies.
	DuplicateDeliveries int            `json:"duplicate_deliveries"`
	HTTPRequests        int            `json:"http_requests"`
	PlatformRetries     int            `json:"platform_retries"`
	ManualRedeliveries  int            `json:"manual_redeliveries"`
	Answers             map[string]int `json:"answers"`
	SendWallS           float64        `json:"send_wall_s"`
	SettleWallS         float64        `json:"settle_wall_s"`
	DeliveriesPerS      float64        `json:"deliveries_per_s"`
	RequestsPerS        float64        `json:"http_requests_per_s"`
	// ProcessedPerS is unique events over the span from the first effect
	// to the last: the processor's throughput.
	ProcessedPerS   float64        `json:"processed_events_per_s"`
	ReceiverLatency Percentiles    `json:"receiver_latency"`
	EndToEnd        Percentiles    `json:"end_to_end_latency"`
	Calls           CallsReport    `json:"calls"`
	CPU             CPUReport      `json:"cpu"`
	Outcome         Outcome        `json:"outcome"`
	Target          TargetStats    `json:"target"`
	Processor       ProcessorStats `json:"processor"`
	Faults          []string       `json:"faults,omitempty"`
	// Outage is the outage scenarios' part (target down, scope paused).
	Outage *OutageReport `json:"outage,omitempty"`
	// Breaker is the breaker scenarios' part (flaky target, poison events).
	Breaker *BreakerReport `json:"breaker,omitempty"`
	// Tenants are the storm's tenants' parts, by name (a storm of more
	// than one tenant: -tenants, the noisy-tenant storm).
	Tenants map[string]*TenantReport `json:"tenants,omitempty"`
	// Groups is the check of every received message's group.
	Groups *GroupReport `json:"message_groups,omitempty"`
	// QueueDepthMax is the most messages (visible and in flight) seen on
	// the main queue, sampled every 2 s: the processing backlog.
	QueueDepthMax int `json:"queue_depth_max"`
	// Load is the machine's 1-minute load average over the storm.
	Load *LoadReport `json:"load_average,omitempty"`
	SVG  string      `json:"svg,omitempty"`
	OK   bool        `json:"ok"`

	// records are the event records read at the end, by key (for a
	// scenario's Inspect).
	records map[string]*RecordFacts
}

// LoadReport is the machine's 1-minute load average (/proc/loadavg)
// sampled every 2 s over a storm.
type LoadReport struct {
	Start float64 `json:"start"`
	Mean  float64 `json:"mean"`
	Max   float64 `json:"max"`
	End   float64 `json:"end"`
}

// CallsReport are the AWS calls of the functions (SDK middleware).
type CallsReport struct {
	// ByRole is role → operation → calls.
	ByRole map[string]map[string]int `json:"by_role"`
	// Errors are the failed calls by role.
	Errors map[string]int `json:"errors_by_role"`
	// PerUnique is all the functions' calls per unique event, DynamoDB and SQS.
	DynamoDBPerUnique float64 `json:"dynamodb_per_unique_event"`
	SQSPerUnique      float64 `json:"sqs_per_unique_event"`
	// ReceiverPerFirst and ReceiverPerDuplicate are the receiver's calls
	// per first delivery (the one that claimed) and per duplicate delivery.
	ReceiverPerFirst     float64 `json:"receiver_calls_per_first_delivery"`
	ReceiverPerDuplicate float64 `json:"receiver_calls_per_duplicate_delivery"`
	// ProcessorPerUnique are the processor's calls per unique event
	// (the pollers' ReceiveMessage/DeleteMessageBatch are EventSourcePerUnique).
	ProcessorPerUnique   float64 `json:"processor_calls_per_unique_event"`
	EventSourcePerUnique float64 `json:"event_source_calls_per_unique_event"`
}

// CPUReport is CPU time over the storm.
type CPUReport struct {
	// HookwallMs is this process (receiver, processor, compensator, and
	// the generator and target, which share it).
	HookwallMs          float64  `json:"hookwall_process_ms"`
	HookwallPerDelivery float64  `json:"hookwall_ms_per_delivery"`
	DynamoDBLocalMs     *float64 `json:"dynamodb_local_ms"`
	DynamoDBPerDelivery *float64 `json:"dynamodb_local_ms_per_delivery"`
}

// ProcessorStats are the processor's kills and restarts (chaos).
type ProcessorStats struct {
	Kills    int `json:"kills"`
	Restarts int `json:"restarts"`
}

// Failures lists what makes the storm fail: lost, doubled or never
// accepted, and for an outage scenario what [AnalyzeOutage] found.
func (r *Report) Failures() []string {
	var f []string
	if r.Outage != nil {
		f = append(f, r.Outage.Failures...)
	}
	if r.Breaker != nil {
		f = append(f, r.Breaker.Failures...)
	}
	if r.Groups != nil && r.Groups.Mismatched > 0 {
		f = append(f, fmt.Sprintf("message groups mismatched=%d %v", r.Groups.Mismatched, r.Groups.Samples))
	}
	if r.Outcome.Lost > 0 {
		f = append(f, fmt.Sprintf("lost=%d %v", r.Outcome.Lost, r.Outcome.LostKeys))
	}
	if r.Outcome.Doubled > 0 {
		f = append(f, fmt.Sprintf("doubled=%d %v", r.Outcome.Doubled, r.Outcome.DoubledKeys))
	}
	if r.Outcome.NeverAccepted > 0 {
		f = append(f, fmt.Sprintf("never-accepted=%d %v", r.Outcome.NeverAccepted, r.Outcome.NeverKeys))
	}
	return f
}

// CheckSums reports the counts that must add up and do not: every unique
// event is accepted or not; every accepted one has an effect, failed with a
// reason, or is lost; every delivery is the first of its item or a duplicate.
func (r *Report) CheckSums() []string {
	var bad []string
	o := r.Outcome
	if o.Accepted+o.NeverAccepted != o.UniqueEvents {
		bad = append(bad, fmt.Sprintf("accepted %d + never accepted %d != unique %d", o.Accepted, o.NeverAccepted, o.UniqueEvents))
	}
	withEffectAccepted := o.Accepted - o.Lost - o.FailedReason
	if withEffectAccepted < 0 || withEffectAccepted > o.WithEffect {
		bad = append(bad, fmt.Sprintf("accepted %d - lost %d - failed %d exceeds events with effect %d", o.Accepted, o.Lost, o.FailedReason, o.WithEffect))
	}
	if r.Items+r.DuplicateDeliveries != r.Delivers {
		bad = append(bad, fmt.Sprintf("items %d + duplicates %d != deliveries %d", r.Items, r.DuplicateDeliveries, r.Delivers))
	}
	n := 0
	for _, v := range r.Answers {
		n += v
	}
	if n != r.HTTPRequests {
		bad = append(bad, fmt.Sprintf("answers %d != http requests %d", n, r.HTTPRequests))
	}
	st := 0
	for _, v := range o.Statuses {
		st += v
	}
	if st != o.UniqueEvents {
		bad = append(bad, fmt.Sprintf("statuses %d != unique %d", st, o.UniqueEvents))
	}
	return bad
}

// Text writes the report for people.
func (r *Report) Text(w io.Writer) {
	o := r.Outcome
	p := func(format string, a ...any) { fmt.Fprintf(w, format+"\n", a...) }
	verdict := "OK"
	if !r.OK {
		verdict = "FAILED: " + strings.Join(r.Failures(), "; ")
	}
	p("== hookwall-storm %s: %s", r.Label, verdict)
	if len(r.Faults) > 0 {
		p("faults:            %s", strings.Join(r.Faults, "; "))
	}
	p("workload:          %d items, %d unique events, %d deliveries (%d duplicates), %d HTTP requests (%d platform retries, %d manual redeliveries)",
		r.Items, r.Unique, r.Delivers, r.DuplicateDeliveries, r.HTTPRequests, r.PlatformRetries, r.ManualRedeliveries)
	p("answers:           %s", fmtCounts(r.Answers))
	p("throughput:        %.1f deliveries/s, %.1f requests/s (send %.1f s, settle %.1f s); processor %.1f events/s",
		r.DeliveriesPerS, r.RequestsPerS, r.SendWallS, r.SettleWallS, r.ProcessedPerS)
	p("receiver latency:  p50 %.1f ms, p95 %.1f ms, p99 %.1f ms, max %.1f ms", r.ReceiverLatency.P50, r.ReceiverLatency.P95, r.ReceiverLatency.P99, r.ReceiverLatency.Max)
	p("end to end:        p50 %.1f ms, p99 %.1f ms (accept → effect, %d events)", r.EndToEnd.P50, r.EndToEnd.P99, r.EndToEnd.Count)
	p("AWS calls:         %.2f DynamoDB + %.2f SQS per unique event (functions); receiver %.2f per first delivery, %.2f per duplicate; processor %.2f per unique event; event source (pollers) %.2f per unique event",
		r.Calls.DynamoDBPerUnique, r.Calls.SQSPerUnique, r.Calls.ReceiverPerFirst, r.Calls.ReceiverPerDuplicate, r.Calls.ProcessorPerUnique, r.Calls.EventSourcePerUnique)
	for _, role := range sortedKeys(r.Calls.ByRole) {
		p("  %-16s %s (errors %d)", role+":", fmtCounts(r.Calls.ByRole[role]), r.Calls.Errors[role])
	}
	ddb := "n/a"
	if r.CPU.DynamoDBPerDelivery != nil {
		ddb = fmt.Sprintf("%.3f ms/delivery (%.0f ms)", *r.CPU.DynamoDBPerDelivery, *r.CPU.DynamoDBLocalMs)
	}
	p("CPU:               Hookwall process %.3f ms/delivery (%.0f ms); DynamoDB Local %s", r.CPU.HookwallPerDelivery, r.CPU.HookwallMs, ddb)
	p("records:           %s", fmtCounts(o.Statuses))
	p("outcome:           lost %d, doubled %d, never accepted %d; with effect %d, failed with a reason %d; not terminal at the end %d",
		o.Lost, o.Doubled, o.NeverAccepted, o.WithEffect, o.FailedReason, o.Unsettled)
	p("dead letters:      DLQ %d, compensated %d, dead %d", o.DLQ, o.Compensated, o.Dead)
	p("rescued:           %d events needed rescue: %s (in-flight 503 answers: %d)", o.NeededRescue, fmtCounts(o.Rescued), o.InFlight503)
	p("target:            %d requests, %d injected 5xx, %d timeouts, %d slow, %d 4xx, %d absorbed replays (same idempotency key)",
		r.Target.Requests, r.Target.Failed5xx, r.Target.Timeouts, r.Target.Slow, r.Target.Rejected4xx, r.Target.AbsorbedReplays)
	if u := r.Outage; u != nil {
		p("outage:            %s for %.1f s (retry budget %.1f s); %d calls to the target during it, %d after the first %d (probes) (allowed %d: breaker minimum %d + one probe per %g s), at s %v",
			u.Kind, u.OutageS, u.RetryBudgetS, u.CallsDuring, u.Probes, u.MinCalls, u.Allowed, u.MinCalls, u.ProbeIntervalS, u.CallOffsetsS)
		p("drain releases:    %d HELD→RETRY after the return (%d during the outage): at most %d in a calendar second; bucket peak %.1f (limit %g/s, burst %g)",
			u.Releases, u.ReleasesDuringOutage, u.ReleaseMaxPerSecond, u.ReleaseBucketPeak, u.Rate, u.Burst)
		p("drain calls:       %d calls, the first %.1f s after the return, over %.1f s: mean %.1f/s, at most %d in a calendar second, %d in any 1 s; bucket peak %.1f (allowed %g with the pipeline); release → call p50 %.0f ms, p99 %.0f ms, max %.0f ms",
			u.DrainCalls, u.FirstCallAfterS, u.DrainS, u.DrainMeanPerS, u.MaxPerSecond, u.MaxIn1s, u.BucketPeak, u.CallsAllowedPeak,
			u.ReleaseToCall.P50, u.ReleaseToCall.P99, u.ReleaseToCall.Max)
		p("  per second:      %v", u.PerSecond)
		for _, b := range u.BadSamples {
			p("  not SUCCEEDED:   %s", b)
		}
	}
	if b := r.Breaker; b != nil {
		p("breaker (%s):", b.Kind)
		for _, k := range sortedKeys(b.Figures) {
			p("  %-24s %v", k+":", b.Figures[k])
		}
	}
	if g := r.Groups; g != nil {
		p("message groups:    %d messages received (%d receives) on the queues, %d with a group that is not their tenant's; by group: %s",
			g.Messages, g.Receives, g.Mismatched, fmtCounts(g.ByGroup))
	}
	if r.QueueDepthMax > 0 || r.Load != nil {
		load := "n/a"
		if l := r.Load; l != nil {
			load = fmt.Sprintf("%.2f at the start, mean %.2f, max %.2f, %.2f at the end", l.Start, l.Mean, l.Max, l.End)
		}
		p("backlog, load:     queue depth at most %d; load average (1 min) %s", r.QueueDepthMax, load)
	}
	for _, name := range sortedKeys(r.Tenants) {
		t := r.Tenants[name]
		p("  tenant %-10s %d items, %d events, %d processed (lost %d, doubled %d); end to end p50 %.1f ms, p99 %.1f ms (queue wait p50 %.1f ms, p99 %.1f ms); receiver p99 %.1f ms",
			name+":", t.Items, t.Events, t.Processed, t.Lost, t.Doubled, t.EndToEnd.P50, t.EndToEnd.P99, t.QueueWait.P50, t.QueueWait.P99, t.ReceiverLatency.P99)
	}
	if r.Processor.Kills > 0 {
		p("processor:         killed %d times, restarted %d times", r.Processor.Kills, r.Processor.Restarts)
	}
	if bad := r.CheckSums(); len(bad) > 0 {
		p("counts:            DO NOT ADD UP: %s", strings.Join(bad, "; "))
	}
}

func fmtCounts(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	var parts []string
	for _, k := range sortedKeys(m) {
		parts = append(parts, fmt.Sprintf("%s=%d", k, m[k]))
	}
	return strings.Join(parts, " ")
}

func sortedKeys[V any](m map[string]V) []string {
	k := make([]string, 0, len(m))
	for x := range m {
		k = append(k, x)
	}
	sort.Strings(k)
	return k
}

func round(x float64, d int) float64 {
	p := math.Pow(10, float64(d))
	return math.Round(x*p) / p
}

package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"math"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/hookwall/hookwall/dev/internal/cpuclock"
	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/engine/intake"
	"github.com/hookwall/hookwall/shared/protocol/provider/line"
)

// shuffled is bench.mjs's shuffled mode: n unique events, duplicated and
// shuffled (seed), delivered by c workers. Its stages, in order: the
// signed requests (before the window), the measured window, the outcomes,
// the figures (deliveries, calls, CPU) and the table check.
func (e *env) shuffled(ctx context.Context, label string, n, c int, seed uint32, o options, skipVerify bool) (map[string]any, error) {
	order, dist := workload(n, seed, o.dup2, o.dup3)
	prefix := label + "-" + strings.ToLower(rand.Text()[:8])
	reqs, err := e.signedRequests(prefix, n)
	if err != nil {
		return nil, err
	}
	recs, w := e.deliverAll(ctx, reqs, order, c)
	oc := classify(recs)
	out := deliveryFigures(oc, recs, n, w.wall)
	out["workload"] = map[string]any{"unique_events": n, "concurrency": c, "seed": seed, "distribution": dist, "order": "shuffled (seeded, bench.mjs's mulberry32 + Fisher-Yates)"}
	out["dynamodb_calls"] = callFigures(oc, w, n)
	out["cpu"] = w.cpuFigures(len(order))
	if !skipVerify {
		added, err := e.countRecords(ctx, webhook.Key(line.Name, e.tenant, prefix+"-"))
		if err != nil {
			return nil, fmt.Errorf("table check: %w", err)
		}
		out["table_check"] = map[string]any{"records_added": added, "expected": n, "ok": added == n}
	}
	return out, nil
}

// signedRequests are n LINE deliveries (events prefix-000000, ...) as API
// Gateway requests: the platform's work, built before the window.
func (e *env) signedRequests(prefix string, n int) ([]events.APIGatewayV2HTTPRequest, error) {
	now := time.Now().UnixMilli()
	reqs := make([]events.APIGatewayV2HTTPRequest, n)
	for i := range reqs {
		sreq, err := e.lineEvent(fmt.Sprintf("%s-%06d", prefix, i), now)
		if err != nil {
			return nil, err
		}
		headers := make(map[string]string, len(sreq.Header))
		for k := range sreq.Header {
			headers[strings.ToLower(k)] = sreq.Header.Get(k)
		}
		reqs[i] = events.APIGatewayV2HTTPRequest{
			Version: "2.0", RouteKey: "POST " + intake.Route, RawPath: sreq.Path(),
			Headers:        headers,
			PathParameters: map[string]string{"provider": sreq.Provider, "tenant": e.tenant},
			Body:           string(sreq.Body),
		}
		reqs[i].RequestContext.HTTP.Method = "POST"
		reqs[i].RequestContext.HTTP.Path = reqs[i].RawPath
	}
	return reqs, nil
}

// window is what the measured window took: its wall time, the clocks
// before and after it, and the calls counted in it.
type window struct {
	wall             float64 // seconds
	load0, load1     []float64
	cpuMs            float64
	ddb0, ddb1       float64
	ddbOK0, ddbOK1   bool
	busy0, busy1     float64
	busyOK0, busyOK1 bool
	calls, attempts  map[string]int
	outcomesAll      map[string]int
	unattrib         int
}

// deliverAll delivers reqs in order's order with c workers, in the
// measured window, and returns each delivery's record and the window.
func (e *env) deliverAll(ctx context.Context, reqs []events.APIGatewayV2HTTPRequest, order []int, c int) ([]*delivery, window) {
	var w window
	recs := make([]*delivery, len(order))
	e.counter.reset()
	w.load0 = cpuclock.LoadAverages()
	cpu0 := cpuclock.Self()
	w.ddb0, w.ddbOK0 = cpuclock.Proc(e.ddbPid)
	w.busy0, w.busyOK0 = cpuclock.MachineBusy()
	t0 := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	var seq atomic.Int64
	for range min(c, len(order)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(order) {
					return
				}
				d := &delivery{event: order[i], calls: map[string]int{}, outcomes: map[string]int{}}
				req := reqs[order[i]]
				req.RequestContext.RequestID = "peer-" + strconv.FormatInt(seq.Add(1), 10)
				s := time.Now()
				resp, _ := e.handler.HandleAPIGateway(context.WithValue(ctx, ctxKey{}, d), req)
				d.latencyMs = float64(time.Since(s).Nanoseconds()) / 1e6
				d.status = resp.StatusCode
				recs[i] = d
			}
		}()
	}
	wg.Wait()
	w.wall = time.Since(t0).Seconds()
	w.busy1, w.busyOK1 = cpuclock.MachineBusy()
	w.cpuMs = cpuclock.Self() - cpu0
	w.ddb1, w.ddbOK1 = cpuclock.Proc(e.ddbPid)
	w.load1 = cpuclock.LoadAverages()
	e.counter.mu.Lock()
	w.calls, w.attempts, w.outcomesAll, w.unattrib = e.counter.calls, e.counter.attempts, e.counter.outcomes, e.counter.unattrib
	e.counter.mu.Unlock()
	return recs, w
}

// outcomes are the deliveries by outcome, named after the peer's where they
// mean the same thing, and the messages sent per event.
type outcomes struct {
	byOutcome    map[string][]*delivery
	sentPerEvent map[int]int
	executed     []*delivery // the first deliveries: claimed and enqueued
	dups         []*delivery // every duplicate_* outcome
}

// classify sorts the deliveries by outcome.
func classify(recs []*delivery) outcomes {
	oc := outcomes{byOutcome: map[string][]*delivery{}, sentPerEvent: map[int]int{}}
	for _, d := range recs {
		var k string
		switch {
		case d.status == 200 && d.claimed:
			k = "executed" // claimed and enqueued: the first delivery
		case d.status == 200 && d.sent > 0:
			k = "duplicate_reenqueued_past_grace" // a RECEIVED record past the grace: taken over and sent again
		case d.status == 200:
			k = "duplicate_acknowledged" // 200, nothing written
		case d.status == 503 && !d.claimed:
			k = "duplicate_in_flight_503" // RECEIVED inside the grace: the platform retries
		default:
			k = fmt.Sprintf("error:%d", d.status)
		}
		oc.byOutcome[k] = append(oc.byOutcome[k], d)
		oc.sentPerEvent[d.event] += d.sent
	}
	oc.executed = oc.byOutcome["executed"]
	for k, l := range oc.byOutcome {
		if strings.HasPrefix(k, "duplicate_") {
			oc.dups = append(oc.dups, l...)
		}
	}
	return oc
}

// deliveryFigures are the report's figures of the deliveries: counts by
// outcome, messages per event, errors, throughput and latency.
func deliveryFigures(oc outcomes, recs []*delivery, n int, wall float64) map[string]any {
	byOutcome, executed, dups := oc.byOutcome, oc.executed, oc.dups
	deliveries := len(recs)
	errorsN := deliveries - len(executed) - len(dups)
	var errSamples []map[string]any
	for k, l := range byOutcome {
		if strings.HasPrefix(k, "error") && len(errSamples) < 3 {
			errSamples = append(errSamples, map[string]any{"outcome": k, "event": l[0].event, "calls": l[0].outcomes})
		}
	}
	without, multi, maxPer := 0, 0, 0
	for i := 0; i < n; i++ {
		v := oc.sentPerEvent[i]
		if v == 0 {
			without++
		}
		if v > 1 {
			multi++
		}
		maxPer = max(maxPer, v)
	}
	executedPerEvent := map[int]int{}
	for _, d := range executed {
		executedPerEvent[d.event]++
	}
	claimedTwice := 0
	for _, v := range executedPerEvent {
		if v > 1 {
			claimedTwice++
		}
	}
	byKind := map[string]any{}
	for k, l := range byOutcome {
		byKind[k] = map[string]any{"count": len(l), "latency_ms": percentiles(lat(l)), "calls_per_delivery": callsPer(l)}
	}
	return map[string]any{
		"total_deliveries":                  deliveries,
		"unique_events":                     n,
		"duplicate_deliveries":              deliveries - n,
		"handler_side_effects":              len(executed),
		"side_effects_equal_unique_events":  len(executed) == n,
		"events_claimed_more_than_once":     claimedTwice,
		"messages_enqueued":                 sumMap(oc.sentPerEvent),
		"events_without_a_message":          without,
		"events_with_more_than_one_message": multi,
		"max_messages_for_one_event":        maxPer,
		"duplicates_suppressed":             len(dups) - len(byOutcome["duplicate_reenqueued_past_grace"]),
		"duplicates_suppressed_by_kind":     map[string]int{"acknowledged_200": len(byOutcome["duplicate_acknowledged"]), "in_flight_503": len(byOutcome["duplicate_in_flight_503"]), "reenqueued_past_grace_200": len(byOutcome["duplicate_reenqueued_past_grace"])},
		"errors":                            errorsN,
		"error_samples":                     errSamples,
		"wall_s":                            r3(wall),
		"deliveries_per_s":                  r1(float64(deliveries) / wall),
		"unique_events_per_s":               r1(float64(n) / wall),
		"latency_ms":                        percentiles(lat(recs)),
		"by_outcome":                        byKind,
		"note_side_effects":                 "handler_side_effects = deliveries that claimed the event (the claim created the record) and enqueued it: the receiver's one effect per event",
	}
}

// callFigures are the report's figures of the DynamoDB and SQS calls of the
// window: totals, per unique event, per first and per duplicate delivery.
func callFigures(oc outcomes, w window, n int) map[string]any {
	total := map[string]int{}
	all, ddbAll, sqsAll := 0, 0, 0
	for op, v := range w.calls {
		total[op] = v
		all += v
		if isSQS(op) {
			sqsAll += v
		} else {
			ddbAll += v
		}
	}
	total["all"] = all
	perUnique := map[string]float64{}
	for op, v := range total {
		perUnique[op] = r4(float64(v) / float64(n))
	}
	httpAttempts := 0
	for _, v := range w.attempts {
		httpAttempts += v
	}
	return map[string]any{
		"total":                            total,
		"all_in_per_unique_event":          perUnique,
		"dynamodb_all_in_per_unique_event": r4(float64(ddbAll) / float64(n)),
		"sqs_all_in_per_unique_event":      r4(float64(sqsAll) / float64(n)),
		"http_attempts":                    httpAttempts,
		"sdk_retries":                      httpAttempts - all,
		"outcomes":                         w.outcomesAll,
		"unattributed_calls":               w.unattrib,
		"per_first_delivery":               callsPer(oc.executed),
		"per_duplicate_delivery":           callsPer(oc.dups),
		"note":                             "DynamoDB and SQS calls (SDK middleware, initialize step); all_in_per_unique_event.all counts both",
	}
}

// cpuFigures are the report's CPU figures of the window.
func (w window) cpuFigures(deliveries int) map[string]any {
	cpu := map[string]any{
		"note":                           "CPU time during the measured window; client = this Go process (getrusage RUSAGE_SELF); machine_other_ms = busy CPU of every other process (noise)",
		"client_ms":                      r1(w.cpuMs),
		"client_ms_per_delivery":         r4(w.cpuMs / float64(deliveries)),
		"node_ms_per_delivery":           r4(w.cpuMs / float64(deliveries)), // the peer's field name, for summaries
		"loadavg_before":                 w.load0,
		"loadavg_after":                  w.load1,
		"machine_capacity_ms":            r1(w.wall * 1000 * float64(runtime.NumCPU())),
		"dynamodb_local_ms":              nil,
		"dynamodb_local_ms_per_delivery": nil,
	}
	if w.ddbOK0 && w.ddbOK1 {
		ddbMs := w.ddb1 - w.ddb0
		cpu["dynamodb_local_ms"] = r1(ddbMs)
		cpu["dynamodb_local_ms_per_delivery"] = r4(ddbMs / float64(deliveries))
		if w.busyOK0 && w.busyOK1 {
			cpu["machine_busy_ms"] = r1(w.busy1 - w.busy0)
			cpu["machine_other_ms"] = r1(math.Max(0, w.busy1-w.busy0-w.cpuMs-ddbMs))
		}
	}
	return cpu
}

package storm

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hookwall/hookwall/dev/cmd/hookwall-run/localrun"
	"github.com/hookwall/hookwall/dev/internal/cpuclock"
	"github.com/hookwall/hookwall/shared/protocol/providers"
	"github.com/hookwall/hookwall/shared/state/store"
)

// Run runs one storm and returns its report. The error is for a storm that
// could not run; a storm that ran and found events lost, doubled or never
// accepted returns its report with OK false. Its stages, in order: check
// the options; make the table, queues and system; plan the workload; the
// lead items; send (with faults and progress); settle; read the records a
// last time; build the report.
func Run(ctx context.Context, o Options) (*Report, error) {
	if err := checkOptions(o); err != nil {
		return nil, err
	}
	prefix := RandomPrefix()
	db, sq, err := Admin(ctx, o.DDBEndpoint, o.SQSEndpoint)
	if err != nil {
		return nil, err
	}
	res, err := CreateResources(ctx, db, sq, prefix, o.Visibility, o.MaxReceive)
	if err != nil {
		return nil, err
	}
	if !o.Keep {
		defer res.Delete()
	}
	dir, err := os.MkdirTemp("", "hookwall-storm-")
	if err != nil {
		return nil, fmt.Errorf("storm: temp dir: %w", err)
	}
	defer os.RemoveAll(dir)
	counter := NewCounter()
	sys, err := startSystem(ctx, o, res, dir, counter)
	if err != nil {
		return nil, err
	}
	defer sys.Stop()
	table, err := store.New(store.Config{Client: db, TableName: res.Table, Function: "cli"})
	if err != nil {
		return nil, err
	}
	sr := &stormRun{o: o, res: res, sys: sys, counter: counter, table: table, start: time.Now()}
	if err := sr.plan(prefix, dir); err != nil {
		return nil, err
	}
	if err := sr.runLead(ctx); err != nil {
		return nil, err
	}
	sent, err := sr.sendAll(ctx)
	if err != nil {
		return nil, err
	}
	settleStart := time.Now()
	records, err := sr.settle(ctx, settleStart)
	if err != nil {
		return nil, err
	}
	// Late effects of abandoned attempts (a slow or held request) land now.
	time.Sleep(o.Target.SlowFor + 500*time.Millisecond)
	settleWall := time.Since(settleStart)
	cpu := cpuSpent{hookwallMs: cpuclock.Self() - sent.cpu0, ddb0: sent.ddb0, ddbOK0: sent.ddbOK0}
	cpu.ddb1, cpu.ddbOK1 = cpuclock.Proc(o.DDBPID)
	sr.readOpen(ctx, records)
	r := sr.report(records, sent.wall, settleWall, cpu)
	sr.progress("done: lost %d, doubled %d, never accepted %d", r.Outcome.Lost, r.Outcome.Doubled, r.Outcome.NeverAccepted)
	return r, nil
}

// checkOptions is Run's first stage: what a storm cannot run without.
func checkOptions(o Options) error {
	if (o.N <= 0 && o.Plan == nil) || o.C <= 0 || len(o.Providers) == 0 {
		return errors.New("storm: N, C and Providers must be set (start from Defaults)")
	}
	for _, p := range o.Providers {
		if _, ok := providers.Lookup(p); !ok {
			return fmt.Errorf("storm: provider %q: want one of %s", p, strings.Join(providers.Names(), ", "))
		}
	}
	return nil
}

// stormRun is one storm's state between Run's stages.
type stormRun struct {
	o       Options
	res     *Resources
	sys     *System
	counter *Counter
	table   *store.Table
	start   time.Time
	items   []Item
	jobs    []Job
	lead    []int    // items sent alone, before the others
	keys    []string // every unique event key
	gen     *generator
	watch   watcher
}

// progress writes one progress line when o.Progress is set.
func (sr *stormRun) progress(format string, a ...any) {
	if sr.o.Progress != nil {
		fmt.Fprintf(sr.o.Progress, "[storm %s %5.1fs] "+format+"\n", append([]any{sr.o.Label, time.Since(sr.start).Seconds()}, a...)...)
	}
}

// plan makes the workload (o.Plan's, or the generated one spread over the
// tenants), sets the lead items apart and makes the generator.
func (sr *stormRun) plan(prefix, dir string) error {
	o, sys := &sr.o, sr.sys
	if o.Plan != nil {
		sr.items, sr.jobs = o.Plan(prefix, sr.start)
		o.N = len(sr.items)
	} else {
		sr.items, sr.jobs = Workload(o.N, o.Providers, localrun.DefaultTenant, o.Dup2, o.Dup3, o.Concurrent, o.Multi, o.Seed, prefix, sr.start)
		SpreadTenants(sr.items, o.Providers, o.Tenants)
	}
	sys.expectGroups(sr.items)
	if o.Lead != nil {
		sr.lead = o.Lead(sr.items)
		isLead := map[int]bool{}
		for _, i := range sr.lead {
			isLead[i] = true
		}
		sr.jobs = slices.DeleteFunc(sr.jobs, func(j Job) bool { return isLead[j.Item] })
	}
	gen, err := newGenerator(sys, sr.items, filepath.Join(dir, "tenants.json"), localrun.DefaultTenant, o.C, sr.start.Add(o.Deadline))
	if err != nil {
		return err
	}
	sr.gen = gen
	sys.answered = gen.sent.Load
	for _, it := range sr.items {
		sys.Planned += it.Copies
		sr.keys = append(sr.keys, it.Keys...)
	}
	sr.progress("table %s, queue %s; %d items, %d unique events, %d jobs, C=%d", sr.res.Table, sr.res.QueueURL, len(sr.items), len(sr.keys), len(sr.jobs), o.C)
	return nil
}

// runLead runs o.Before, then sends the lead items alone (every copy, each
// accepted before the next), then runs o.AfterLead.
func (sr *stormRun) runLead(ctx context.Context) error {
	o := sr.o
	if o.Before != nil {
		if err := o.Before(ctx, sr.sys); err != nil {
			return fmt.Errorf("storm: before: %w", err)
		}
	}
	for _, i := range sr.lead {
		for range sr.items[i].Copies {
			sr.gen.deliver(ctx, i)
		}
	}
	if len(sr.lead) > 0 && o.AfterLead != nil {
		if err := o.AfterLead(ctx, sr.sys); err != nil {
			return fmt.Errorf("storm: after the lead items: %w", err)
		}
	}
	return nil
}

// sending is what the send stage measured: its wall time and the CPU
// clocks at its start.
type sending struct {
	wall   time.Duration
	cpu0   float64
	ddb0   float64
	ddbOK0 bool
}

// sendAll sends the jobs at concurrency C while o.During injects its
// faults, with a progress line every 2 s.
func (sr *stormRun) sendAll(ctx context.Context) (sending, error) {
	o, sys, res, gen := sr.o, sr.sys, sr.res, sr.gen
	s := sending{cpu0: cpuclock.Self()}
	s.ddb0, s.ddbOK0 = cpuclock.Proc(o.DDBPID)
	sendCtx, stopProgress := context.WithCancel(ctx)
	var pw sync.WaitGroup
	sr.watch.sample(-1)
	report := &localrun.Schedule{Name: "progress", Every: 2 * time.Second, Run: func(context.Context) error {
		eff, _ := sys.Target.Effects()
		depth := res.QueueDepth(ctx, res.QueueURL)
		sr.watch.sample(depth)
		sr.progress("sending: %d requests answered, %d events with an effect, queue %d, DLQ %d",
			gen.sent.Load(), len(eff), depth, res.QueueDepth(ctx, res.DLQURL))
		return nil
	}}
	pw.Go(func() { report.Loop(sendCtx, sys.log) })
	var faultErr error
	var fw sync.WaitGroup
	if o.During != nil {
		fw.Go(func() { faultErr = o.During(ctx, sys) })
	}
	gen.send(ctx, sr.jobs, o.C, sr.start)
	s.wall = time.Since(sr.start)
	fw.Wait()
	stopProgress()
	pw.Wait()
	if faultErr != nil {
		return s, fmt.Errorf("storm: faults: %w", faultErr)
	}
	sr.progress("sent: %d requests in %.1f s; waiting for every event to be terminal", gen.sent.Load(), s.wall.Seconds())
	return s, nil
}

// settle waits until every accepted event's record is terminal, o.Settle
// has passed or ctx is done, and returns the records it read.
func (sr *stormRun) settle(ctx context.Context, settleStart time.Time) (map[string]*RecordFacts, error) {
	res := sr.res
	records := map[string]*RecordFacts{}
	pending := sr.keys
	lastRead := time.Now()
	for {
		// Reading the table costs this process CPU (it is in the report's
		// figure): read when the target has seen an effect for every
		// pending event, or every 5 s.
		if time.Since(lastRead) < 5*time.Second && !sr.sys.Target.HasEffects(pending) {
			select {
			case <-ctx.Done():
			case <-time.After(250 * time.Millisecond):
			}
			continue
		}
		lastRead = time.Now()
		got, err := readRecords(ctx, sr.table, pending)
		if err != nil && ctx.Err() != nil {
			return nil, err
		}
		var still []string
		for _, k := range pending {
			if r := got[k]; r != nil {
				records[k] = r
				if r.Status.Terminal() {
					continue
				}
			}
			still = append(still, k)
		}
		pending = notNeverAccepted(still, sr.items, sr.gen)
		if len(pending) == 0 || time.Since(settleStart) > sr.o.Settle || ctx.Err() != nil {
			return records, nil
		}
		depth := res.QueueDepth(ctx, res.QueueURL)
		sr.watch.sample(depth)
		sr.progress("settling: %d events not terminal yet (e.g. %s), queue %d, DLQ %d", len(pending), statusOf(records, pending[0]),
			depth, res.QueueDepth(ctx, res.DLQURL))
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

// readOpen reads again the records that were not terminal (a terminal
// record does not change any more).
func (sr *stormRun) readOpen(ctx context.Context, records map[string]*RecordFacts) {
	var open []string
	for _, k := range sr.keys {
		if r := records[k]; r == nil || !r.Status.Terminal() {
			open = append(open, k)
		}
	}
	if final, err := readRecords(ctx, sr.table, open); err == nil {
		for k, r := range final {
			records[k] = r
		}
	}
}

// cpuSpent is the CPU time of the storm: this process's over the send and
// settle stages, and DynamoDB Local's clock before and after.
type cpuSpent struct {
	hookwallMs     float64
	ddb0, ddb1     float64
	ddbOK0, ddbOK1 bool
}

// report builds the storm's report from what the stages gathered.
func (sr *stormRun) report(records map[string]*RecordFacts, sendWall, settleWall time.Duration, cpu cpuSpent) *Report {
	o, sys, res, gen := sr.o, sr.sys, sr.res, sr.gen
	effects, first := sys.Target.Effects()
	gen.mu.Lock()
	facts := Facts{Items: sr.items, Attempts: gen.attempts, Deliveries: gen.deliveries, Records: records, Effects: effects, FirstEffect: first,
		Steps: max(o.Steps, 0), FirstReceive: sys.firstReceives()}
	if o.Steps < 0 {
		facts.Steps = 1 // the forward step
	}
	gen.mu.Unlock()
	calls, callErrs := sr.counter.Calls()
	r := Build(o, facts, calls, callErrs, sendWall, settleWall)
	r.CPU.HookwallMs = round(cpu.hookwallMs, 1)
	r.CPU.HookwallPerDelivery = round(cpu.hookwallMs/float64(max(1, r.Delivers)), 4)
	if cpu.ddbOK0 && cpu.ddbOK1 {
		v, per := round(cpu.ddb1-cpu.ddb0, 1), round((cpu.ddb1-cpu.ddb0)/float64(max(1, r.Delivers)), 4)
		r.CPU.DynamoDBLocalMs, r.CPU.DynamoDBPerDelivery = &v, &per
	}
	r.Target = sys.Target.Stats()
	sys.mu.Lock()
	r.Processor = ProcessorStats{Kills: sys.kills, Restarts: sys.restarts}
	sys.mu.Unlock()
	r.Config["table"], r.Config["queue"] = res.Table, res.QueueURL
	r.Config["lease"], r.Config["receive_budget"] = sys.Processor.Lease.String(), sys.Receiver.Budget.String()
	r.Config["reenqueue_grace"], r.Config["retry_base"] = sys.Receiver.ReenqueueGrace.String(), sys.Processor.RetryBase.String()
	r.Config["retry_cap"], r.Config["max_attempts"] = sys.Processor.RetryCap.String(), sys.Processor.MaxAttempts
	r.Groups = sys.groupReport()
	sr.watch.sample(-1)
	r.QueueDepthMax, r.Load = sr.watch.depthMax, sr.watch.load()
	if o.Inspect != nil {
		r.records = records
		o.Inspect(r, sys)
	}
	r.OK = len(r.Failures()) == 0
	return r
}

// multiTenant reports whether items are sent for more than one tenant.
func multiTenant(items []Item) bool {
	for _, it := range items {
		if tenantName(it) != tenantName(items[0]) {
			return true
		}
	}
	return false
}

// notNeverAccepted drops from keys the events no delivery got accepted:
// there is nothing to wait for.
func notNeverAccepted(keys []string, items []Item, g *generator) []string {
	if len(keys) == 0 {
		return nil
	}
	g.mu.Lock()
	acc := map[int]bool{}
	for _, d := range g.deliveries {
		if !d.AcceptedAt.IsZero() {
			acc[d.Item] = true
		}
	}
	g.mu.Unlock()
	itemOf := map[string]int{}
	for _, it := range items {
		for _, k := range it.Keys {
			itemOf[k] = it.Index
		}
	}
	var out []string
	for _, k := range keys {
		if acc[itemOf[k]] {
			out = append(out, k)
		}
	}
	return out
}

func statusOf(records map[string]*RecordFacts, key string) string {
	if r := records[key]; r != nil {
		return key + " " + string(r.Status)
	}
	return key + " (no record)"
}

// Build assembles the report of a storm from its facts and measurements
// (CPU and the target's counts are filled by the caller).
func Build(o Options, f Facts, calls map[string]map[string]int, callErrs map[string]int, sendWall, settleWall time.Duration) *Report {
	out := Analyze(f)
	r := &Report{
		Label: o.Label, Date: time.Now().UTC().Format(time.RFC3339), Items: len(f.Items), Unique: out.UniqueEvents,
		Delivers: len(f.Deliveries), HTTPRequests: len(f.Attempts), Answers: map[string]int{},
		SendWallS: round(sendWall.Seconds(), 2), SettleWallS: round(settleWall.Seconds(), 2), Outcome: out,
		Config: map[string]any{
			"n": o.N, "c": o.C, "dup2": o.Dup2, "dup3": o.Dup3, "concurrent_duplicates": o.Concurrent, "line_multi_event": o.Multi,
			"seed": o.Seed, "providers": o.Providers, "steps": o.Steps, "batch_size": o.BatchSize, "pollers": o.Pollers, "visibility_s": o.Visibility,
			"max_receive": o.MaxReceive, "target_dedupe": o.Target.Dedupe, "target_fail_5xx": o.Target.Fail5xx,
			"target_timeout": o.Target.Timeout, "target_slow": o.Target.Slow, "target_slow_for": o.Target.SlowFor.String(),
			"env": o.Env, "go": runtime.Version(), "cpus": runtime.NumCPU(),
		},
		Calls: CallsReport{ByRole: calls, Errors: callErrs},
	}
	for _, it := range f.Items {
		r.DuplicateDeliveries += it.Copies - 1
	}
	var lat []time.Duration
	tenantLat := map[string][]time.Duration{}
	var firstCalls, firstN, dupCalls, dupN int
	for _, a := range f.Attempts {
		switch a.Kind {
		case KindRetry:
			r.PlatformRetries++
		case KindManual:
			r.ManualRedeliveries++
		}
		ans := "no_answer"
		if a.Status != 0 {
			ans = strconv.Itoa(a.Status)
		}
		r.Answers[ans]++
		if a.Status != 0 {
			lat = append(lat, a.Latency)
			if a.Item >= 0 && a.Item < len(f.Items) {
				name := tenantName(f.Items[a.Item])
				tenantLat[name] = append(tenantLat[name], a.Latency)
			}
		}
		n := 0
		for _, v := range a.Track.Calls {
			n += v
		}
		if a.Track.Claimed {
			firstCalls += n
			firstN++
		} else {
			dupCalls += n
			dupN++
		}
	}
	r.ReceiverLatency = PercentilesOf(lat)
	r.EndToEnd = PercentilesOf(out.EndToEnd)
	series := []struct {
		Name string
		Data []time.Duration
	}{{"receiver latency (every HTTP request)", lat}, {"end to end (accept → effect)", out.EndToEnd}}
	if multiTenant(f.Items) {
		r.Tenants = out.ByTenant
		for _, name := range sortedKeys(r.Tenants) {
			t := r.Tenants[name]
			t.ReceiverLatency = PercentilesOf(tenantLat[name])
			t.EndToEnd = PercentilesOf(t.e2e)
			t.QueueWait = PercentilesOf(t.wait)
			t.Histogram = Histogram(t.e2e)
			series = append(series, struct {
				Name string
				Data []time.Duration
			}{"end to end, tenant " + name, t.e2e})
		}
	}
	r.SVG = SVG("hookwall-storm "+o.Label, series)
	if sendWall > 0 {
		r.DeliveriesPerS = round(float64(r.Delivers)/sendWall.Seconds(), 1)
		r.RequestsPerS = round(float64(r.HTTPRequests)/sendWall.Seconds(), 1)
	}
	u := float64(max(1, out.UniqueEvents))
	var ddb, sqsN, proc, src int
	for role, m := range calls {
		for op, v := range m {
			if role == "event_source" {
				src += v
				continue
			}
			if isSQS(op) {
				sqsN += v
			} else {
				ddb += v
			}
			if role == "processor" {
				proc += v
			}
		}
	}
	r.Calls.DynamoDBPerUnique = round(float64(ddb)/u, 3)
	r.Calls.SQSPerUnique = round(float64(sqsN)/u, 3)
	r.Calls.ProcessorPerUnique = round(float64(proc)/u, 3)
	r.Calls.EventSourcePerUnique = round(float64(src)/u, 3)
	var firstFx, lastFx time.Time
	for _, t := range f.FirstEffect {
		if firstFx.IsZero() || t.Before(firstFx) {
			firstFx = t
		}
		if t.After(lastFx) {
			lastFx = t
		}
	}
	if span := lastFx.Sub(firstFx); span > 0 {
		r.ProcessedPerS = round(float64(len(f.FirstEffect))/span.Seconds(), 1)
	}
	if firstN > 0 {
		r.Calls.ReceiverPerFirst = round(float64(firstCalls)/float64(firstN), 3)
	}
	if dupN > 0 {
		r.Calls.ReceiverPerDuplicate = round(float64(dupCalls)/float64(dupN), 3)
	}
	r.OK = len(r.Failures()) == 0
	return r
}

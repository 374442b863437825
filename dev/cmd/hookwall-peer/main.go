// Command hookwall-peer is the Hookwall twin of the Powertools peer bench's
// `shuffled` mode (../shared/peers/powertools, bench.mjs): the same workload
// (N unique one-event deliveries, round(0.3 N) delivered twice, round(0.1 N)
// three times, the rest once, shuffled by the same seeded mulberry32 +
// Fisher-Yates, C concurrent workers, warm-up rounds first) through the
// receiver's Lambda handler, built by intake.Build as the Lambda builds it and
// called in-process through HandleAPIGateway, against DynamoDB Local and the
// SQS server of scripts/services-up.sh. It prints one JSON document with the
// peer's field names (deliveries_per_s, latency_ms, dynamodb_calls, cpu, ...).
//
//	hookwall-peer [-n 2000] [-c 16] [-warmup 3000] [-seed 42] [-ddb-pid-file .local/run/ddb.pid]
//	hookwall-peer -dump-workload FILE   # the delivery order, as bench.mjs --dump-workload
//	hookwall-peer -compare DIR          # medians of DIR/hookwall-*.json and DIR/powertools-*.json, and the ratios
//
// It reads the stack's env (AWS_ENDPOINT_URL_DYNAMODB, AWS_ENDPOINT_URL_SQS,
// TABLE_NAME, QUEUE_URL, AWS_* credentials) and HOOKWALL_TENANTS_FILE
// (default infra/local/tenants.json, tenant "demo").
//
// `make peer` (dev/cmd/hookwall-peer/peer.sh) runs it and the Powertools bench
// alternately and calls -compare.
package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	dbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"

	"github.com/hookwall/hookwall/dev/internal/cpuclock"
	"github.com/hookwall/hookwall/shared/intake"
	"github.com/hookwall/hookwall/shared/obs"
	"github.com/hookwall/hookwall/shared/provider/line"
	"github.com/hookwall/hookwall/shared/settings"
	"github.com/hookwall/hookwall/shared/signer"
	"github.com/hookwall/hookwall/shared/store"
	"github.com/hookwall/hookwall/shared/tenants"
	"github.com/hookwall/hookwall/shared/webhook"
)

type options struct {
	n, c, warmup   int
	dup2, dup3     float64
	seed           uint32
	ddbPidFile     string
	tenant         string
	dumpWorkload   string
	compare        string
	skipVerify     bool
	logLevel       string
	tenantsDefault string
	cpuProfile     string
}

func main() {
	var o options
	var seed uint
	flag.IntVar(&o.n, "n", 2000, "unique events")
	flag.IntVar(&o.c, "c", 16, "concurrent deliveries")
	flag.IntVar(&o.warmup, "warmup", 3000, "unique events of warm-up before the measured run (rounds of 500)")
	flag.Float64Var(&o.dup2, "dup2", 0.3, "share of events delivered twice")
	flag.Float64Var(&o.dup3, "dup3", 0.1, "share of events delivered three times")
	flag.UintVar(&seed, "seed", 42, "workload seed (the peer's mulberry32 seed)")
	flag.StringVar(&o.ddbPidFile, "ddb-pid-file", "", "PID file of DynamoDB Local (services-up: $STACK_RUN_DIR/ddb.pid) for its CPU time")
	flag.StringVar(&o.tenant, "tenant", "demo", "tenant with a LINE channel in the tenants document")
	flag.StringVar(&o.dumpWorkload, "dump-workload", "", "write the delivery order (event indexes) to FILE and exit")
	flag.StringVar(&o.compare, "compare", "", "print medians and ratios of DIR/hookwall-*.json vs DIR/powertools-*.json and exit")
	flag.BoolVar(&o.skipVerify, "skip-verify", false, "skip the table check after the run")
	flag.StringVar(&o.logLevel, "log", "info", "receiver log level (the production JSON logger, written to io.Discard)")
	flag.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of the measured run (not the warm-up) to FILE")
	flag.Parse()
	o.seed = uint32(seed)
	var err error
	switch {
	case o.compare != "":
		err = compare(os.Stdout, o.compare)
	case o.dumpWorkload != "":
		err = dumpWorkload(o)
	default:
		err = run(context.Background(), o)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "hookwall-peer:", err)
		os.Exit(1)
	}
}

// ---------------------------------------------------------------- workload (bench.mjs's, bit for bit)

func mulberry32(seed uint32) func() float64 {
	a := seed
	return func() float64 {
		a += 0x6d2b79f5
		t := a
		t = (t ^ t>>15) * (t | 1)
		t ^= t + (t^t>>7)*(t|61)
		return float64(t^t>>14) / 4294967296
	}
}

func shuffle[T any](s []T, rnd func() float64) {
	for i := len(s) - 1; i > 0; i-- {
		j := int(math.Floor(rnd() * float64(i+1)))
		s[i], s[j] = s[j], s[i]
	}
}

// jsRound is Math.round for the non-negative values used here.
func jsRound(x float64) int { return int(math.Floor(x + 0.5)) }

type distribution struct {
	Once       int `json:"once"`
	Twice      int `json:"twice"`
	ThreeTimes int `json:"three_times"`
}

// workload returns the delivery order as event indexes.
func workload(n int, seed uint32, dup2, dup3 float64) ([]int, distribution) {
	rnd := mulberry32(seed)
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	shuffle(idx, rnd)
	n3, n2 := jsRound(float64(n)*dup3), jsRound(float64(n)*dup2)
	times := make([]int, n)
	for i := range times {
		times[i] = 1
	}
	for _, i := range idx[:n3] {
		times[i] = 3
	}
	for _, i := range idx[n3 : n3+n2] {
		times[i] = 2
	}
	var d []int
	for i := 0; i < n; i++ {
		for k := 0; k < times[i]; k++ {
			d = append(d, i)
		}
	}
	shuffle(d, rnd)
	return d, distribution{Once: n - n2 - n3, Twice: n2, ThreeTimes: n3}
}

func dumpWorkload(o options) error {
	d, dist := workload(o.n, o.seed, o.dup2, o.dup3)
	b, err := json.Marshal(map[string]any{"n": o.n, "seed": o.seed, "dup2": o.dup2, "dup3": o.dup3,
		"distribution": dist, "event_id_format": "<prefix>-<index zero-padded to 6>", "deliveries": d})
	if err != nil {
		return err
	}
	return os.WriteFile(o.dumpWorkload, append(b, '\n'), 0o644)
}

// ---------------------------------------------------------------- call counting (SDK middleware)

// delivery is one call of the handler and what it caused.
type delivery struct {
	event     int
	mu        sync.Mutex
	calls     map[string]int // by operation, DynamoDB and SQS
	outcomes  map[string]int // "op:result"
	claimed   bool           // the claim created the record (store.ClaimCreated)
	sent      int            // successful SQS sends
	status    int
	latencyMs float64
}

type ctxKey struct{}

// counter counts every SDK call once (initialize step, above the retries)
// and every HTTP attempt (deserialize step), and attributes each call to the
// delivery in its context, as bench.mjs does with AsyncLocalStorage.
type counter struct {
	mu         sync.Mutex
	calls      map[string]int
	attempts   map[string]int
	outcomes   map[string]int
	unattrib   int
	collecting atomic.Bool
}

func newCounter() *counter {
	return &counter{calls: map[string]int{}, attempts: map[string]int{}, outcomes: map[string]int{}}
}

func (c *counter) reset() {
	c.mu.Lock()
	c.calls, c.attempts, c.outcomes, c.unattrib = map[string]int{}, map[string]int{}, map[string]int{}, 0
	c.mu.Unlock()
}

func (c *counter) install(stack *middleware.Stack) error {
	if err := stack.Initialize.Add(middleware.InitializeMiddlewareFunc("hookwall-peer-calls",
		func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			op := middleware.GetOperationName(ctx)
			out, md, err := next.HandleInitialize(ctx, in)
			result := "ok"
			if err != nil {
				result = "Error"
				var ae smithy.APIError
				if errors.As(err, &ae) {
					result = ae.ErrorCode()
				}
			}
			c.mu.Lock()
			c.calls[op]++
			c.outcomes[op+":"+result]++
			d, _ := ctx.Value(ctxKey{}).(*delivery)
			if d == nil {
				c.unattrib++
			}
			c.mu.Unlock()
			if d != nil {
				d.mu.Lock()
				d.calls[op]++
				d.outcomes[op+":"+result]++
				if _, created := store.ClaimCreated(in.Parameters, out.Result); created && err == nil {
					d.claimed = true
				}
				if (op == "SendMessageBatch" || op == "SendMessage") && err == nil {
					d.sent++
				}
				d.mu.Unlock()
			}
			return out, md, err
		}), middleware.Before); err != nil {
		return err
	}
	return stack.Deserialize.Add(middleware.DeserializeMiddlewareFunc("hookwall-peer-attempts",
		func(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (middleware.DeserializeOutput, middleware.Metadata, error) {
			c.mu.Lock()
			c.attempts[middleware.GetOperationName(ctx)]++
			c.mu.Unlock()
			return next.HandleDeserialize(ctx, in)
		}), middleware.After)
}

// ---------------------------------------------------------------- CPU

// ---------------------------------------------------------------- the run

type env struct {
	handler  *intake.Handler
	tn       *tenants.Tenant // signs the deliveries
	tenant   string
	counter  *counter
	ddbPid   int
	admin    *dynamodb.Client
	table    string
	settings settings.Receiver
}

func run(ctx context.Context, o options) error {
	if os.Getenv("HOOKWALL_TENANTS_FILE") == "" {
		_ = os.Setenv("HOOKWALL_TENANTS_FILE", "infra/local/tenants.json")
	}
	s, _, err := settings.LoadReceiver(os.Getenv, intake.Defaults())
	if err != nil {
		return err
	}
	doc, err := tenants.LoadFile(s.TenantsFile)
	if err != nil {
		return err
	}
	tn, found := doc.Tenant(o.tenant)
	if !found {
		return fmt.Errorf("no tenant %q in the tenants document", o.tenant)
	}
	if _, configured := tn.Settings(line.Name); !configured {
		return fmt.Errorf("tenant %q has no LINE channel in the tenants document", o.tenant)
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(o.logLevel)); err != nil {
		return fmt.Errorf("-log: %w", err)
	}
	cnt := newCounter()
	// The receiver exactly as the Lambda builds it (intake.Build), with the
	// counting middleware on every client of its AWS config. The JSON logger
	// and the EMF metrics are the production ones, written to io.Discard.
	h, err := intake.Build(ctx, s, obs.NewLogger(io.Discard, level), io.Discard,
		config.WithAPIOptions([]func(*middleware.Stack) error{cnt.install}))
	if err != nil {
		return err
	}
	awsCfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return err
	}
	e := &env{handler: h, tn: tn, tenant: o.tenant, counter: cnt, admin: dynamodb.NewFromConfig(awsCfg),
		table: s.TableName, settings: s}
	if o.ddbPidFile != "" {
		b, err := os.ReadFile(o.ddbPidFile)
		if err != nil {
			return fmt.Errorf("-ddb-pid-file: %w", err)
		}
		e.ddbPid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
	}

	result := map[string]any{
		"tool": "hookwall-peer",
		"date": time.Now().UTC().Format(time.RFC3339Nano),
		"versions": map[string]any{
			"go": runtime.Version(), "dynamodb_local_pid": e.ddbPid,
		},
		"config": map[string]any{
			"mode": "shuffled", "n": o.n, "c": o.c, "dup2": o.dup2, "dup3": o.dup3, "seed": o.seed,
			"warmup_unique_events": o.warmup, "table": s.TableName, "queue_url": s.QueueURL,
			"endpoint_dynamodb": os.Getenv("AWS_ENDPOINT_URL_DYNAMODB"), "endpoint_sqs": os.Getenv("AWS_ENDPOINT_URL_SQS"),
			"receiver": map[string]any{
				"entry":    "intake.Build + Handler.HandleAPIGateway (in-process, API Gateway payload 2.0)",
				"provider": "line", "tenant": o.tenant, "events_per_delivery": 1,
				"budget": s.Budget.String(), "reenqueue_grace": graceOf(s).String(), "dedup_window": s.DedupWindow.String(),
				"log": "production JSON logger at " + level.String() + " to io.Discard; EMF metrics to io.Discard",
			},
			"sdk":  "aws-sdk-go-v2 defaults (standard retryer, 3 attempts)",
			"cpus": runtime.NumCPU(),
		},
	}
	if o.warmup > 0 {
		var rounds []map[string]any
		for done, r := 0, 0; done < o.warmup; r++ {
			k := min(500, o.warmup-done)
			w, err := e.shuffled(ctx, "warmup", k, o.c, o.seed+1+uint32(r), o, true)
			if err != nil {
				return err
			}
			rounds = append(rounds, map[string]any{"deliveries": w["total_deliveries"], "deliveries_per_s": w["deliveries_per_s"],
				"p50_ms": w["latency_ms"].(map[string]any)["p50"], "errors": w["errors"]})
			done += k
		}
		result["warmup"] = map[string]any{"unique_events": o.warmup, "rounds": rounds}
		fmt.Fprintf(os.Stderr, "[hookwall-peer] warmup: %d unique events at C=%d\n", o.warmup, o.c)
	}
	stopProfile, err := startCPUProfile(o.cpuProfile)
	if err != nil {
		return err
	}
	sh, err := e.shuffled(ctx, "shuffled", o.n, o.c, o.seed, o, o.skipVerify)
	stopProfile()
	if err != nil {
		return err
	}
	result["shuffled"] = sh
	ok := sh["errors"].(int) == 0 && sh["events_without_a_message"].(int) == 0
	if tc, _ := sh["table_check"].(map[string]any); tc != nil {
		ok = ok && tc["ok"].(bool)
	}
	result["ok"] = ok
	fmt.Fprintf(os.Stderr, "[hookwall-peer] shuffled: %v deliveries/s, p50 %v ms, p99 %v ms\n",
		sh["deliveries_per_s"], sh["latency_ms"].(map[string]any)["p50"], sh["latency_ms"].(map[string]any)["p99"])
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(result); err != nil {
		return err
	}
	if !ok {
		return errors.New("check failed: errors, events without a message, or table check")
	}
	return nil
}

// startCPUProfile starts a CPU profile into path ("" : none) and returns
// what stops it.
func startCPUProfile(path string) (func(), error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("-cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("-cpuprofile: %w", err)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

func graceOf(s settings.Receiver) time.Duration {
	if s.ReenqueueGrace > 0 {
		return s.ReenqueueGrace
	}
	return s.Budget + intake.DefaultGraceMargin
}

// lineEvent returns a LINE delivery of one message event, signed with the
// tenant's channel secret as LINE signs it (package signer).
func (e *env) lineEvent(id string, ts int64) (*signer.Request, error) {
	body := fmt.Sprintf(`{"destination":"Ub8b2d8e5add3e2eaff4ad4451caab599","events":[{"type":"message",`+
		`"message":{"type":"text","id":"468789577898262530","text":"peer-bench"},"webhookEventId":%q,`+
		`"deliveryContext":{"isRedelivery":false},"timestamp":%d,"source":{"type":"user","userId":"U1f31c2a4c885ab0273b18b8b6a799b72"},`+
		`"replyToken":"fe435e8eee6cf9a3513f95ee23341731","mode":"active"}]}`, id, ts)
	return signer.Sign(e.tn, line.Name, []byte(body), signer.Options{})
}

func (e *env) shuffled(ctx context.Context, label string, n, c int, seed uint32, o options, skipVerify bool) (map[string]any, error) {
	order, dist := workload(n, seed, o.dup2, o.dup3)
	prefix := label + "-" + strings.ToLower(rand.Text()[:8])
	// The signed requests are the platform's work: built before the window.
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
	recs := make([]*delivery, len(order))
	e.counter.reset()
	load0 := cpuclock.LoadAverages()
	cpu0 := cpuclock.Self()
	ddb0, ddbOK0 := cpuclock.Proc(e.ddbPid)
	busy0, busyOK0 := cpuclock.MachineBusy()
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
	wall := time.Since(t0).Seconds()
	busy1, busyOK1 := cpuclock.MachineBusy()
	cpuMs := cpuclock.Self() - cpu0
	ddb1, ddbOK1 := cpuclock.Proc(e.ddbPid)
	load1 := cpuclock.LoadAverages()
	e.counter.mu.Lock()
	calls, attempts, outcomesAll, unattrib := e.counter.calls, e.counter.attempts, e.counter.outcomes, e.counter.unattrib
	e.counter.mu.Unlock()

	// Outcomes, named after the peer's where they mean the same thing.
	byOutcome := map[string][]*delivery{}
	sentPerEvent := map[int]int{}
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
		byOutcome[k] = append(byOutcome[k], d)
		sentPerEvent[d.event] += d.sent
	}
	executed := byOutcome["executed"]
	var dups []*delivery
	for k, l := range byOutcome {
		if strings.HasPrefix(k, "duplicate_") {
			dups = append(dups, l...)
		}
	}
	errorsN := len(order) - len(executed) - len(dups)
	var errSamples []map[string]any
	for k, l := range byOutcome {
		if strings.HasPrefix(k, "error") && len(errSamples) < 3 {
			errSamples = append(errSamples, map[string]any{"outcome": k, "event": l[0].event, "calls": l[0].outcomes})
		}
	}
	without, multi, maxPer := 0, 0, 0
	for i := 0; i < n; i++ {
		v := sentPerEvent[i]
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
	outcomes := map[string]any{}
	for k, l := range byOutcome {
		outcomes[k] = map[string]any{"count": len(l), "latency_ms": percentiles(lat(l)), "calls_per_delivery": callsPer(l)}
	}
	total := map[string]int{}
	all, ddbAll, sqsAll := 0, 0, 0
	for op, v := range calls {
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
	for _, v := range attempts {
		httpAttempts += v
	}
	deliveries := len(order)
	out := map[string]any{
		"workload":                          map[string]any{"unique_events": n, "concurrency": c, "seed": seed, "distribution": dist, "order": "shuffled (seeded, bench.mjs's mulberry32 + Fisher-Yates)"},
		"total_deliveries":                  deliveries,
		"unique_events":                     n,
		"duplicate_deliveries":              deliveries - n,
		"handler_side_effects":              len(executed),
		"side_effects_equal_unique_events":  len(executed) == n,
		"events_claimed_more_than_once":     claimedTwice,
		"messages_enqueued":                 sumMap(sentPerEvent),
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
		"by_outcome":                        outcomes,
		"note_side_effects":                 "handler_side_effects = deliveries that claimed the event (the claim created the record) and enqueued it: the receiver's one effect per event",
		"dynamodb_calls": map[string]any{
			"total":                            total,
			"all_in_per_unique_event":          perUnique,
			"dynamodb_all_in_per_unique_event": r4(float64(ddbAll) / float64(n)),
			"sqs_all_in_per_unique_event":      r4(float64(sqsAll) / float64(n)),
			"http_attempts":                    httpAttempts,
			"sdk_retries":                      httpAttempts - all,
			"outcomes":                         outcomesAll,
			"unattributed_calls":               unattrib,
			"per_first_delivery":               callsPer(executed),
			"per_duplicate_delivery":           callsPer(dups),
			"note":                             "DynamoDB and SQS calls (SDK middleware, initialize step); all_in_per_unique_event.all counts both",
		},
	}
	cpu := map[string]any{
		"note":                           "CPU time during the measured window; client = this Go process (getrusage RUSAGE_SELF); machine_other_ms = busy CPU of every other process (noise)",
		"client_ms":                      r1(cpuMs),
		"client_ms_per_delivery":         r4(cpuMs / float64(deliveries)),
		"node_ms_per_delivery":           r4(cpuMs / float64(deliveries)), // the peer's field name, for summaries
		"loadavg_before":                 load0,
		"loadavg_after":                  load1,
		"machine_capacity_ms":            r1(wall * 1000 * float64(runtime.NumCPU())),
		"dynamodb_local_ms":              nil,
		"dynamodb_local_ms_per_delivery": nil,
	}
	if ddbOK0 && ddbOK1 {
		ddbMs := ddb1 - ddb0
		cpu["dynamodb_local_ms"] = r1(ddbMs)
		cpu["dynamodb_local_ms_per_delivery"] = r4(ddbMs / float64(deliveries))
		if busyOK0 && busyOK1 {
			cpu["machine_busy_ms"] = r1(busy1 - busy0)
			cpu["machine_other_ms"] = r1(math.Max(0, busy1-busy0-cpuMs-ddbMs))
		}
	}
	out["cpu"] = cpu
	if !skipVerify {
		added, err := e.countRecords(ctx, webhook.Key(line.Name, e.tenant, prefix+"-"))
		if err != nil {
			return nil, fmt.Errorf("table check: %w", err)
		}
		out["table_check"] = map[string]any{"records_added": added, "expected": n, "ok": added == n}
	}
	return out, nil
}

func isSQS(op string) bool {
	return strings.HasPrefix(op, "SendMessage") || strings.HasPrefix(op, "ReceiveMessage") || strings.HasPrefix(op, "DeleteMessage")
}

// countRecords counts the event records whose key starts with prefix (an
// uncounted admin client, after the window).
func (e *env) countRecords(ctx context.Context, prefix string) (int, error) {
	n := 0
	var start map[string]dbtypes.AttributeValue
	for {
		out, err := e.admin.Scan(ctx, &dynamodb.ScanInput{
			TableName: aws.String(e.table), Select: dbtypes.SelectCount, ExclusiveStartKey: start,
			FilterExpression:          aws.String("begins_with(pk, :p) AND sk = :sk"),
			ExpressionAttributeValues: map[string]dbtypes.AttributeValue{":p": &dbtypes.AttributeValueMemberS{Value: prefix}, ":sk": &dbtypes.AttributeValueMemberS{Value: "EVENT"}},
		})
		if err != nil {
			return 0, err
		}
		n += int(out.Count)
		if len(out.LastEvaluatedKey) == 0 {
			return n, nil
		}
		start = out.LastEvaluatedKey
	}
}

func sumMap(m map[int]int) int {
	s := 0
	for _, v := range m {
		s += v
	}
	return s
}

func lat(l []*delivery) []float64 {
	v := make([]float64, len(l))
	for i, d := range l {
		v[i] = d.latencyMs
	}
	return v
}

func callsPer(l []*delivery) map[string]any {
	if len(l) == 0 {
		return nil
	}
	sum := map[string]int{}
	all := 0
	for _, d := range l {
		for op, v := range d.calls {
			sum[op] += v
			all += v
		}
	}
	out := map[string]any{}
	for op, v := range sum {
		out[op] = r4(float64(v) / float64(len(l)))
	}
	out["all"] = r4(float64(all) / float64(len(l)))
	return out
}

// percentiles are nearest-rank, as bench.mjs's.
func percentiles(v []float64) map[string]any {
	if len(v) == 0 {
		return map[string]any{"count": 0}
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	at := func(p float64) float64 { return s[max(0, int(math.Ceil(p/100*float64(len(s))))-1)] }
	sum := 0.0
	for _, x := range s {
		sum += x
	}
	return map[string]any{"count": len(s), "p50": r3(at(50)), "p95": r3(at(95)), "p99": r3(at(99)),
		"max": r3(s[len(s)-1]), "mean": r3(sum / float64(len(s)))}
}

func rN(x float64, d int) float64 {
	p := math.Pow(10, float64(d))
	return math.Round(x*p) / p
}
func r1(x float64) float64 { return rN(x, 1) }
func r3(x float64) float64 { return rN(x, 3) }
func r4(x float64) float64 { return rN(x, 4) }

// ---------------------------------------------------------------- compare

type metric struct {
	label      string
	hw, pt     string // dotted paths in the hookwall and powertools JSON
	lowerIsBet bool
}

var metrics = []metric{
	{"deliveries/s", "shuffled.deliveries_per_s", "shuffled.deliveries_per_s", false},
	{"latency p50 ms", "shuffled.latency_ms.p50", "shuffled.latency_ms.p50", true},
	{"latency p99 ms", "shuffled.latency_ms.p99", "shuffled.latency_ms.p99", true},
	{"client CPU ms / delivery", "shuffled.cpu.client_ms_per_delivery", "shuffled.cpu.node_ms_per_delivery", true},
	{"DynamoDB Local CPU ms / delivery", "shuffled.cpu.dynamodb_local_ms_per_delivery", "shuffled.cpu.dynamodb_local_ms_per_delivery", true},
	{"calls / unique event (all-in)", "shuffled.dynamodb_calls.all_in_per_unique_event.all", "shuffled.dynamodb_calls.all_in_per_unique_event.all", true},
	{"  of which DynamoDB", "shuffled.dynamodb_calls.dynamodb_all_in_per_unique_event", "shuffled.dynamodb_calls.all_in_per_unique_event.all", true},
	{"calls / first delivery", "shuffled.dynamodb_calls.per_first_delivery.all", "shuffled.dynamodb_calls.per_first_delivery.all", true},
	{"calls / duplicate delivery", "shuffled.dynamodb_calls.per_duplicate_delivery.all", "shuffled.dynamodb_calls.per_duplicate_delivery.all", true},
	{"other processes CPU ms (noise)", "shuffled.cpu.machine_other_ms", "shuffled.cpu.machine_other_ms", true},
}

func get(v any, path string) (float64, bool) {
	for _, k := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return 0, false
		}
		v = m[k]
	}
	f, ok := v.(float64)
	return f, ok
}

func median(x []float64) float64 {
	s := append([]float64(nil), x...)
	sort.Float64s(s)
	m := len(s) / 2
	if len(s)%2 == 1 {
		return s[m]
	}
	return (s[m-1] + s[m]) / 2
}

func load(pattern string) ([]any, error) {
	files, err := filepath.Glob(pattern)
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var docs []any
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		docs = append(docs, v)
	}
	return docs, nil
}

func compare(w io.Writer, dir string) error {
	hw, err := load(filepath.Join(dir, "hookwall-*.json"))
	if err != nil {
		return err
	}
	pt, err := load(filepath.Join(dir, "powertools-*.json"))
	if err != nil {
		return err
	}
	if len(hw) == 0 || len(pt) == 0 {
		return fmt.Errorf("%s: need hookwall-*.json and powertools-*.json (have %d and %d)", dir, len(hw), len(pt))
	}
	vals := func(docs []any, path string) []float64 {
		var v []float64
		for _, d := range docs {
			if f, ok := get(d, path); ok {
				v = append(v, f)
			}
		}
		return v
	}
	fmt.Fprintf(w, "Medians over %d Hookwall and %d Powertools rounds (shuffled mode); ratio = Hookwall / Powertools\n\n", len(hw), len(pt))
	fmt.Fprintf(w, "| metric | Hookwall (min-max) | Powertools (min-max) | ratio |\n| --- | --- | --- | --- |\n")
	for _, m := range metrics {
		h, p := vals(hw, m.hw), vals(pt, m.pt)
		if len(h) == 0 || len(p) == 0 {
			continue
		}
		mh, mp := median(h), median(p)
		ratio := "n/a"
		if mp != 0 {
			ratio = fmt.Sprintf("%.2f", mh/mp)
		}
		fmt.Fprintf(w, "| %s | %s (%s-%s) | %s (%s-%s) | %s |\n", m.label, g(mh), g(minOf(h)), g(maxOf(h)), g(mp), g(minOf(p)), g(maxOf(p)), ratio)
	}
	return nil
}

func g(x float64) string { return strconv.FormatFloat(x, 'g', 4, 64) }

func minOf(x []float64) float64 {
	m := x[0]
	for _, v := range x {
		m = math.Min(m, v)
	}
	return m
}

func maxOf(x []float64) float64 {
	m := x[0]
	for _, v := range x {
		m = math.Max(m, v)
	}
	return m
}

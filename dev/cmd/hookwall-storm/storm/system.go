package storm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/hookwall/hookwall/dev/cmd/hookwall-run/localrun"
	compwiring "github.com/hookwall/hookwall/functions/compensator/wiring"
	procwiring "github.com/hookwall/hookwall/functions/processor/wiring"
	"github.com/hookwall/hookwall/shared/base/obs"
	"github.com/hookwall/hookwall/shared/config/settings"
	"github.com/hookwall/hookwall/shared/engine/intake"
)

// System is Hookwall running in-process for one storm: the receiver behind
// an HTTP server, the processor and the compensator behind pollers, the
// sweeper on a schedule, and the forward target.
type System struct {
	// ReceiverURL is the receiver's base URL (http://127.0.0.1:port).
	ReceiverURL string
	// Target is the forward target.
	Target *Target
	// Counter counts the functions' AWS calls.
	Counter *Counter
	// Processor are the processor's settings as loaded.
	Processor settings.Processor
	// Receiver are the receiver's settings as loaded.
	Receiver settings.Receiver

	res      *Resources
	log      *slog.Logger
	proc     BatchFunc
	comp     *compwiring.Handler
	sqs      *sqs.Client
	opts     Options
	servers  localrun.Servers
	tracks   sync.Map // request id → *Track
	mu       sync.Mutex
	procRun  *run
	compRun  *run
	kills    int
	restarts int
	region   string
	answered func() int64
	getenv   func(string) string // the functions' variables
	opsMu    sync.Mutex
	ops      *operator
	groups   groupCheck
	// Planned is the number of platform deliveries of the workload.
	Planned int
}

// Answered returns how many HTTP requests the generator has had answered
// (or given up on) so far: the storm's progress, for timing faults.
func (s *System) Answered() int64 {
	if s.answered == nil {
		return 0
	}
	return s.answered()
}

// BatchFunc is an SQS batch handler with partial batch responses.
type BatchFunc func(context.Context, events.SQSEvent) (events.SQSEventResponse, error)

// run is a set of pollers that can be stopped gracefully or killed.
type run struct {
	stop context.CancelFunc // stop polling; batches finish
	kill context.CancelFunc // cancel the handlers' contexts abruptly
	done chan struct{}
}

// pollTimeout bounds each of the pollers' SQS calls (a 1 s long poll).
const pollTimeout = 15 * time.Second

// trackHeader carries the generator's request id to the receiver's wrapper.
const trackHeader = "X-Storm-Request"

// startSystem builds the functions on res and starts the servers and pollers.
func startSystem(ctx context.Context, o Options, res *Resources, dir string, counter *Counter) (*System, error) {
	s := &System{Counter: counter, res: res, opts: o, Target: NewTarget(o.Target)}
	logs := o.Logs
	if logs == nil {
		logs = io.Discard
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(o.LogLevel)); err != nil {
		return nil, fmt.Errorf("storm: log level %q: %w", o.LogLevel, err)
	}
	s.log = obs.NewLogger(logs, level)

	recvLn, err := localrun.ListenLoopback("the receiver")
	if err != nil {
		return nil, fmt.Errorf("storm: %w", err)
	}
	fwdLn, err := localrun.ListenLoopback("the business target")
	if err != nil {
		recvLn.Close()
		return nil, fmt.Errorf("storm: %w", err)
	}
	s.ReceiverURL = "http://" + recvLn.Addr().String()
	forwardURL := "http://" + fwdLn.Addr().String() + "/business"
	doc, err := localrun.DemoTenants(forwardURL)
	if err != nil {
		return nil, err
	}
	if doc, err = withTenants(doc, o.Tenants); err != nil {
		return nil, err
	}
	tenantsFile := filepath.Join(dir, "tenants.json")
	if err := os.WriteFile(tenantsFile, doc, 0o600); err != nil {
		return nil, fmt.Errorf("storm: write tenants: %w", err)
	}
	env := map[string]string{
		"TABLE_NAME": res.Table, "QUEUE_URL": res.QueueURL, "DLQ_URL": res.DLQURL,
		"HOOKWALL_TENANTS_FILE": tenantsFile, "TENANTS_SECRET_ARN": "", "EVENT_BUS_NAME": "",
		"HOOKWALL_LOG_LEVEL": o.LogLevel,
	}
	for k, v := range o.Env {
		env[k] = v
	}
	getenv := func(k string) string {
		if v, ok := env[k]; ok {
			return v
		}
		return os.Getenv(k)
	}
	s.getenv = getenv
	if s.Receiver, _, err = settings.LoadReceiver(getenv, intake.Defaults()); err != nil {
		return nil, fmt.Errorf("storm: receiver settings: %w", err)
	}
	if s.Processor, _, err = settings.LoadProcessor(getenv); err != nil {
		return nil, fmt.Errorf("storm: processor settings: %w", err)
	}
	cs, _, err := settings.LoadCompensator(getenv, compwiring.Defaults())
	if err != nil {
		return nil, fmt.Errorf("storm: compensator settings: %w", err)
	}
	recv, err := intake.Build(ctx, s.Receiver, s.log.With("function", "receiver"), io.Discard, counter.Option("receiver"))
	if err != nil {
		return nil, fmt.Errorf("storm: build the receiver: %w", err)
	}
	if o.Steps < 0 { // the processor as its Lambda main builds it: the teams' handlers and forwarding
		p, err := procwiring.Build(ctx, s.Processor, s.log.With("function", "processor"), io.Discard, counter.Option("processor"))
		if err != nil {
			return nil, fmt.Errorf("storm: build the processor: %w", err)
		}
		s.proc = p.Handle
	} else if s.proc, err = buildStepsProcessor(ctx, s.Processor, s.log.With("function", "processor"), counter, o.Steps, forwardURL, o.SharedTarget); err != nil {
		return nil, err
	}
	if s.comp, err = compwiring.Build(ctx, cs, s.log.With("function", "compensator"), io.Discard, counter.Option("compensator")); err != nil {
		return nil, fmt.Errorf("storm: build the compensator: %w", err)
	}
	// The pollers' own client, as the event source mapping's (counted as
	// "event_source"), through the same endpoints as the functions (the
	// fault proxy in chaos).
	awsCfg, err := config.LoadDefaultConfig(ctx, counter.Option("event_source"))
	if err != nil {
		return nil, fmt.Errorf("storm: AWS config: %w", err)
	}
	// Each receive is bounded: a long poll on a connection a fault left
	// half-open would otherwise wait forever (the event source mapping
	// bounds its own).
	s.sqs = sqs.NewFromConfig(awsCfg, func(o *sqs.Options) {
		o.HTTPClient = awshttp.NewBuildableClient().WithTimeout(pollTimeout)
	})
	s.region = awsCfg.Region

	mux := http.NewServeMux()
	api := &localrun.APIGateway{Handle: recv.HandleAPIGateway, Timeout: localrun.ReceiverTimeout, Log: s.log}
	mux.Handle(localrun.Route, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t := &liveTrack{}
		if id := r.Header.Get(trackHeader); id != "" {
			s.tracks.Store(id, t)
		}
		api.ServeHTTP(w, r.WithContext(withTrack(r.Context(), t)))
	}))
	fwd := http.NewServeMux()
	fwd.Handle("/", s.Target)
	s.servers.Serve(recvLn, mux)
	s.servers.Serve(fwdLn, fwd)
	s.StartProcessor(ctx)
	s.compRun = s.startPollers(ctx, []*localrun.Poller{{
		Name: "compensator", Client: s.sqs, QueueURL: res.DLQURL, QueueARN: res.DLQARN, Region: awsCfg.Region,
		Handle: localrun.JSONHandler(s.comp.Handle), Timeout: cs.Lease, Concurrency: 1, Log: s.log,
		OnBatch: s.onBatch("dlq"),
	}}, func(ctx context.Context) { s.sweepLoop(ctx, awsCfg.Region) })
	return s, nil
}

// withTenants adds to the demo tenants document doc each of names it lacks,
// with the demo tenant's settings.
func withTenants(doc []byte, names []string) ([]byte, error) {
	if len(names) == 0 {
		return doc, nil
	}
	var d map[string]map[string]json.RawMessage
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, fmt.Errorf("storm: tenants: %w", err)
	}
	demo, ok := d["tenants"][localrun.DefaultTenant]
	if !ok {
		return nil, fmt.Errorf("storm: tenants: no %s", localrun.DefaultTenant)
	}
	for _, n := range names {
		if _, ok := d["tenants"][n]; !ok {
			d["tenants"][n] = demo
		}
	}
	out, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("storm: tenants: %w", err)
	}
	return append(out, '\n'), nil
}

// StartProcessor starts fresh processor pollers (after a kill, a restart).
func (s *System) StartProcessor(ctx context.Context) {
	p := &localrun.Poller{
		Name: "processor", Client: s.sqs, QueueURL: s.res.QueueURL, QueueARN: s.res.QueueARN, Region: s.region,
		Handle: localrun.BatchHandler(s.proc), Timeout: s.invocationTimeout(), Concurrency: s.opts.Pollers, Log: s.log,
		BatchSize: int32(s.opts.BatchSize), OnBatch: s.onBatch("queue"),
	}
	r := s.startPollers(ctx, []*localrun.Poller{p}, nil)
	s.mu.Lock()
	if s.procRun != nil {
		s.restarts++
	}
	s.procRun = r
	s.mu.Unlock()
}

// invocationTimeout is the processor's function timeout: its lease, as
// template.yaml sets it, unless Options.InvocationTimeout says otherwise.
func (s *System) invocationTimeout() time.Duration {
	if s.opts.InvocationTimeout > 0 {
		return s.opts.InvocationTimeout
	}
	return s.Processor.Lease
}

// KillProcessor kills the processor mid-batch: the handlers' contexts are
// cancelled abruptly and their batches end without any acknowledgement
// (the messages come back after their visibility timeout, the leases
// expire), and the pollers stop. StartProcessor restarts it.
func (s *System) KillProcessor() {
	s.mu.Lock()
	r := s.procRun
	s.kills++
	s.mu.Unlock()
	if r == nil {
		return
	}
	r.kill()
	r.stop()
	<-r.done
}

// startPollers runs pollers (and extra) until stopped; their handlers see a
// context the run's kill cancels, and a killed batch acknowledges nothing.
func (s *System) startPollers(ctx context.Context, pollers []*localrun.Poller, extra func(context.Context)) *run {
	pctx, stop := context.WithCancel(ctx)
	kctx, kill := context.WithCancel(context.Background())
	r := &run{stop: stop, kill: kill, done: make(chan struct{})}
	var wg sync.WaitGroup
	for _, p := range pollers {
		h := p.Handle
		p.Handle = func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
			hctx, cancel := context.WithCancel(ctx)
			defer cancel()
			unhook := context.AfterFunc(kctx, cancel)
			defer unhook()
			resp, err := h(hctx, ev)
			if kctx.Err() != nil {
				return events.SQSEventResponse{}, errors.New("storm: killed mid-batch")
			}
			return resp, err
		}
		wg.Go(func() { p.Run(pctx) })
	}
	if extra != nil {
		wg.Go(func() { extra(pctx) })
	}
	go func() { wg.Wait(); close(r.done) }()
	return r
}

// sweepLoop invokes the compensator's schedule entry (the sweeper) every
// SweepEvery until ctx is done.
func (s *System) sweepLoop(ctx context.Context, region string) {
	if s.opts.SweepEvery <= 0 {
		return
	}
	sweeper := &localrun.Schedule{Name: "sweeper", Every: s.opts.SweepEvery, Run: func(ctx context.Context) error {
		raw, err := localrun.ScheduledEvent(time.Now(), region, "hookwall-storm-sweep")
		if err != nil {
			return err
		}
		_, err = s.comp.Handle(ctx, raw)
		return err
	}}
	sweeper.Loop(ctx, s.log)
}

// takeTrack returns (and forgets) the track of request id.
func (s *System) takeTrack(id string) Track {
	v, ok := s.tracks.LoadAndDelete(id)
	if !ok {
		return Track{}
	}
	return v.(*liveTrack).snapshot()
}

// Stop stops the pollers (gracefully) and the servers.
func (s *System) Stop() {
	s.mu.Lock()
	runs := []*run{s.procRun, s.compRun}
	s.mu.Unlock()
	for _, r := range runs {
		if r != nil {
			r.stop()
		}
	}
	for _, r := range runs {
		if r != nil {
			select {
			case <-r.done:
			case <-time.After(30 * time.Second):
				r.kill()
			}
		}
	}
	s.servers.Shutdown(context.Background())
}

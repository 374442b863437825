package localrun

import (
	"context"

	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	procwiring "github.com/hookwall/hookwall/functions/processor/wiring"
	"github.com/hookwall/hookwall/shared/aws/awsconf"
	"github.com/hookwall/hookwall/shared/aws/bus"
	"github.com/hookwall/hookwall/shared/aws/queue"
	"github.com/hookwall/hookwall/shared/base/obs"
	"github.com/hookwall/hookwall/shared/config/runfile"
	"github.com/hookwall/hookwall/shared/config/settings"
	"github.com/hookwall/hookwall/shared/engine/drain"
	"github.com/hookwall/hookwall/shared/engine/intake"
	"github.com/hookwall/hookwall/shared/ops/control"
	"github.com/hookwall/hookwall/shared/ops/recovery"
	"github.com/hookwall/hookwall/shared/state/store"
	"github.com/hookwall/hookwall/shared/state/targets"
	"github.com/hookwall/hookwall/shared/state/targets/targetsdb"
)

// The stages of [Run], in the order it runs them.

// listeners are the runner's sockets, opened before anything is started so
// that a port in use fails first.
type listeners struct {
	main        net.Listener // the receiver and the page
	eventBridge net.Listener // the local EventBridge endpoint
	forward     net.Listener // the local forward target; nil when FORWARD_URL names another
	forwardURL  string
	baseURL     string // http://<main's address>
}

// listen opens the runner's listeners; on an error it closes those it
// opened.
func listen(cfg Config) (*listeners, error) {
	mainLn, err := net.Listen("tcp", net.JoinHostPort(DefaultHost, strconv.Itoa(cfg.Port)))
	if err != nil {
		return nil, fmt.Errorf("localrun: cannot listen on %s:%d: %w. Another program uses that port: stop it, or choose another port, e.g. PORT=%d make run",
			DefaultHost, cfg.Port, err, cfg.Port+1)
	}
	ebLn, err := ListenLoopback("the EventBridge endpoint")
	if err != nil {
		mainLn.Close()
		return nil, err
	}
	fwdLn, forwardURL, err := ListenForward(cfg.ForwardURL)
	if err != nil {
		ebLn.Close()
		mainLn.Close()
		return nil, err
	}
	return &listeners{main: mainLn, eventBridge: ebLn, forward: fwdLn, forwardURL: forwardURL,
		baseURL: "http://" + mainLn.Addr().String()}, nil
}

// close closes every listener.
func (l *listeners) close() {
	if l.forward != nil {
		l.forward.Close()
	}
	l.eventBridge.Close()
	l.main.Close()
}

// runEnv is the functions' environment: the runner's, with the stack's
// exports, the tenants document and the local EventBridge endpoint.
type runEnv struct {
	vars        map[string]string
	fallback    func(string) string // the runner's own environment
	tenantsFile string
}

// get returns the functions' value of k.
func (e *runEnv) get(k string) string {
	if v, ok := e.vars[k]; ok {
		return v
	}
	return e.fallback(k)
}

// functionsEnvironment builds the functions' environment from the stack's
// exports (stackEnv) and sets its AWS_ variables in the process (the SDK's
// clients read them). Without a tenants file it writes the demo tenants.
func functionsEnvironment(cfg Config, sys System, stackEnv map[string]string, ln *listeners) (*runEnv, error) {
	env := map[string]string{}
	for k, v := range stackEnv {
		env[k] = v
	}
	for k, def := range map[string]string{"AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test"} {
		if env[k] == "" && cfg.Getenv(k) == "" {
			env[k] = def
		}
	}
	tenantsFile := cfg.TenantsFile
	if tenantsFile == "" {
		var err error
		if tenantsFile, err = writeDemoTenants(cfg.RunDir, ln.forwardURL); err != nil {
			return nil, err
		}
	}
	env["HOOKWALL_TENANTS_FILE"] = tenantsFile
	env["TENANTS_SECRET_ARN"] = ""
	if cfg.Getenv("EVENT_BUS_NAME") == "" {
		env["EVENT_BUS_NAME"] = DefaultBus
	}
	if cfg.Getenv("HOOKWALL_OUTCOME_EVENTS") == "" {
		env["HOOKWALL_OUTCOME_EVENTS"] = "each" // the local run shows every outcome (deployments: failures)
	}
	env["AWS_ENDPOINT_URL_EVENTBRIDGE"] = "http://" + ln.eventBridge.Addr().String()
	for k, v := range env {
		if strings.HasPrefix(k, "AWS_") {
			if err := sys.Setenv(k, v); err != nil {
				return nil, fmt.Errorf("localrun: set %s: %w", k, err)
			}
		}
	}
	return &runEnv{vars: env, fallback: cfg.Getenv, tenantsFile: tenantsFile}, nil
}

// functions are the receiver and the processor, built as their Lambda mains
// build them, with their settings, their logs and the metrics file.
type functions struct {
	human       bool // human logs (else JSON)
	log         *slog.Logger
	recvLog     *slog.Logger
	procLog     *slog.Logger
	rs          settings.Receiver
	ps          settings.Processor
	metricsFile *os.File // the caller closes it
	metrics     *lockedWriter
	recent      *Recent
	recv        *intake.Handler
	proc        *procwiring.Handler
}

// buildFunctions loads the receiver's and the processor's settings, opens
// the logs (human on a terminal, JSON otherwise; EMF metrics to a file) and
// builds both functions.
func buildFunctions(ctx context.Context, cfg Config, sys System, env *runEnv) (*functions, error) {
	human := cfg.Human(sys.Terminal)
	tap := NewLogTap(sys.Stdout, human, human && sys.Terminal && env.get("NO_COLOR") == "")
	rs, rwarn, rerr := settings.LoadReceiver(env.get, intake.Defaults())
	log := obs.NewLogger(tap, rs.LogLevel)
	if rerr != nil {
		return nil, fmt.Errorf("localrun: receiver configuration: %w", rerr)
	}
	ps, pwarn, perr := settings.LoadProcessor(env.get)
	if perr != nil {
		return nil, fmt.Errorf("localrun: processor configuration: %w", perr)
	}
	metrics, err := os.OpenFile(filepath.Join(cfg.RunDir, MetricsFile), os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, fmt.Errorf("localrun: metrics file: %w", err)
	}
	f := &functions{human: human, log: log, rs: rs, ps: ps, metricsFile: metrics, metrics: &lockedWriter{w: metrics}, recent: &Recent{},
		recvLog: log.With(slog.String("function", "receiver")), procLog: log.With(slog.String("function", "processor"))}
	rwarn.Log(f.recvLog)
	pwarn.Log(f.procLog)
	if f.recv, err = intake.Build(ctx, rs, f.recvLog, f.metrics, ObserveSends(f.recvLog, ps.DLQURL), ObserveClaims(f.recent)); err != nil {
		metrics.Close()
		return nil, fmt.Errorf("localrun: build the receiver: %w", err)
	}
	if f.proc, err = procwiring.Build(ctx, ps, f.procLog, f.metrics, ObserveSends(f.procLog, ps.DLQURL)); err != nil {
		metrics.Close()
		return nil, fmt.Errorf("localrun: build the processor: %w", err)
	}
	return f, nil
}

// runnerParts are what the runner adds around the functions: the event
// sources (the queues' pollers, the sweeper's schedule) and the page with
// its operator tools.
type runnerParts struct {
	region    string
	pollers   []*Poller
	schedules []*Schedule
	page      *Page  // the caller closes it
	outcomes  string // the outcome events' file
	forwarded string // the local forward target's file
}

// buildRunnerParts makes the runner's own clients and, with them, the event
// source mappings, the compensator and sweeper, and the page (replay,
// pause and resume, recover).
func buildRunnerParts(ctx context.Context, cfg Config, env *runEnv, fns *functions, forwardURL string) (*runnerParts, error) {
	log, rs, ps := fns.log, fns.rs, fns.ps
	awsCfg, err := config.LoadDefaultConfig(ctx, config.WithLogger(awsconf.NewSDKLogger(log)), ObserveSends(log, ps.DLQURL))
	if err != nil {
		return nil, fmt.Errorf("localrun: AWS config: %w", err)
	}
	sqsClient := sqs.NewFromConfig(awsCfg)
	db := dynamodb.NewFromConfig(awsCfg)
	// Replays from the page are written as function "page" in the history.
	table, err := store.New(store.Config{Client: db, TableName: rs.TableName, Function: ReplayFunction})
	if err != nil {
		return nil, err
	}
	mainQueue, err := queue.New(queue.Config{Client: sqsClient, URL: ps.QueueURL})
	if err != nil {
		return nil, err
	}
	p := &runnerParts{region: awsCfg.Region, outcomes: filepath.Join(cfg.RunDir, OutcomesFile),
		forwarded: filepath.Join(cfg.RunDir, ForwardedFile)}
	if p.pollers, p.schedules, err = eventSources(ctx, cfg, env, fns, sqsClient, awsCfg.Region); err != nil {
		return nil, err
	}
	ts, err := settings.LoadTargets(env.get)
	if err != nil {
		return nil, err
	}
	gate, err := targetsdb.New(targetsdb.TableConfig{Client: db, TableName: rs.TableName, Config: targets.Config{}.With(ts)})
	if err != nil {
		return nil, err
	}
	drainer, err := drain.New(drain.Config{Store: table, Gate: gate, Queue: mainQueue, Logger: log})
	if err != nil {
		return nil, err
	}
	// The page's Pause and Resume act as `hookwall pause|resume` do,
	// publishing their operational events on EVENT_BUS_NAME.
	ops, err := bus.New(bus.Config{Client: eventbridge.NewFromConfig(awsCfg), BusName: env.get("EVENT_BUS_NAME")})
	if err != nil {
		return nil, err
	}
	cc := control.Config{Gate: gate, Held: table, Drain: drainer}
	if ops != nil {
		cc.Ops = ops
	}
	controls, err := control.New(cc)
	if err != nil {
		return nil, err
	}
	// The page's recover panel runs the jobs `hookwall recover` runs, at
	// the targets' rate, publishing hookwall.event.recovered.
	jc := recovery.Config{DB: db, TableName: rs.TableName, Store: table, Queue: mainQueue, Limiter: gate, Window: rs.DedupWindow}
	if ops != nil {
		jc.Ops = ops
	}
	jobs, err := recovery.New(jc)
	if err != nil {
		return nil, err
	}
	p.page = &Page{DB: db, Table: rs.TableName, Recent: fns.recent, Replay: table, Queue: mainQueue, Window: rs.DedupWindow, Log: log,
		Info:    [][2]string{{"table", rs.TableName}, {"queue", queueName(ps.QueueURL)}, {"outcomes", p.outcomes}, {"forward target", forwardURL}},
		Control: controls, Jobs: jobs}
	return p, nil
}

// eventSources are the functions' event sources: the main queue's poller
// (the processor), and the compensator's (its DLQ poller and the sweeper's
// schedule).
func eventSources(ctx context.Context, cfg Config, env *runEnv, fns *functions, sqsClient *sqs.Client, region string) ([]*Poller, []*Schedule, error) {
	ps := fns.ps
	mainARN, err := QueueARN(ctx, sqsClient, ps.QueueURL)
	if err != nil {
		return nil, nil, err
	}
	pollers := []*Poller{{
		Name: "processor", Client: sqsClient, QueueURL: ps.QueueURL, QueueARN: mainARN, Region: region,
		Handle: fns.proc.Handle, Timeout: ps.Lease, Concurrency: 2, Log: fns.procLog,
		OnBatch: logBatch(fns.procLog, "processor", StageProcessing),
	}}
	dlqARN, err := QueueARN(ctx, sqsClient, ps.DLQURL)
	if err != nil {
		return nil, nil, err
	}
	fx := functionsEnv{getenv: env.get, log: fns.log, metrics: fns.metrics, sqs: sqsClient, region: region,
		dlqURL: ps.DLQURL, dlqARN: dlqARN, sweepEvery: cfg.SweepEvery}
	morePollers, schedules, err := fx.compensatorAndSweeper(ctx)
	if err != nil {
		return nil, nil, err
	}
	return append(pollers, morePollers...), schedules, nil
}

// writeRunFile writes runner.json, how the CLI and "hookwall-run send" find
// this runner, and returns its path and the tenants' configured providers.
func writeRunFile(runDir, baseURL string, env *runEnv, fns *functions, region string) (string, []string, error) {
	rs, ps := fns.rs, fns.ps
	d := runfile.Info{PID: os.Getpid(), URL: baseURL, TenantsFile: env.tenantsFile, Env: map[string]string{
		"TABLE_NAME": rs.TableName, "QUEUE_URL": ps.QueueURL, "DLQ_URL": ps.DLQURL, "AWS_REGION": region,
		"HOOKWALL_TENANTS_FILE": env.tenantsFile,
		// The CLI's pause, resume and recover publish on the runner's bus,
		// through its local EventBridge endpoint, as the page's do.
		"EVENT_BUS_NAME": env.get("EVENT_BUS_NAME"), "AWS_ENDPOINT_URL_EVENTBRIDGE": env.get("AWS_ENDPOINT_URL_EVENTBRIDGE"),
	}}
	var configured []string
	d.Tenants, configured = TenantsOf(env.tenantsFile)
	ddbURL, sqsURL := env.get("AWS_ENDPOINT_URL_DYNAMODB"), env.get("AWS_ENDPOINT_URL_SQS")
	d.Env["AWS_ENDPOINT_URL_DYNAMODB"], d.Env["AWS_ENDPOINT_URL_SQS"] = ddbURL, sqsURL
	if loopbackURL(ddbURL) && loopbackURL(sqsURL) { // local services: their made-up credentials
		d.Env["AWS_ACCESS_KEY_ID"], d.Env["AWS_SECRET_ACCESS_KEY"] = env.get("AWS_ACCESS_KEY_ID"), env.get("AWS_SECRET_ACCESS_KEY")
	}
	path, err := runfile.Write(runDir, d)
	if err != nil {
		return "", nil, err
	}
	return path, configured, nil
}

// announce prints the banner (on a terminal it says the runner is ready;
// otherwise a log line does too).
func announce(sys System, cfg Config, ln *listeners, env *runEnv, fns *functions, parts *runnerParts, started, configured []string) {
	rs, ps := fns.rs, fns.ps
	printBanner(sys, cfg, banner{
		base: ln.baseURL, forward: ln.forwardURL, localForward: ln.forward != nil, tenants: env.tenantsFile, demo: cfg.TenantsFile == "",
		outcomes: parts.outcomes, forwarded: parts.forwarded, table: rs.TableName, queue: queueName(ps.QueueURL), dlq: queueName(ps.DLQURL),
		ddb: env.get("AWS_ENDPOINT_URL_DYNAMODB"), sqs: env.get("AWS_ENDPOINT_URL_SQS"), started: started,
		functions: functionNames(parts.pollers, parts.schedules), configured: configured,
	})
	if !fns.human { // on a terminal the banner says it
		fns.log.Info("hookwall-run: ready", slog.String("url", ln.baseURL), slog.String("page", ln.baseURL+PagePath),
			slog.String("forward_url", ln.forwardURL), slog.String("outcomes", parts.outcomes), slog.String("tenants", env.tenantsFile))
	}
}

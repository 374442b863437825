package localrun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/hookwall/hookwall/cmd/internal/runfile"
	"github.com/hookwall/hookwall/functions/processor/handlers"
	procwiring "github.com/hookwall/hookwall/functions/processor/wiring"
	"github.com/hookwall/hookwall/shared/awslog"
	"github.com/hookwall/hookwall/shared/bus"
	"github.com/hookwall/hookwall/shared/control"
	"github.com/hookwall/hookwall/shared/drain"
	"github.com/hookwall/hookwall/shared/intake"
	"github.com/hookwall/hookwall/shared/obs"
	"github.com/hookwall/hookwall/shared/queue"
	"github.com/hookwall/hookwall/shared/recovery"
	"github.com/hookwall/hookwall/shared/settings"
	"github.com/hookwall/hookwall/shared/store"
	"github.com/hookwall/hookwall/shared/targets"
	"github.com/hookwall/hookwall/shared/targets/targetsdb"
)

// ReceiverTimeout is the receiver's timeout, as template.yaml sets it: each
// invocation's context carries the deadline Lambda would give it. The
// processor's and compensator's is their lease (HOOKWALL_LEASE), as the
// template sets Timeout and HOOKWALL_LEASE to the same value.
const ReceiverTimeout = 4 * time.Second

// Files in the run directory.
const (
	OutcomesFile  = "outcomes.jsonl"
	ForwardedFile = "forwarded.jsonl"
	MetricsFile   = "metrics.jsonl"
)

// PreviousSuffix names the run files of the run before (outcomes.jsonl →
// outcomes.previous.jsonl): a run that starts DynamoDB Local, whose table
// starts empty, starts its files empty too and keeps one earlier run's.
const PreviousSuffix = ".previous"

// rotateRunFiles moves the outcomes, forwarded and metrics files of an
// earlier run aside (replacing the run before's), so that this run's files
// hold only this run's lines.
func rotateRunFiles(dir string) error {
	for _, name := range []string{OutcomesFile, ForwardedFile, MetricsFile} {
		path := filepath.Join(dir, name)
		ext := filepath.Ext(name)
		prev := filepath.Join(dir, strings.TrimSuffix(name, ext)+PreviousSuffix+ext)
		if err := os.Rename(path, prev); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("localrun: move %s aside: %w", name, err)
		}
	}
	return nil
}

// System is what [Run] needs from its process.
type System struct {
	// Stdout receives the logs, Stderr the banner and the services' messages.
	Stdout, Stderr io.Writer
	// Terminal says Stdout is a terminal (human logs unless configured).
	Terminal bool
	// Setenv sets a variable of this process (os.Setenv): the AWS SDK
	// reads AWS_ENDPOINT_URL_* and the credentials from the environment.
	Setenv func(key, value string) error
	// Executable is the runner's binary, for the printed commands.
	Executable string
	// WorkDir is the working directory, to print short paths.
	WorkDir string
	// Hurry is closed on a second Ctrl-C: stop without waiting for the
	// batches being handled (the local services are still stopped).
	Hurry <-chan struct{}
}

// Schedule is a function the runner invokes every Every (the sweeper); see
// [Schedule.Loop].
type Schedule struct {
	Name  string
	Every time.Duration
	Run   func(context.Context) error
}

// Run runs Hookwall locally until ctx is done, then stops everything it
// started: its servers and pollers, and the local services if this run
// started them. See the package documentation.
func Run(ctx context.Context, cfg Config, sys System) (err error) {
	lk, err := acquireLock(cfg.RunDir, HolderRun)
	if err != nil {
		return err
	}
	defer lk.release()

	// The teams' settings first: a malformed one is named in a moment,
	// not after the services have started.
	if err := handlers.CheckSettings(cfg.Getenv); err != nil {
		return fmt.Errorf("localrun: %w", err)
	}

	// Listen first: a port in use fails before anything is started.
	mainLn, err := net.Listen("tcp", net.JoinHostPort(DefaultHost, strconv.Itoa(cfg.Port)))
	if err != nil {
		return fmt.Errorf("localrun: cannot listen on %s:%d: %w. Another program uses that port: stop it, or choose another port, e.g. PORT=%d make run",
			DefaultHost, cfg.Port, err, cfg.Port+1)
	}
	defer mainLn.Close()
	ebLn, err := ListenLoopback("the EventBridge endpoint")
	if err != nil {
		return err
	}
	defer ebLn.Close()
	fwdLn, forwardURL, err := ListenForward(cfg.ForwardURL)
	if err != nil {
		return err
	}
	if fwdLn != nil {
		defer fwdLn.Close()
	}
	baseURL := "http://" + mainLn.Addr().String()
	if err := lk.write(baseURL + PagePath); err != nil {
		return err
	}

	// The local services: install and start what is not running, create
	// the table and queues; stop at the end what this run started.
	svc := &services{cfg: cfg, stderr: sys.Stderr}
	if cfg.Services {
		defer func() {
			if derr := svc.down(); derr != nil {
				err = errors.Join(err, derr)
			}
		}()
		if err := svc.up(ctx); err != nil {
			return err
		}
	}
	if slices.Contains(svc.started, "ddb") {
		// A DynamoDB Local this run started holds no record yet: the files
		// of earlier runs would describe events the table no longer has.
		if err := rotateRunFiles(cfg.RunDir); err != nil {
			return err
		}
	}

	// The functions' environment: the runner's, with the stack's exports,
	// the tenants document and the local EventBridge endpoint.
	env := map[string]string{}
	for k, v := range svc.env {
		env[k] = v
	}
	for k, def := range map[string]string{"AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test"} {
		if env[k] == "" && cfg.Getenv(k) == "" {
			env[k] = def
		}
	}
	tenantsFile := cfg.TenantsFile
	if tenantsFile == "" {
		if tenantsFile, err = writeDemoTenants(cfg.RunDir, forwardURL); err != nil {
			return err
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
	env["AWS_ENDPOINT_URL_EVENTBRIDGE"] = "http://" + ebLn.Addr().String()
	for k, v := range env {
		if strings.HasPrefix(k, "AWS_") {
			if err := sys.Setenv(k, v); err != nil {
				return fmt.Errorf("localrun: set %s: %w", k, err)
			}
		}
	}
	getenv := func(k string) string {
		if v, ok := env[k]; ok {
			return v
		}
		return cfg.Getenv(k)
	}

	// Logs: human on a terminal, JSON otherwise; EMF metrics to a file.
	human := cfg.Human(sys.Terminal)
	tap := NewLogTap(sys.Stdout, human, human && sys.Terminal && getenv("NO_COLOR") == "")
	rs, rwarn, rerr := settings.LoadReceiver(getenv, intake.Defaults())
	log := obs.NewLogger(tap, rs.LogLevel)
	if rerr != nil {
		return fmt.Errorf("localrun: receiver configuration: %w", rerr)
	}
	ps, pwarn, perr := settings.LoadProcessor(getenv)
	if perr != nil {
		return fmt.Errorf("localrun: processor configuration: %w", perr)
	}
	metrics, err := os.OpenFile(filepath.Join(cfg.RunDir, MetricsFile), os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("localrun: metrics file: %w", err)
	}
	defer metrics.Close()
	metricsOut := &lockedWriter{w: metrics}

	// The functions, built as their Lambda main builds them.
	recvLog := log.With(slog.String("function", "receiver"))
	procLog := log.With(slog.String("function", "processor"))
	rwarn.Log(recvLog)
	pwarn.Log(procLog)
	recent := &Recent{}
	recv, err := intake.Build(ctx, rs, recvLog, metricsOut, ObserveSends(recvLog, ps.DLQURL), ObserveClaims(recent))
	if err != nil {
		return fmt.Errorf("localrun: build the receiver: %w", err)
	}
	proc, err := procwiring.Build(ctx, ps, procLog, metricsOut, ObserveSends(procLog, ps.DLQURL))
	if err != nil {
		return fmt.Errorf("localrun: build the processor: %w", err)
	}

	// The runner's own clients: event source mappings, page, replay.
	awsCfg, err := config.LoadDefaultConfig(ctx, config.WithLogger(awslog.New(log)), ObserveSends(log, ps.DLQURL))
	if err != nil {
		return fmt.Errorf("localrun: AWS config: %w", err)
	}
	sqsClient := sqs.NewFromConfig(awsCfg)
	db := dynamodb.NewFromConfig(awsCfg)
	// Replays from the page are written as function "page" in the history.
	table, err := store.New(store.Config{Client: db, TableName: rs.TableName, Function: ReplayFunction})
	if err != nil {
		return err
	}
	mainQueue, err := queue.New(queue.Config{Client: sqsClient, URL: ps.QueueURL})
	if err != nil {
		return err
	}
	mainARN, err := QueueARN(ctx, sqsClient, ps.QueueURL)
	if err != nil {
		return err
	}
	pollers := []*Poller{{
		Name: "processor", Client: sqsClient, QueueURL: ps.QueueURL, QueueARN: mainARN, Region: awsCfg.Region,
		Handle: proc.Handle, Timeout: ps.Lease, Concurrency: 2, Log: procLog,
		OnBatch: logBatch(procLog, "processor", StageProcessing),
	}}
	dlqARN, err := QueueARN(ctx, sqsClient, ps.DLQURL)
	if err != nil {
		return err
	}
	fx := functionsEnv{getenv: getenv, log: log, metrics: metricsOut, sqs: sqsClient, region: awsCfg.Region,
		dlqURL: ps.DLQURL, dlqARN: dlqARN, sweepEvery: cfg.SweepEvery}
	morePollers, schedules, err := fx.compensatorAndSweeper(ctx)
	if err != nil {
		return err
	}
	pollers = append(pollers, morePollers...)

	// Servers: receiver + page, EventBridge, forward target.
	outcomes := filepath.Join(cfg.RunDir, OutcomesFile)
	forwarded := filepath.Join(cfg.RunDir, ForwardedFile)
	ts, err := settings.LoadTargets(getenv)
	if err != nil {
		return err
	}
	gate, err := targetsdb.New(targetsdb.TableConfig{Client: db, TableName: rs.TableName, Config: targets.Config{}.With(ts)})
	if err != nil {
		return err
	}
	drainer, err := drain.New(drain.Config{Store: table, Gate: gate, Queue: mainQueue, Logger: log})
	if err != nil {
		return err
	}
	// The page's Pause and Resume act as `hookwall pause|resume` do,
	// publishing their operational events on EVENT_BUS_NAME.
	ops, err := bus.New(bus.Config{Client: eventbridge.NewFromConfig(awsCfg), BusName: getenv("EVENT_BUS_NAME")})
	if err != nil {
		return err
	}
	cc := control.Config{Gate: gate, Held: table, Drain: drainer}
	if ops != nil {
		cc.Ops = ops
	}
	controls, err := control.New(cc)
	if err != nil {
		return err
	}
	// The page's recover panel runs the jobs `hookwall recover` runs, at
	// the targets' rate, publishing hookwall.event.recovered.
	jc := recovery.Config{DB: db, TableName: rs.TableName, Store: table, Queue: mainQueue, Limiter: gate, Window: rs.DedupWindow}
	if ops != nil {
		jc.Ops = ops
	}
	jobs, err := recovery.New(jc)
	if err != nil {
		return err
	}
	page := &Page{DB: db, Table: rs.TableName, Recent: recent, Replay: table, Queue: mainQueue, Window: rs.DedupWindow, Log: log,
		Info:    [][2]string{{"table", rs.TableName}, {"queue", queueName(ps.QueueURL)}, {"outcomes", outcomes}, {"forward target", forwardURL}},
		Control: controls, Jobs: jobs}
	defer page.Close()
	port := mainLn.Addr().(*net.TCPAddr).Port
	mux := Handler(port, recv.HandleAPIGateway, rs.MaxBody, recvLog, page)
	servers := &Servers{Timeouts: cfg.Timeouts}
	servers.Serve(mainLn, mux)
	servers.Serve(ebLn, &EventBridge{Path: outcomes, Log: log})
	servers.ServeForward(fwdLn, forwarded, log)
	defer servers.Shutdown(ctx)

	sources := StartSources(ctx, log, pollers, schedules)
	defer sources.Cancel()

	// runner.json: how the CLI and "hookwall-run send" find this runner.
	d := runfile.Info{PID: os.Getpid(), URL: baseURL, TenantsFile: tenantsFile, Env: map[string]string{
		"TABLE_NAME": rs.TableName, "QUEUE_URL": ps.QueueURL, "DLQ_URL": ps.DLQURL, "AWS_REGION": awsCfg.Region,
		"HOOKWALL_TENANTS_FILE": tenantsFile,
		// The CLI's pause, resume and recover publish on the runner's bus,
		// through its local EventBridge endpoint, as the page's do.
		"EVENT_BUS_NAME": getenv("EVENT_BUS_NAME"), "AWS_ENDPOINT_URL_EVENTBRIDGE": getenv("AWS_ENDPOINT_URL_EVENTBRIDGE"),
	}}
	var configured []string
	d.Tenants, configured = TenantsOf(tenantsFile)
	ddbURL, sqsURL := getenv("AWS_ENDPOINT_URL_DYNAMODB"), getenv("AWS_ENDPOINT_URL_SQS")
	d.Env["AWS_ENDPOINT_URL_DYNAMODB"], d.Env["AWS_ENDPOINT_URL_SQS"] = ddbURL, sqsURL
	if loopbackURL(ddbURL) && loopbackURL(sqsURL) { // local services: their made-up credentials
		d.Env["AWS_ACCESS_KEY_ID"], d.Env["AWS_SECRET_ACCESS_KEY"] = getenv("AWS_ACCESS_KEY_ID"), getenv("AWS_SECRET_ACCESS_KEY")
	}
	discoveryPath, err := runfile.Write(cfg.RunDir, d)
	if err != nil {
		return err
	}
	defer os.Remove(discoveryPath)

	printBanner(sys, cfg, banner{
		base: baseURL, forward: forwardURL, localForward: fwdLn != nil, tenants: tenantsFile, demo: cfg.TenantsFile == "",
		outcomes: outcomes, forwarded: forwarded, table: rs.TableName, queue: queueName(ps.QueueURL), dlq: queueName(ps.DLQURL),
		ddb: getenv("AWS_ENDPOINT_URL_DYNAMODB"), sqs: getenv("AWS_ENDPOINT_URL_SQS"), started: svc.started,
		functions: functionNames(pollers, schedules), configured: configured,
	})
	if !human { // on a terminal the banner says it
		log.Info("hookwall-run: ready", slog.String("url", baseURL), slog.String("page", baseURL+PagePath),
			slog.String("forward_url", forwardURL), slog.String("outcomes", outcomes), slog.String("tenants", tenantsFile))
	}

	select {
	case <-ctx.Done():
	case err = <-servers.Failed():
	}
	fmt.Fprintln(sys.Stderr, "\nhookwall-run: stopping (pollers, servers"+
		map[bool]string{true: ", then the local services this run started: " + strings.Join(svc.started, ", "), false: ""}[len(svc.started) > 0]+
		"). Ctrl-C again to stop without waiting for the batches being handled.")
	sources.Stop(sys.Hurry, sys.Stderr, "hookwall-run")
	return err
}

// ReplayFunction is the function name a replay from the page writes in the
// event's history.
const ReplayFunction = "page"

// Handler is the runner's main HTTP handler on port: the receiver's route
// through the API Gateway adapter (bodies cut at maxBody, the receiver's
// limit) for anyone, and, for the runner's own loopback origin only
// ([LocalOnly]), the events API (intake.EventsRoute, IAM-protected on AWS)
// through the same adapter, the page and its API.
func Handler(port int, recv APIGatewayHandler, maxBody int64, recvLog *slog.Logger, page http.Handler) http.Handler {
	local := http.NewServeMux()
	local.Handle(intake.EventsRoute, &APIGateway{Handle: recv, Timeout: ReceiverTimeout, Log: recvLog, MaxBody: maxBody,
		RouteKey: intake.EventsRoute, Params: []string{"provider", "tenant", "key"}})
	local.Handle(PagePath, page)
	local.Handle("GET /{$}", http.RedirectHandler(PagePath, http.StatusFound))
	mux := http.NewServeMux()
	mux.Handle(Route, &APIGateway{Handle: recv, Timeout: ReceiverTimeout, Log: recvLog, MaxBody: maxBody})
	mux.Handle("/", LocalOnly{Port: port, Next: local})
	return mux
}

// functionNames lists what the runner drives, for the banner.
func functionNames(pollers []*Poller, schedules []*Schedule) []string {
	var names []string
	for _, p := range pollers {
		names = append(names, p.Name+" ← "+queueName(p.QueueURL))
	}
	for _, s := range schedules {
		names = append(names, s.Name+" every "+s.Every.String())
	}
	return names
}

// Loop invokes s.Run every s.Every until ctx is done, each run with a
// timeout of s.Every that ctx's end does not cut short; a failed run is
// logged to log as a warning.
func (s *Schedule) Loop(ctx context.Context, log *slog.Logger) {
	t := time.NewTicker(s.Every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		ictx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.Every)
		if err := s.Run(ictx); err != nil {
			log.WarnContext(ctx, s.Name+": run failed", slog.Any("error", err))
		}
		cancel()
	}
}

// QueueARN asks SQS for a queue's ARN.
func QueueARN(ctx context.Context, c *sqs.Client, url string) (string, error) {
	out, err := c.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl: aws.String(url), AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn},
	})
	if err != nil {
		return "", fmt.Errorf("localrun: queue %s: %w", url, err)
	}
	return out.Attributes[string(sqstypes.QueueAttributeNameQueueArn)], nil
}

// lockedWriter serialises writes: the functions share one metrics file.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

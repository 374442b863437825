package samlocal

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/hookwall/hookwall/dev/cmd/hookwall-run/localrun"
	"github.com/hookwall/hookwall/dev/cmd/hookwall-sam/dockershim"
	"github.com/hookwall/hookwall/shared/awsconf"
	"github.com/hookwall/hookwall/shared/runfile"
)

// Files in the run directory.
const (
	APILog        = "start-api.log"
	LambdaLog     = "start-lambda.log"
	EnvJSONFile   = "env.json"
	ForwardedFile = localrun.ForwardedFile
)

// Region is the local stack's region.
const Region = "us-east-1"

// invokeMargin is added to a function's timeout for the poller's deadline
// on one invocation: a cold invocation also creates and starts the
// container.
const invokeMargin = 30 * time.Second

// readyTimeout bounds how long the SAM CLI may take to listen.
const readyTimeout = 3 * time.Minute

// stopGrace bounds how long the SAM CLI may take to stop its containers.
const stopGrace = 30 * time.Second

// System is what [Run] needs from its process.
type System struct {
	// Stdout receives the logs, Stderr the banner and the steps' messages.
	Stdout, Stderr io.Writer
	// Terminal says Stdout is a terminal (human logs unless configured).
	Terminal bool
	// Setenv sets a variable of this process (os.Setenv).
	Setenv func(key, value string) error
	// RunnerBin is hookwall-run, whose "send" the banner's commands use.
	RunnerBin string
	// WorkDir is the working directory, to print short paths.
	WorkDir string
	// Hurry is closed on a second Ctrl-C: stop without waiting for the
	// batches being handled.
	Hurry <-chan struct{}
}

// Stack is what [Prepare] readied: the engine, the image, the build, the
// tenants and env.json, and the shim; Close undoes what it started.
type Stack struct {
	Config   Config
	Template *Template
	SAM      *SAM
	// Env is what reaches the local services (endpoints, queue URLs, credentials).
	Env map[string]string
	// TenantsFile is the tenants document copied into the build.
	TenantsFile string
	// Shim is the Docker API shim the SAM CLI talks to.
	Shim *dockershim.Shim

	log      *slog.Logger
	stderr   io.Writer
	services *localrun.Services
	engine   bool // this stack started the engine
	stopShim func()
}

// Prepare readies the local SAM stack: the local services (as `make run`
// starts them), the Docker engine (scripts/docker-engine.sh: started when
// none answers), the base image (scripts/lambda-image.sh, cached), `sam
// build` for cfg.Arch, the tenants document in every build output
// (tenantsDoc), env.json for the local services' ports, and the Docker
// shim on the run directory's socket. On error, what it started is
// stopped again.
func Prepare(ctx context.Context, cfg Config, tenantsDoc []byte, log *slog.Logger, stderr io.Writer, setenv func(k, v string) error) (st *Stack, err error) {
	root := cfg.Run.Root
	st = &Stack{Config: cfg, log: log, stderr: stderr}
	defer func() {
		if err != nil {
			err = errors.Join(err, st.Close())
			st = nil
		}
	}()
	if st.Template, err = ReadTemplate(filepath.Join(root, "template.yaml")); err != nil {
		return st, err
	}
	if _, statErr := os.Stat(cfg.SAM); statErr != nil {
		return st, fmt.Errorf("samlocal: no SAM CLI at %s: run make sam-tools (or set SAM)", cfg.SAM)
	}
	if err := os.MkdirAll(cfg.Run.RunDir, 0o755); err != nil {
		return st, fmt.Errorf("samlocal: run directory: %w", err)
	}
	step := func(s string) { fmt.Fprintf(stderr, "sam-local: %s\n", s) }

	// The local services; the main queue's redrive as the template's.
	if os.Getenv("MAX_RECEIVE_COUNT") == "" && st.Template.MaxReceiveCount > 0 {
		_ = setenv("MAX_RECEIVE_COUNT", strconv.Itoa(st.Template.MaxReceiveCount))
	}
	if cfg.Run.Services {
		step("the local services (DynamoDB Local, SQS server): scripts/services-up.sh")
		st.services, err = localrun.StartServices(ctx, cfg.Run, stderr)
		if err != nil {
			return st, err
		}
		st.Env = st.services.Env()
	} else {
		st.Env = map[string]string{}
		for _, k := range []string{"AWS_ENDPOINT_URL_DYNAMODB", "AWS_ENDPOINT_URL_SQS", "QUEUE_URL", "DLQ_URL"} {
			st.Env[k] = cfg.Run.Getenv(k)
		}
	}
	for k, def := range map[string]string{"AWS_REGION": Region, "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test"} {
		if st.Env[k] == "" {
			st.Env[k] = def
		}
	}
	for k, v := range st.Env {
		if strings.HasPrefix(k, "AWS_") {
			if err := setenv(k, v); err != nil {
				return st, fmt.Errorf("samlocal: set %s: %w", k, err)
			}
		}
	}

	// The engine: started when none answers, stopped at the end if so.
	engineDir := filepath.Join(root, ".local", "docker")
	pidFile := filepath.Join(engineDir, "dockerd.pid")
	hadPID := fileExists(pidFile)
	if cfg.Engine {
		step("the Docker engine: scripts/docker-engine.sh up")
		if _, err := Script(ctx, root, nil, stderr, "docker-engine.sh", "up"); err != nil {
			return st, fmt.Errorf("%w\nsam-local: the Docker engine cannot run here; make run runs the same functions without Docker", err)
		}
		st.engine = !hadPID && fileExists(pidFile)
	}

	step("the local Lambda base image for " + cfg.Arch + ": scripts/lambda-image.sh")
	image, err := Script(ctx, root, nil, stderr, "lambda-image.sh", cfg.Arch)
	if err != nil {
		return st, err
	}

	st.Shim = &dockershim.Shim{Log: log.With(slog.String("function", "sam-local"))}
	if cfg.IAMRecord != "" {
		st.Shim.Env = []string{awsconf.RecordEnv + "=" + awsconf.RecordLog} // collected by Run from the output
	}
	sock := ShimSocket(cfg.Run.RunDir)
	if err := os.MkdirAll(filepath.Dir(sock), 0o700); err != nil {
		return st, fmt.Errorf("samlocal: the shim's directory: %w", err)
	}
	if st.stopShim, err = st.Shim.Listen(context.WithoutCancel(ctx), sock); err != nil {
		return st, err
	}
	st.SAM = &SAM{Bin: cfg.SAM, Root: root, Arch: cfg.Arch, Image: image, DockerHost: "unix://" + sock,
		EnvJSON: filepath.Join(cfg.Run.RunDir, EnvJSONFile), Stderr: stderr}

	step("sam build --parameter-overrides Architecture=" + cfg.Arch + " into " + localrun.ShortPath(root, st.SAM.BuildDir()) +
		" (each function's make build-<LogicalId>, GOARCH=" + GOARCH(cfg.Arch) + "; the first build takes minutes, later ones are cached)")
	if err := st.SAM.Build(ctx); err != nil {
		return st, err
	}
	if err := st.SAM.PutTenants(tenantsDoc); err != nil {
		return st, err
	}
	envJSON, err := Script(ctx, root, []string{
		"DDB_PORT=" + strconv.Itoa(cfg.Run.DDBPort), "SQS_PORT=" + strconv.Itoa(cfg.Run.SQSPort),
		"TABLE_NAME=" + cfg.Run.TableName, "QUEUE_NAME=" + cfg.Run.QueueName, "DLQ_NAME=" + cfg.Run.DLQName,
	}, stderr, "env-json.sh")
	if err != nil {
		return st, err
	}
	if err := os.WriteFile(st.SAM.EnvJSON, []byte(envJSON+"\n"), 0o644); err != nil {
		return st, fmt.Errorf("samlocal: env.json: %w", err)
	}
	return st, nil
}

// Close removes the Lambda containers the SAM CLI left, stops the shim,
// then the engine and the local services if Prepare started them.
func (st *Stack) Close() error {
	var errs []error
	if st.Shim != nil {
		if ids := st.Shim.Created(); len(ids) > 0 {
			// Through the engine itself: the ones SAM removed are gone already.
			out, _ := exec.Command("docker", append([]string{"rm", "-f"}, ids...)...).CombinedOutput()
			if n := strings.Count(string(out), "\n") - strings.Count(string(out), "No such container"); n > 0 {
				fmt.Fprintf(st.stderr, "sam-local: removed %d Lambda container(s) the SAM CLI left\n", n)
			}
		}
	}
	if st.stopShim != nil {
		st.stopShim()
	}
	if st.engine {
		if _, err := Script(context.Background(), st.Config.Run.Root, nil, st.stderr, "docker-engine.sh", "down"); err != nil {
			errs = append(errs, err)
		}
	}
	if st.services != nil {
		if err := st.services.Stop(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Started says what Prepare started (and Close stops), for the banner.
func (st *Stack) Started() []string {
	var s []string
	if st.engine {
		s = append(s, "the Docker engine")
	}
	if st.services != nil {
		for _, name := range st.services.Started() {
			s = append(s, map[string]string{"ddb": "DynamoDB Local", "sqs": "the SQS server"}[name])
		}
	}
	return s
}

// ShimSocket is where the Docker shim of the stack of runDir listens:
// outside the repository (a socket under CodeUri breaks `sam build`'s
// hashing) and short enough for a unix socket's path.
func ShimSocket(runDir string) string {
	sum := sha256.Sum256([]byte(runDir))
	return filepath.Join(os.TempDir(), fmt.Sprintf("hookwall-sam-%d", os.Getuid()), hex.EncodeToString(sum[:6])+".sock")
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// Run runs the local SAM stack until ctx is done, then stops everything it
// started. See the package documentation.
func Run(ctx context.Context, cfg Config, sys System) (err error) {
	lk, err := localrun.AcquireLock(cfg.Run.RunDir, localrun.HolderSamLocal)
	if err != nil {
		return err
	}
	defer lk.Release()

	human := cfg.Run.Human(sys.Terminal)
	tap := localrun.NewLogTap(sys.Stdout, human, human && os.Getenv("NO_COLOR") == "")
	log := slog.New(slog.NewJSONHandler(tap, nil))

	// Ports first: one in use fails before anything is started.
	for _, p := range []struct {
		name string
		port int
	}{{"SAM_API_PORT", cfg.APIPort}, {"SAM_LAMBDA_PORT", cfg.LambdaPort}} {
		ln, lerr := net.Listen("tcp", net.JoinHostPort(localrun.DefaultHost, strconv.Itoa(p.port)))
		if lerr != nil {
			return fmt.Errorf("samlocal: port %d is in use (%v): stop what uses it or choose another, e.g. %s=%d make sam-local", p.port, lerr, p.name, p.port+10)
		}
		ln.Close()
	}
	fwdLn, forwardURL, err := localrun.ListenForward(cfg.Run.ForwardURL)
	if err != nil {
		return err
	}
	if fwdLn != nil {
		defer fwdLn.Close()
	}

	// The tenants document, into the run directory (for the send commands)
	// and into every build output (for the functions).
	tenantsFile := cfg.Run.TenantsFile
	var doc []byte
	if tenantsFile == "" {
		if doc, err = localrun.DemoTenants(forwardURL); err != nil {
			return err
		}
		tenantsFile = filepath.Join(cfg.Run.RunDir, "tenants.json")
		if err := os.WriteFile(tenantsFile, doc, 0o600); err != nil {
			return fmt.Errorf("samlocal: write the demo tenants: %w", err)
		}
	} else if doc, err = os.ReadFile(tenantsFile); err != nil {
		return fmt.Errorf("samlocal: tenants: %w", err)
	}

	st, err := Prepare(ctx, cfg, doc, log, sys.Stderr, sys.Setenv)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, st.Close()) }()

	emit := func(name string) func(string) {
		return func(line string) {
			if cfg.IAMRecord != "" {
				if rec, ok := awsconf.ParseRecordLine(line); ok {
					if err := awsconf.WriteRecord(cfg.IAMRecord, rec); err != nil {
						log.Error("hookwall-sam: runtime IAM record", slog.String("error", err.Error()))
					}
				}
			}
			if human {
				// On a terminal, the functions' metric lines (EMF) and blank lines
				// are left to the log files.
				if strings.TrimSpace(line) == "" || strings.Contains(line, `"_aws":{"CloudWatchMetrics"`) {
					return
				}
				line = tap.Human([]byte(line))
			}
			fmt.Fprintf(sys.Stdout, "%-6s | %s\n", name, line)
		}
	}
	apiBase := fmt.Sprintf("http://%s:%d", localrun.DefaultHost, cfg.APIPort)
	lambdaBase := fmt.Sprintf("http://%s:%d", localrun.DefaultHost, cfg.LambdaPort)
	fmt.Fprintf(sys.Stderr, "sam-local: sam local start-lambda on %s and sam local start-api on %s (containers: %s, --warm-containers LAZY)\n",
		lambdaBase, apiBase, st.SAM.Image)
	lambdaLog := filepath.Join(cfg.Run.RunDir, LambdaLog)
	apiLog := filepath.Join(cfg.Run.RunDir, APILog)
	procs := []*Process{}
	defer func() {
		for i := len(procs) - 1; i >= 0; i-- {
			if serr := procs[i].Stop(stopGrace); serr != nil {
				err = errors.Join(err, serr)
			}
		}
	}()
	lp, err := Start("lambda", st.SAM.Command(ctx, "start-lambda", "--host", localrun.DefaultHost, "--port", strconv.Itoa(cfg.LambdaPort),
		"--warm-containers", "LAZY"), emit("lambda"), lambdaLog)
	if err != nil {
		return err
	}
	procs = append(procs, lp)
	ap, err := Start("api", st.SAM.Command(ctx, "start-api", "--host", localrun.DefaultHost, "--port", strconv.Itoa(cfg.APIPort),
		"--warm-containers", "LAZY"), emit("api"), apiLog)
	if err != nil {
		return err
	}
	procs = append(procs, ap)
	if err := lp.WaitReady(ctx, net.JoinHostPort(localrun.DefaultHost, strconv.Itoa(cfg.LambdaPort)), readyTimeout, lambdaLog); err != nil {
		return err
	}
	if err := ap.WaitReady(ctx, net.JoinHostPort(localrun.DefaultHost, strconv.Itoa(cfg.APIPort)), readyTimeout, apiLog); err != nil {
		return err
	}

	// The event sources: the queues' pollers invoke the processor and the
	// compensator through start-lambda; the schedule the sweeper.
	sqsClient := sqs.New(sqs.Options{Region: Region, BaseEndpoint: aws.String(st.Env["AWS_ENDPOINT_URL_SQS"]),
		Credentials: credentials.NewStaticCredentialsProvider(st.Env["AWS_ACCESS_KEY_ID"], st.Env["AWS_SECRET_ACCESS_KEY"], "")})
	iv := &Invoker{Client: NewLambdaClient(lambdaBase, Region), Log: log}
	queueURL := map[string]string{"EventsQueue": st.Env["QUEUE_URL"], "EventsDeadLetterQueue": st.Env["DLQ_URL"]}
	var pollers []*localrun.Poller
	for _, fn := range []string{Processor, Compensator} {
		es := st.Template.SQS[fn]
		if !es.Partial {
			return fmt.Errorf("samlocal: %s's SQS event has no FunctionResponseTypes: [ReportBatchItemFailures]; the local event source implements only partial batch responses", fn)
		}
		url := queueURL[es.Queue]
		if url == "" {
			return fmt.Errorf("samlocal: %s reads queue %q, which the local stack does not have", fn, es.Queue)
		}
		arn, err := localrun.QueueARN(ctx, sqsClient, url)
		if err != nil {
			return err
		}
		name := strings.ToLower(strings.TrimSuffix(fn, "Function"))
		pollers = append(pollers, &localrun.Poller{
			Name: name, Client: sqsClient, QueueURL: url, QueueARN: arn, Region: Region,
			Handle: iv.BatchHandler(fn), BatchSize: es.BatchSize, Wait: es.Window,
			Timeout: st.Template.Timeout[fn] + invokeMargin, Concurrency: 1,
			Log: log.With(slog.String("function", name)),
		})
	}
	sweepEvery := st.Template.Sweep
	if cfg.SweepEvery > 0 {
		sweepEvery = cfg.SweepEvery
	}
	sweeper := &localrun.Schedule{Name: "sweeper", Every: sweepEvery, Run: func(ctx context.Context) error {
		raw, err := localrun.ScheduledEvent(time.Now(), Region, "hookwall-sam-local-sweep")
		if err != nil {
			return err
		}
		_, err = iv.Invoke(ctx, Compensator, raw)
		return err
	}}

	// The forward target standing for the business.
	forwarded := filepath.Join(cfg.Run.RunDir, ForwardedFile)
	var servers localrun.Servers
	servers.ServeForward(fwdLn, forwarded, log)
	defer servers.Shutdown(ctx)

	sources := localrun.StartSources(ctx, log, pollers, []*localrun.Schedule{sweeper})
	defer sources.Cancel()

	// runner.json: the CLI and "hookwall-run send" find this stack through
	// HOOKWALL_RUN_DIR=<run dir>.
	info := runfile.Info{PID: os.Getpid(), URL: apiBase, TenantsFile: tenantsFile, Env: map[string]string{
		"TABLE_NAME": cfg.Run.TableName, "QUEUE_URL": st.Env["QUEUE_URL"], "DLQ_URL": st.Env["DLQ_URL"], "AWS_REGION": Region,
		"HOOKWALL_TENANTS_FILE": tenantsFile, "AWS_ENDPOINT_URL_DYNAMODB": st.Env["AWS_ENDPOINT_URL_DYNAMODB"],
		"AWS_ENDPOINT_URL_SQS": st.Env["AWS_ENDPOINT_URL_SQS"],
		"AWS_ACCESS_KEY_ID":    st.Env["AWS_ACCESS_KEY_ID"], "AWS_SECRET_ACCESS_KEY": st.Env["AWS_SECRET_ACCESS_KEY"],
	}}
	var configured []string
	info.Tenants, configured = localrun.TenantsOf(tenantsFile)
	discovery, err := runfile.Write(cfg.Run.RunDir, info)
	if err != nil {
		return err
	}
	defer os.Remove(discovery)
	_ = lk.Note(apiBase)

	printBanner(sys, banner{
		api: apiBase, lambda: lambdaBase, forward: forwardURL, localForward: fwdLn != nil, forwarded: forwarded,
		tenants: tenantsFile, demo: cfg.Run.TenantsFile == "", image: st.SAM.Image, arch: cfg.Arch,
		table: cfg.Run.TableName, queue: cfg.Run.QueueName, dlq: cfg.Run.DLQName,
		ddb: st.Env["AWS_ENDPOINT_URL_DYNAMODB"], sqs: st.Env["AWS_ENDPOINT_URL_SQS"],
		pollers: pollers, sweepEvery: sweepEvery, started: st.Started(), runDir: cfg.Run.RunDir, configured: configured,
	})
	if !human {
		log.Info("hookwall-sam: ready", slog.String("api", apiBase), slog.String("lambda", lambdaBase),
			slog.String("forward_url", forwardURL), slog.String("tenants", tenantsFile), slog.String("image", st.SAM.Image),
			slog.String("arch", cfg.Arch))
	}

	select {
	case <-ctx.Done():
	case <-lp.Done():
		err = fmt.Errorf("samlocal: sam local start-lambda exited (log: %s)", lambdaLog)
	case <-ap.Done():
		err = fmt.Errorf("samlocal: sam local start-api exited (log: %s)", apiLog)
	}
	fmt.Fprintln(sys.Stderr, "\nsam-local: stopping (event sources, then sam local and its containers"+
		map[bool]string{true: ", then what this run started: " + strings.Join(st.Started(), ", "), false: ""}[len(st.Started()) > 0]+
		"). Ctrl-C again to stop without waiting for the batches being handled.")
	sources.Stop(sys.Hurry, sys.Stderr, "sam-local")
	return err
}

package samlocal

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/hookwall/hookwall/dev/cmd/hookwall-run/localrun"
	"github.com/hookwall/hookwall/dev/cmd/hookwall-sam/dockershim"
	"github.com/hookwall/hookwall/shared/aws/awsconf"
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
// started. See the package documentation. Its stages, in order: the lock
// and the logs, the ports, the tenants document, the stack (Prepare), sam
// local start-lambda and start-api, the event sources, the forward target,
// runner.json and the banner; then it waits and stops.
func Run(ctx context.Context, cfg Config, sys System) (err error) {
	lk, err := localrun.AcquireLock(cfg.Run.RunDir, localrun.HolderSamLocal)
	if err != nil {
		return err
	}
	defer lk.Release()

	human := cfg.Run.Human(sys.Terminal)
	tap := localrun.NewLogTap(sys.Stdout, human, human && os.Getenv("NO_COLOR") == "")
	log := slog.New(slog.NewJSONHandler(tap, nil))

	if err := checkPorts(cfg); err != nil {
		return err
	}
	fwdLn, forwardURL, err := localrun.ListenForward(cfg.Run.ForwardURL)
	if err != nil {
		return err
	}
	if fwdLn != nil {
		defer fwdLn.Close()
	}
	tenantsFile, doc, err := tenantsDocument(cfg, forwardURL)
	if err != nil {
		return err
	}
	st, err := Prepare(ctx, cfg, doc, log, sys.Stderr, sys.Setenv)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, st.Close()) }()

	sam := &samServers{}
	defer func() { err = errors.Join(err, sam.stop()) }()
	if err := sam.start(ctx, cfg, st, lineEmitter(cfg, sys, human, tap, log), sys.Stderr); err != nil {
		return err
	}
	pollers, sweeper, err := eventSources(ctx, cfg, st, log, sam.lambdaBase)
	if err != nil {
		return err
	}

	// The forward target standing for the business.
	forwarded := filepath.Join(cfg.Run.RunDir, ForwardedFile)
	var servers localrun.Servers
	servers.ServeForward(fwdLn, forwarded, log)
	defer servers.Shutdown(ctx)

	sources := localrun.StartSources(ctx, log, pollers, []*localrun.Schedule{sweeper})
	defer sources.Cancel()

	discovery, configured, err := writeRunFile(cfg, st, sam.apiBase, tenantsFile)
	if err != nil {
		return err
	}
	defer os.Remove(discovery)
	_ = lk.Note(sam.apiBase)

	printBanner(sys, banner{
		api: sam.apiBase, lambda: sam.lambdaBase, forward: forwardURL, localForward: fwdLn != nil, forwarded: forwarded,
		tenants: tenantsFile, demo: cfg.Run.TenantsFile == "", image: st.SAM.Image, arch: cfg.Arch,
		table: cfg.Run.TableName, queue: cfg.Run.QueueName, dlq: cfg.Run.DLQName,
		ddb: st.Env["AWS_ENDPOINT_URL_DYNAMODB"], sqs: st.Env["AWS_ENDPOINT_URL_SQS"],
		pollers: pollers, sweepEvery: sweeper.Every, started: st.Started(), runDir: cfg.Run.RunDir, configured: configured,
	})
	if !human {
		log.Info("hookwall-sam: ready", slog.String("api", sam.apiBase), slog.String("lambda", sam.lambdaBase),
			slog.String("forward_url", forwardURL), slog.String("tenants", tenantsFile), slog.String("image", st.SAM.Image),
			slog.String("arch", cfg.Arch))
	}

	select {
	case <-ctx.Done():
	case <-sam.lambda.Done():
		err = fmt.Errorf("samlocal: sam local start-lambda exited (log: %s)", sam.lambdaLog)
	case <-sam.api.Done():
		err = fmt.Errorf("samlocal: sam local start-api exited (log: %s)", sam.apiLog)
	}
	fmt.Fprintln(sys.Stderr, "\nsam-local: stopping (event sources, then sam local and its containers"+
		map[bool]string{true: ", then what this run started: " + strings.Join(st.Started(), ", "), false: ""}[len(st.Started()) > 0]+
		"). Ctrl-C again to stop without waiting for the batches being handled.")
	sources.Stop(sys.Hurry, sys.Stderr, "sam-local")
	return err
}

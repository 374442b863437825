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
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/hookwall/hookwall/functions/processor/handlers"
	"github.com/hookwall/hookwall/shared/engine/intake"
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
// started them. See the package documentation. Its stages, in order: the
// lock, the teams' settings, the listeners, the services, the functions'
// environment, the functions, the runner's own parts, the servers and
// event sources, runner.json and the banner; then it waits and stops.
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
	ln, err := listen(cfg)
	if err != nil {
		return err
	}
	defer ln.close()
	if err := lk.write(ln.baseURL + PagePath); err != nil {
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

	env, err := functionsEnvironment(cfg, sys, svc.env, ln)
	if err != nil {
		return err
	}
	fns, err := buildFunctions(ctx, cfg, sys, env)
	if err != nil {
		return err
	}
	defer fns.metricsFile.Close()
	parts, err := buildRunnerParts(ctx, cfg, env, fns, ln.forwardURL)
	if err != nil {
		return err
	}
	defer parts.page.Close()

	// Servers: receiver + page, EventBridge, forward target.
	port := ln.main.Addr().(*net.TCPAddr).Port
	mux := Handler(port, fns.recv.HandleAPIGateway, fns.rs.MaxBody, fns.recvLog, parts.page)
	servers := &Servers{Timeouts: cfg.Timeouts}
	servers.Serve(ln.main, mux)
	servers.Serve(ln.eventBridge, &EventBridge{Path: parts.outcomes, Log: fns.log})
	servers.ServeForward(ln.forward, parts.forwarded, fns.log)
	defer servers.Shutdown(ctx)

	sources := StartSources(ctx, fns.log, parts.pollers, parts.schedules)
	defer sources.Cancel()

	discoveryPath, configured, err := writeRunFile(cfg.RunDir, ln.baseURL, env, fns, parts.region)
	if err != nil {
		return err
	}
	defer os.Remove(discoveryPath)
	announce(sys, cfg, ln, env, fns, parts, svc.started, configured)

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

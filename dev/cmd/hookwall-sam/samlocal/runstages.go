package samlocal

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/hookwall/hookwall/dev/cmd/hookwall-run/localrun"
	"github.com/hookwall/hookwall/shared/aws/awsconf"
	"github.com/hookwall/hookwall/shared/config/runfile"
)

// The stages of [Run], in the order it runs them.

// checkPorts fails when SAM_API_PORT or SAM_LAMBDA_PORT is in use, before
// anything is started.
func checkPorts(cfg Config) error {
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
	return nil
}

// tenantsDocument returns the tenants file and its content: the configured
// one, or the demo tenants written into the run directory (for the send
// commands; Prepare copies the content into every build output).
func tenantsDocument(cfg Config, forwardURL string) (file string, doc []byte, err error) {
	file = cfg.Run.TenantsFile
	if file != "" {
		if doc, err = os.ReadFile(file); err != nil {
			return "", nil, fmt.Errorf("samlocal: tenants: %w", err)
		}
		return file, doc, nil
	}
	if doc, err = localrun.DemoTenants(forwardURL); err != nil {
		return "", nil, err
	}
	file = filepath.Join(cfg.Run.RunDir, "tenants.json")
	if err := os.WriteFile(file, doc, 0o600); err != nil {
		return "", nil, fmt.Errorf("samlocal: write the demo tenants: %w", err)
	}
	return file, doc, nil
}

// lineEmitter returns, for a sam local process's name, what prints each of
// its output lines: a runtime IAM record is written when IAMRecord is set;
// on a terminal the lines are made human and the metric (EMF) and blank
// lines left to the log files.
func lineEmitter(cfg Config, sys System, human bool, tap *localrun.LogTap, log *slog.Logger) func(name string) func(string) {
	return func(name string) func(string) {
		return func(line string) {
			if cfg.IAMRecord != "" {
				if rec, ok := awsconf.ParseRecordLine(line); ok {
					if err := awsconf.WriteRecord(cfg.IAMRecord, rec); err != nil {
						log.Error("hookwall-sam: runtime IAM record", slog.String("error", err.Error()))
					}
				}
			}
			if human {
				if strings.TrimSpace(line) == "" || strings.Contains(line, `"_aws":{"CloudWatchMetrics"`) {
					return
				}
				line = tap.Human([]byte(line))
			}
			fmt.Fprintf(sys.Stdout, "%-6s | %s\n", name, line)
		}
	}
}

// samServers are sam local start-lambda and start-api.
type samServers struct {
	lambda, api         *Process
	lambdaBase, apiBase string
	lambdaLog, apiLog   string
	procs               []*Process // started, in order
}

// start starts sam local start-lambda and start-api (saying so on stderr)
// and waits until both answer.
func (s *samServers) start(ctx context.Context, cfg Config, st *Stack, emit func(name string) func(string), stderr io.Writer) error {
	s.apiBase = fmt.Sprintf("http://%s:%d", localrun.DefaultHost, cfg.APIPort)
	s.lambdaBase = fmt.Sprintf("http://%s:%d", localrun.DefaultHost, cfg.LambdaPort)
	fmt.Fprintf(stderr, "sam-local: sam local start-lambda on %s and sam local start-api on %s (containers: %s, --warm-containers LAZY)\n",
		s.lambdaBase, s.apiBase, st.SAM.Image)
	s.lambdaLog = filepath.Join(cfg.Run.RunDir, LambdaLog)
	s.apiLog = filepath.Join(cfg.Run.RunDir, APILog)
	var err error
	s.lambda, err = Start("lambda", st.SAM.Command(ctx, "start-lambda", "--host", localrun.DefaultHost, "--port", strconv.Itoa(cfg.LambdaPort),
		"--warm-containers", "LAZY"), emit("lambda"), s.lambdaLog)
	if err != nil {
		return err
	}
	s.procs = append(s.procs, s.lambda)
	s.api, err = Start("api", st.SAM.Command(ctx, "start-api", "--host", localrun.DefaultHost, "--port", strconv.Itoa(cfg.APIPort),
		"--warm-containers", "LAZY"), emit("api"), s.apiLog)
	if err != nil {
		return err
	}
	s.procs = append(s.procs, s.api)
	if err := s.lambda.WaitReady(ctx, net.JoinHostPort(localrun.DefaultHost, strconv.Itoa(cfg.LambdaPort)), readyTimeout, s.lambdaLog); err != nil {
		return err
	}
	return s.api.WaitReady(ctx, net.JoinHostPort(localrun.DefaultHost, strconv.Itoa(cfg.APIPort)), readyTimeout, s.apiLog)
}

// stop stops the processes start started, the last first.
func (s *samServers) stop() error {
	var err error
	for i := len(s.procs) - 1; i >= 0; i-- {
		if serr := s.procs[i].Stop(stopGrace); serr != nil {
			err = errors.Join(err, serr)
		}
	}
	return err
}

// eventSources are the functions' event sources: the queues' pollers
// invoke the processor and the compensator through start-lambda; the
// schedule the sweeper.
func eventSources(ctx context.Context, cfg Config, st *Stack, log *slog.Logger, lambdaBase string) ([]*localrun.Poller, *localrun.Schedule, error) {
	sqsClient := sqs.New(sqs.Options{Region: Region, BaseEndpoint: aws.String(st.Env["AWS_ENDPOINT_URL_SQS"]),
		Credentials: credentials.NewStaticCredentialsProvider(st.Env["AWS_ACCESS_KEY_ID"], st.Env["AWS_SECRET_ACCESS_KEY"], "")})
	iv := &Invoker{Client: NewLambdaClient(lambdaBase, Region), Log: log}
	queueURL := map[string]string{"EventsQueue": st.Env["QUEUE_URL"], "EventsDeadLetterQueue": st.Env["DLQ_URL"]}
	var pollers []*localrun.Poller
	for _, fn := range []string{Processor, Compensator} {
		es := st.Template.SQS[fn]
		if !es.Partial {
			return nil, nil, fmt.Errorf("samlocal: %s's SQS event has no FunctionResponseTypes: [ReportBatchItemFailures]; the local event source implements only partial batch responses", fn)
		}
		url := queueURL[es.Queue]
		if url == "" {
			return nil, nil, fmt.Errorf("samlocal: %s reads queue %q, which the local stack does not have", fn, es.Queue)
		}
		arn, err := localrun.QueueARN(ctx, sqsClient, url)
		if err != nil {
			return nil, nil, err
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
	return pollers, sweeper, nil
}

// writeRunFile writes runner.json: the CLI and "hookwall-run send" find
// this stack through HOOKWALL_RUN_DIR=<run dir>. It returns its path and the
// tenants' configured providers.
func writeRunFile(cfg Config, st *Stack, apiBase, tenantsFile string) (string, []string, error) {
	info := runfile.Info{PID: os.Getpid(), URL: apiBase, TenantsFile: tenantsFile, Env: map[string]string{
		"TABLE_NAME": cfg.Run.TableName, "QUEUE_URL": st.Env["QUEUE_URL"], "DLQ_URL": st.Env["DLQ_URL"], "AWS_REGION": Region,
		"HOOKWALL_TENANTS_FILE": tenantsFile, "AWS_ENDPOINT_URL_DYNAMODB": st.Env["AWS_ENDPOINT_URL_DYNAMODB"],
		"AWS_ENDPOINT_URL_SQS": st.Env["AWS_ENDPOINT_URL_SQS"],
		"AWS_ACCESS_KEY_ID":    st.Env["AWS_ACCESS_KEY_ID"], "AWS_SECRET_ACCESS_KEY": st.Env["AWS_SECRET_ACCESS_KEY"],
	}}
	var configured []string
	info.Tenants, configured = localrun.TenantsOf(tenantsFile)
	path, err := runfile.Write(cfg.Run.RunDir, info)
	if err != nil {
		return "", nil, err
	}
	return path, configured, nil
}

package chaos

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/hookwall/hookwall/dev/internal/localstack"
	"github.com/hookwall/hookwall/shared/base/repo"
)

// Stack is a private DynamoDB Local + SQS server pair started by
// scripts/services-up.sh on chosen ports, with its own run dir (PID files,
// logs, env file). It never touches the shared stack on ports 8000/9324.
type Stack struct {
	// DynamoURL and SQSURL are the servers' direct endpoints,
	// http://127.0.0.1:<port> (no proxy in between).
	DynamoURL, SQSURL string
	// DynamoPID and SQSPID are the server processes (java, node), for [Pause].
	DynamoPID, SQSPID int
	// Env holds the KEY=VALUE lines of the env file services-up.sh wrote:
	// AWS_ENDPOINT_URL_DYNAMODB, AWS_ENDPOINT_URL_SQS, TABLE_NAME, QUEUE_URL,
	// DLQ_URL, AWS_REGION, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY. The
	// endpoints are the direct ones; point Hookwall at a [Harness] instead to
	// inject faults.
	Env []string
	// Dir is the run dir: ddb.pid, sqs.pid, ddb.log, sqs.log, env.sh and the
	// output of the scripts (services-up.log, services-down.log).
	Dir string

	root      string   // repo root holding scripts/
	scriptEnv []string // environment both scripts run with
}

// Ports of the shared stack that a private stack must never take.
var sharedPorts = map[int]bool{8000: true, 9324: true}

// StartStack starts a private stack with run dir dir (created if missing;
// made absolute) and waits until both servers answer and the table and
// queues exist. It finds the repo root by walking up from the working
// directory to the go.mod of this module ([repo.FindRoot]). ctx bounds the
// start (DynamoDB Local may take tens of seconds on a loaded machine; the
// script itself gives up after SERVICES_START_TIMEOUT, default 90 s). On any
// error whatever was started is stopped again.
func StartStack(ctx context.Context, dir string, ddbPort, sqsPort int) (*Stack, error) {
	if err := checkPorts(ddbPort, sqsPort); err != nil {
		return nil, err
	}
	if dir == "" {
		return nil, errors.New("chaos: start stack: empty run dir")
	}
	absDir, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("chaos: start stack: run dir %q: %w", dir, err)
	}
	if err := os.MkdirAll(absDir, 0o755); err != nil {
		return nil, fmt.Errorf("chaos: start stack: create run dir: %w", err)
	}
	wd, err := os.Getwd()
	if err != nil {
		return nil, fmt.Errorf("chaos: start stack: working dir: %w", err)
	}
	root, err := repo.FindRoot(wd)
	if err != nil {
		return nil, fmt.Errorf("chaos: start stack: %w", err)
	}
	s := &Stack{
		DynamoURL: fmt.Sprintf("http://127.0.0.1:%d", ddbPort),
		SQSURL:    fmt.Sprintf("http://127.0.0.1:%d", sqsPort),
		Dir:       absDir,
		root:      root,
		scriptEnv: localstack.Env{DDBPort: ddbPort, SQSPort: sqsPort, RunDir: absDir,
			EnvFile: filepath.Join(absDir, "env.sh")}.Environ(os.Environ()),
	}
	if err := s.runScript(ctx, "services-up.sh"); err != nil {
		return nil, s.failStart(err)
	}
	if err := s.load(); err != nil {
		return nil, s.failStart(err)
	}
	return s, nil
}

// failStart stops whatever a failed start left running and joins the errors.
func (s *Stack) failStart(err error) error {
	if stopErr := s.Stop(); stopErr != nil {
		return fmt.Errorf("chaos: start stack: %w (cleanup: %v)", err, stopErr)
	}
	return fmt.Errorf("chaos: start stack: %w", err)
}

// load reads the env file and PID files services-up.sh wrote.
func (s *Stack) load() error {
	envFile := filepath.Join(s.Dir, "env.sh")
	data, err := os.ReadFile(envFile)
	if err != nil {
		return fmt.Errorf("read env file: %w", err)
	}
	s.Env = parseEnvFile(string(data))
	want := map[string]string{"AWS_ENDPOINT_URL_DYNAMODB": s.DynamoURL, "AWS_ENDPOINT_URL_SQS": s.SQSURL}
	for k, v := range want {
		if got := envValue(s.Env, k); got != v {
			return fmt.Errorf("env file %s: %s=%q, want %q", envFile, k, got, v)
		}
	}
	// services-up.sh writes no PID file when something it did not start
	// already answers on the port: that is not a private stack.
	if s.DynamoPID, err = localstack.ReadPID(localstack.DynamoDB.PIDFile(s.Dir)); err != nil {
		return fmt.Errorf("%s (is something else on %s?): %w", localstack.DynamoDB.Desc, s.DynamoURL, err)
	}
	if s.SQSPID, err = localstack.ReadPID(localstack.SQS.PIDFile(s.Dir)); err != nil {
		return fmt.Errorf("%s (is something else on %s?): %w", localstack.SQS.Desc, s.SQSURL, err)
	}
	return nil
}

// Stop resumes both servers (in case they were paused: a stopped process
// ignores SIGTERM until continued) and runs scripts/services-down.sh with the
// stack's env, which stops the processes its PID files name and waits for
// them to exit. Calling Stop again is harmless.
func (s *Stack) Stop() error {
	for _, svc := range localstack.Services() {
		if pid, err := localstack.ReadPID(svc.PIDFile(s.Dir)); err == nil && cmdlineHas(pid, svc.Marker) {
			_ = syscall.Kill(pid, syscall.SIGCONT) // best effort; services-down reports real trouble
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := s.runScript(ctx, "services-down.sh"); err != nil {
		return fmt.Errorf("chaos: stop stack in %s: %w", s.Dir, err)
	}
	return nil
}

// runScript runs scripts/NAME with the stack's env, output to Dir/NAME.log
// (a file, not a pipe, so background servers cannot hold the call open).
func (s *Stack) runScript(ctx context.Context, name string) error {
	logPath := filepath.Join(s.Dir, strings.TrimSuffix(name, ".sh")+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return fmt.Errorf("%s: create log: %w", name, err)
	}
	defer logFile.Close()
	cmd := exec.CommandContext(ctx, "bash", filepath.Join(s.root, "scripts", name))
	cmd.Dir = s.root
	cmd.Env = s.scriptEnv
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 15 * time.Second
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w; last output (%s):\n%s", name, err, logPath, tailFile(logPath, 20))
	}
	return nil
}

func checkPorts(ddbPort, sqsPort int) error {
	for _, p := range []int{ddbPort, sqsPort} {
		if p <= 0 || p > 65535 {
			return fmt.Errorf("chaos: start stack: port %d out of range", p)
		}
		if sharedPorts[p] {
			return fmt.Errorf("chaos: start stack: port %d belongs to the shared stack; use FreePort", p)
		}
	}
	if ddbPort == sqsPort {
		return fmt.Errorf("chaos: start stack: DynamoDB and SQS ports are both %d", ddbPort)
	}
	return nil
}

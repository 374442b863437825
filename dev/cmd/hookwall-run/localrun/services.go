package localrun

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/hookwall/hookwall/dev/internal/localstack"
)

// services are the local DynamoDB Local and SQS server, as
// scripts/services-up.sh runs them, and which of them this run started.
type services struct {
	cfg     Config
	stderr  io.Writer
	env     map[string]string // the exports services-up printed
	started []string          // "ddb", "sqs": the ones this run started
}

// scriptEnv is the environment of the stack scripts: the runner's own, with
// the names and ports of its configuration and its env file.
func (s *services) scriptEnv() []string {
	return localstack.Env{DDBPort: s.cfg.DDBPort, SQSPort: s.cfg.SQSPort, RunDir: s.cfg.StackRunDir,
		EnvFile: filepath.Join(s.cfg.RunDir, "env.sh"),
		Extra:   []string{"TABLE_NAME=" + s.cfg.TableName, "QUEUE_NAME=" + s.cfg.QueueName, "DLQ_NAME=" + s.cfg.DLQName},
	}.Environ(os.Environ())
}

// up runs scripts/services-up.sh (install if needed, start what is not
// running, create the table and queues) and notes which services it started:
// those whose PID file names a live process now and did not before.
func (s *services) up(ctx context.Context) error {
	before := map[string]int{}
	for _, svc := range localstack.Services() {
		before[svc.Name] = localstack.LivePID(svc.PIDFile(s.cfg.StackRunDir))
	}
	cmd := exec.CommandContext(ctx, filepath.Join(s.cfg.Root, "scripts", "services-up.sh"))
	cmd.Dir = s.cfg.Root
	cmd.Env = s.scriptEnv()
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = s.stderr
	// Ctrl-C reaches the script through the terminal's process group; it
	// stops what it started itself when it fails. Don't kill it halfway.
	cmd.Cancel = func() error { return nil }
	err := cmd.Run()
	for _, svc := range localstack.Services() {
		if pid := localstack.LivePID(svc.PIDFile(s.cfg.StackRunDir)); pid != 0 && pid != before[svc.Name] {
			s.started = append(s.started, svc.Name)
		}
	}
	if err != nil {
		return fmt.Errorf("localrun: scripts/services-up.sh: %w (its messages are above)", err)
	}
	s.env = parseExports(out.Bytes())
	return nil
}

// down stops, by PID (scripts/services-down.sh), the services this run
// started; it leaves alone those that were already running.
func (s *services) down() error {
	if len(s.started) == 0 {
		return nil
	}
	cmd := exec.Command(filepath.Join(s.cfg.Root, "scripts", "services-down.sh"), s.started...)
	cmd.Dir = s.cfg.Root
	cmd.Env = s.scriptEnv()
	cmd.Stdout = s.stderr
	cmd.Stderr = s.stderr
	// Its own process group: a second Ctrl-C must not cut the stop short.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("localrun: scripts/services-down.sh %s: %w", strings.Join(s.started, " "), err)
	}
	s.started = nil
	return nil
}

// parseExports reads the "export K=V" lines services-up prints.
func parseExports(b []byte) map[string]string {
	env := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		k, v, ok := strings.Cut(strings.TrimPrefix(line, "export "), "=")
		if ok && strings.HasPrefix(line, "export ") {
			env[k] = strings.Trim(v, `'"`)
		}
	}
	return env
}

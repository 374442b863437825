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
	"strconv"
	"strings"
	"syscall"
)

// services are the local DynamoDB Local and SQS server, as
// scripts/services-up.sh runs them, and which of them this run started.
type services struct {
	cfg     Config
	stderr  io.Writer
	env     map[string]string // the exports services-up printed
	started []string          // "ddb", "sqs": the ones this run started
}

// serviceNames are the services of scripts/lib.sh with their PID file
// names and what they are.
var serviceNames = []struct{ name, desc string }{{"ddb", "DynamoDB Local"}, {"sqs", "SQS server"}}

// scriptEnv is the environment of the stack scripts: the runner's own, with
// the names and ports of its configuration and its env file.
func (s *services) scriptEnv() []string {
	env := append(os.Environ(),
		"TABLE_NAME="+s.cfg.TableName, "QUEUE_NAME="+s.cfg.QueueName, "DLQ_NAME="+s.cfg.DLQName,
		"DDB_PORT="+strconv.Itoa(s.cfg.DDBPort), "SQS_PORT="+strconv.Itoa(s.cfg.SQSPort),
		"STACK_RUN_DIR="+s.cfg.StackRunDir, "STACK_ENV_FILE="+filepath.Join(s.cfg.RunDir, "env.sh"))
	return env
}

// up runs scripts/services-up.sh (install if needed, start what is not
// running, create the table and queues) and notes which services it started:
// those whose PID file names a live process now and did not before.
func (s *services) up(ctx context.Context) error {
	before := map[string]int{}
	for _, n := range serviceNames {
		before[n.name] = livePID(filepath.Join(s.cfg.StackRunDir, n.name+".pid"))
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
	for _, n := range serviceNames {
		if pid := livePID(filepath.Join(s.cfg.StackRunDir, n.name+".pid")); pid != 0 && pid != before[n.name] {
			s.started = append(s.started, n.name)
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

// livePID returns the PID in file if that process is alive (not a zombie), else 0.
func livePID(file string) int {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
		return 0
	}
	return pid
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

// Package localstack is what the Go tools know of the local services as
// scripts/services-up.sh and scripts/services-down.sh run them (see
// scripts/lib.sh): the variables the scripts read, the services, and their
// PID files. The local runner (dev/cmd/hookwall-run) and the storm's private
// stacks (dev/cmd/hookwall-storm/chaos) both drive the scripts through it.
package localstack

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Service is one local service as scripts/lib.sh names it.
type Service struct {
	// Name is the service's short name ("ddb", "sqs"): services-down.sh
	// takes it, and its PID file is <run dir>/<Name>.pid.
	Name string
	// Desc says what it is, for people.
	Desc string
	// Marker is what the service's command line contains (lib.sh's
	// pid_marker): a PID is only signalled while it still does, which
	// guards against a reused PID.
	Marker string
}

// PIDFile returns the service's PID file in the stack's run directory.
func (s Service) PIDFile(runDir string) string { return filepath.Join(runDir, s.Name+".pid") }

// The local services.
var (
	// DynamoDB is DynamoDB Local.
	DynamoDB = Service{Name: "ddb", Desc: "DynamoDB Local", Marker: "DdbLocal127"}
	// SQS is the SQS-compatible server.
	SQS = Service{Name: "sqs", Desc: "SQS server", Marker: "sqs-server.js"}
)

// Services lists DynamoDB and SQS, in the scripts' order.
func Services() []Service { return []Service{DynamoDB, SQS} }

// Env is what the scripts are told of the stack they run.
type Env struct {
	// DDBPort and SQSPort are the services' ports (DDB_PORT, SQS_PORT).
	DDBPort, SQSPort int
	// RunDir holds the PID files, logs and env file (STACK_RUN_DIR).
	RunDir string
	// EnvFile is where services-up.sh writes the exports of the stack
	// (STACK_ENV_FILE).
	EnvFile string
	// Extra are more KEY=VALUE entries (TABLE_NAME, QUEUE_NAME, ...).
	Extra []string
}

// Environ returns base (a process environment, such as os.Environ()) with
// the variables of e added after it, so that they win.
func (e Env) Environ(base []string) []string {
	env := append(base[:len(base):len(base)],
		"DDB_PORT="+strconv.Itoa(e.DDBPort), "SQS_PORT="+strconv.Itoa(e.SQSPort),
		"STACK_RUN_DIR="+e.RunDir, "STACK_ENV_FILE="+e.EnvFile)
	return append(env, e.Extra...)
}

// ReadPID reads the positive PID of a PID file.
func ReadPID(path string) (int, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("read PID file: %w", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || pid <= 0 {
		return 0, fmt.Errorf("PID file %s: bad content %q", path, strings.TrimSpace(string(data)))
	}
	return pid, nil
}

// LivePID returns the PID of a PID file if that process is alive (not a
// zombie), else 0.
func LivePID(path string) int {
	pid, err := ReadPID(path)
	if err != nil {
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

package localrun

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/hookwall/hookwall/shared/base/repo"
)

// Module is the module path the runner looks for to find the repository root.
const Module = repo.Module

// Defaults of the runner's settings.
const (
	DefaultHost       = "127.0.0.1"
	DefaultPort       = 3000
	DefaultTenant     = "demo"
	DefaultBus        = "hookwall-local"
	DefaultSweepEvery = 30 * time.Second
	// PagePath is where the runner serves its page.
	PagePath = "/_hookwall/"
)

// Config is the runner's configuration. [LoadConfig] reads it from the
// environment; the variables are named on each field.
type Config struct {
	// Root is the repository root (HOOKWALL_ROOT; default: the directory
	// holding this module's go.mod, found from the working directory up).
	Root string
	// RunDir holds the runner's own files: the lock, the demo tenants, the
	// outcomes and forwarded requests (HOOKWALL_RUN_DIR; default
	// <Root>/.local/run).
	RunDir string
	// StackRunDir is where scripts/services-up.sh keeps the services' PID
	// files (STACK_RUN_DIR; default <Root>/.local/run).
	StackRunDir string
	// Port is the receiver's and page's port on 127.0.0.1 (PORT; default
	// 3000; 0 picks a free one).
	Port int
	// ForwardURL is where the demo tenants forward their events (FORWARD_URL;
	// empty: a local forward target the runner serves).
	ForwardURL string
	// TenantsFile is the tenants document (HOOKWALL_TENANTS_FILE; empty: a
	// demo document written to <RunDir>/tenants.json at each start).
	TenantsFile string
	// TableName, QueueName and DLQName name the table and queues that
	// services-up creates (TABLE_NAME, QUEUE_NAME, DLQ_NAME).
	TableName, QueueName, DLQName string
	// DDBPort and SQSPort are the local services' ports (DDB_PORT, SQS_PORT).
	DDBPort, SQSPort int
	// Services says whether to run scripts/services-up.sh
	// (HOOKWALL_RUN_SERVICES=off: no; then QUEUE_URL, DLQ_URL and the
	// AWS_ENDPOINT_URL_* variables must be set).
	Services bool
	// LogFormat is human or json (HOOKWALL_RUN_LOG; empty: human when
	// standard output is a terminal).
	LogFormat string
	// SweepEvery is the sweeper's schedule (HOOKWALL_RUN_SWEEP_EVERY;
	// default 30s).
	SweepEvery time.Duration
	// Timeouts bound the connections of the runner's servers
	// (HOOKWALL_RUN_READ_TIMEOUT, HOOKWALL_RUN_IDLE_TIMEOUT; default
	// DefaultTimeouts).
	Timeouts Timeouts
	// Getenv reads every other variable (the functions' own settings).
	Getenv func(string) string
}

// LoadConfig reads the runner's configuration through getenv (os.Getenv in
// main). The working directory is where the repository root is looked for.
func LoadConfig(getenv func(string) string, wd string) (Config, error) {
	c := Config{Getenv: getenv, Timeouts: DefaultTimeouts}
	env := &Env{Getenv: getenv}
	c.Root = getenv("HOOKWALL_ROOT")
	if c.Root == "" {
		root, err := FindRoot(wd)
		if err != nil {
			return c, err
		}
		c.Root = root
	}
	abs := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(wd, p)
	}
	c.RunDir = abs(or(getenv("HOOKWALL_RUN_DIR"), filepath.Join(c.Root, ".local", "run")))
	c.StackRunDir = abs(or(getenv("STACK_RUN_DIR"), filepath.Join(c.Root, ".local", "run")))
	c.TenantsFile = abs(getenv("HOOKWALL_TENANTS_FILE"))
	c.ForwardURL = getenv("FORWARD_URL")
	c.TableName = or(getenv("TABLE_NAME"), "hookwall-events")
	c.QueueName = or(getenv("QUEUE_NAME"), "hookwall-events")
	c.DLQName = or(getenv("DLQ_NAME"), "hookwall-events-dlq")
	c.Port = env.Port("PORT", DefaultPort, 0)
	c.DDBPort = env.Port("DDB_PORT", 8000, 0)
	c.SQSPort = env.Port("SQS_PORT", 9324, 0)
	c.Services = env.On("HOOKWALL_RUN_SERVICES")
	switch v := strings.ToLower(getenv("HOOKWALL_RUN_LOG")); v {
	case "", "human", "json":
		c.LogFormat = v
	default:
		env.Errs = append(env.Errs, fmt.Errorf("HOOKWALL_RUN_LOG=%q: want human or json", v))
	}
	c.SweepEvery = env.Every("HOOKWALL_RUN_SWEEP_EVERY", DefaultSweepEvery)
	for _, t := range []struct {
		name string
		d    *time.Duration
	}{{"HOOKWALL_RUN_READ_TIMEOUT", &c.Timeouts.Read}, {"HOOKWALL_RUN_IDLE_TIMEOUT", &c.Timeouts.Idle}} {
		if v := getenv(t.name); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				env.Errs = append(env.Errs, fmt.Errorf("%s=%q: want a positive duration such as 15s", t.name, v))
				continue
			}
			*t.d = d
		}
	}
	if c.ForwardURL != "" && !strings.HasPrefix(c.ForwardURL, "http://") && !strings.HasPrefix(c.ForwardURL, "https://") {
		env.Errs = append(env.Errs, fmt.Errorf("FORWARD_URL=%q: want an http(s) URL", c.ForwardURL))
	}
	return c, errors.Join(env.Errs...)
}

// Env reads settings through Getenv, gathering in Errs what is wrong with
// them: the runner's and `make sam-local`'s variables alike.
type Env struct {
	Getenv func(string) string
	Errs   []error
}

// Port reads the port number name, from min to 65535 (def when unset).
func (e *Env) Port(name string, def, min int) int {
	v := e.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < min || n > 65535 {
		e.Errs = append(e.Errs, fmt.Errorf("%s=%q: want a port number (%d to 65535)", name, v, min))
	}
	return n
}

// On reads the switch name: on, off or auto (on), in any case; unset is on.
func (e *Env) On(name string) bool {
	switch v := strings.ToLower(e.Getenv(name)); v {
	case "", "on", "auto":
		return true
	case "off":
		return false
	default:
		e.Errs = append(e.Errs, fmt.Errorf("%s=%q: want on or off", name, v))
		return true
	}
}

// Every reads the schedule name, a duration of at least 1s (def when unset).
func (e *Env) Every(name string, def time.Duration) time.Duration {
	v := e.Getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < time.Second {
		e.Errs = append(e.Errs, fmt.Errorf("%s=%q: want a duration of at least 1s", name, v))
	}
	return d
}

func or(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// FindRoot returns the nearest directory at or above dir whose go.mod
// declares this module ([repo.FindRoot]).
func FindRoot(dir string) (string, error) {
	root, err := repo.FindRoot(dir)
	if err != nil {
		return "", fmt.Errorf("localrun: %w: run it from the repository (or set HOOKWALL_ROOT)", err)
	}
	return root, nil
}

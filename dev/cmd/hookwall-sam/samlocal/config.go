package samlocal

import (
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"time"

	"github.com/hookwall/hookwall/dev/cmd/hookwall-run/localrun"
	"github.com/hookwall/hookwall/shared/aws/awsconf"
)

// Defaults of the settings [LoadConfig] reads.
const (
	DefaultAPIPort    = 3001 // samconfig.toml's start-api port
	DefaultLambdaPort = 3002
	DefaultRunDir     = ".local/sam-run"
)

// Config is the configuration of `make sam-local`. [LoadConfig] reads it
// from the environment; the variables are named on each field.
type Config struct {
	// Run holds what the runner of `make run` reads too, with the same
	// variables: the repository root, the local services' ports and the
	// table and queue names, FORWARD_URL, HOOKWALL_TENANTS_FILE, the log
	// format (HOOKWALL_RUN_LOG), the services switch. Its RunDir is this
	// stack's own (HOOKWALL_SAM_RUN_DIR, default .local/sam-run), so that
	// `make run` and `make sam-local` can run side by side.
	Run localrun.Config
	// APIPort is `sam local start-api`'s port on 127.0.0.1 (SAM_API_PORT, default 3001).
	APIPort int
	// LambdaPort is `sam local start-lambda`'s port on 127.0.0.1 (SAM_LAMBDA_PORT, default 3002).
	LambdaPort int
	// Arch is the functions' architecture in the containers, the
	// template's Architecture parameter (SAM_LOCAL_ARCH: x86_64 or arm64;
	// default this machine's own, so that nothing is emulated).
	Arch string
	// SAM is the SAM CLI (SAM; default <root>/.local/sam-venv/bin/sam, make sam-tools).
	SAM string
	// SweepEvery overrides the sweeper's schedule (HOOKWALL_SAM_SWEEP_EVERY;
	// default: the template's Schedule event, rate(5 minutes)).
	SweepEvery time.Duration
	// Engine says whether to start the Docker engine when none answers
	// (HOOKWALL_SAM_ENGINE=off: no, fail instead).
	Engine bool
	// IAMRecord is where the functions' runtime IAM records go
	// (HOOKWALL_IAM_RECORD, shared/aws/awsconf; empty: off): the containers
	// write them to their output (HOOKWALL_IAM_RECORD=log, through the
	// Docker shim), from which [Run] copies them there.
	IAMRecord string
}

// LoadConfig reads the configuration through getenv (os.Getenv in main),
// finding the repository from wd.
func LoadConfig(getenv func(string) string, wd string) (Config, error) {
	runDir := getenv("HOOKWALL_SAM_RUN_DIR")
	lenv := func(k string) string {
		if k == "HOOKWALL_RUN_DIR" {
			return runDir // filled below once the root is known
		}
		return getenv(k)
	}
	rc, err := localrun.LoadConfig(lenv, wd)
	if err != nil {
		return Config{}, err
	}
	if runDir == "" {
		rc.RunDir = filepath.Join(rc.Root, DefaultRunDir)
	}
	env := &localrun.Env{Getenv: getenv}
	c := Config{Run: rc}
	c.APIPort = env.Port("SAM_API_PORT", DefaultAPIPort, 1)
	c.LambdaPort = env.Port("SAM_LAMBDA_PORT", DefaultLambdaPort, 1)
	if c.APIPort == c.LambdaPort {
		env.Errs = append(env.Errs, fmt.Errorf("SAM_API_PORT and SAM_LAMBDA_PORT are both %d", c.APIPort))
	}
	c.Arch = getenv("SAM_LOCAL_ARCH")
	if c.Arch == "" {
		c.Arch = HostArch()
	}
	if c.Arch != "x86_64" && c.Arch != "arm64" {
		env.Errs = append(env.Errs, fmt.Errorf("SAM_LOCAL_ARCH=%q: want x86_64 or arm64", c.Arch))
	}
	c.SAM = getenv("SAM")
	if c.SAM == "" {
		c.SAM = filepath.Join(rc.Root, ".local", "sam-venv", "bin", "sam")
	}
	c.SweepEvery = env.Every("HOOKWALL_SAM_SWEEP_EVERY", 0)
	c.Engine = env.On("HOOKWALL_SAM_ENGINE")
	c.IAMRecord = getenv(awsconf.RecordEnv)
	return c, errors.Join(env.Errs...)
}

// HostArch is this machine's architecture in Lambda's words.
func HostArch() string {
	if runtime.GOARCH == "arm64" {
		return "arm64"
	}
	return "x86_64"
}

// GOARCH is the Go architecture of a Lambda architecture.
func GOARCH(arch string) string {
	if arch == "arm64" {
		return "arm64"
	}
	return "amd64"
}

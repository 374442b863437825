package startup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/config"

	"github.com/hookwall/hookwall/shared/base/obs"
	"github.com/hookwall/hookwall/shared/base/release"
	"github.com/hookwall/hookwall/shared/config/settings"
)

func TestCommonOfEverySettingsType(t *testing.T) {
	c := settings.Common{TableName: "t", LogLevel: slog.LevelDebug}
	if got := common(settings.Receiver{Common: c}); got != c {
		t.Errorf("receiver: %+v, want %+v", got, c)
	}
	if got := common(settings.Processor{Common: c}); got != c {
		t.Errorf("processor: %+v, want %+v", got, c)
	}
	if got := common(settings.Compensator{Common: c}); got != c {
		t.Errorf("compensator: %+v, want %+v", got, c)
	}
	if got := common(settings.PreTraffic{Common: c}); got != c {
		t.Errorf("pre-traffic hook: %+v, want %+v", got, c)
	}
}

// childEnv selects, in the re-executed test binary, which failing start-up
// to run.
const childEnv = "STARTUP_TEST_CHILD"

// TestMain runs a failing start-up when re-executed by TestRunExitsOnFailure.
func TestMain(m *testing.M) {
	switch os.Getenv(childEnv) {
	case "load":
		load := func(_ func(string) string, def int) (settings.Receiver, settings.Warnings, error) {
			return settings.Receiver{Common: settings.Common{LogLevel: slog.LevelWarn}}, settings.Warnings{"OLD_NAME is deprecated"},
				fmt.Errorf("TABLE_NAME is required (defaults %d)", def)
		}
		Run("child", WithDefaults(load, 7), unexpectedBuild, func(*int) any { return nil })
	case "build":
		load := func(func(string) string) (settings.Receiver, settings.Warnings, error) {
			return settings.Receiver{}, nil, nil
		}
		build := func(context.Context, settings.Receiver, *slog.Logger, io.Writer, ...func(*config.LoadOptions) error) (*int, error) {
			return nil, errors.New("tenants document: not found")
		}
		Run("child", load, build, func(*int) any { return nil })
	}
	os.Exit(m.Run())
}

// unexpectedBuild is the build of a start-up whose load fails: never called.
func unexpectedBuild(context.Context, settings.Receiver, *slog.Logger, io.Writer, ...func(*config.LoadOptions) error) (*int, error) {
	panic("build after a failed load")
}

// TestRunExitsOnFailure: a failed load (its warnings still logged) or
// build is logged once, as "<name>: start" with the error, and exits 1.
func TestRunExitsOnFailure(t *testing.T) {
	for _, c := range []struct {
		child string
		want  []string
	}{
		{"load", []string{`"msg":"deprecated configuration"`, `OLD_NAME is deprecated`, `"msg":"child: start"`, `TABLE_NAME is required (defaults 7)`}},
		{"build", []string{`"msg":"child: start"`, `tenants document: not found`}},
	} {
		t.Run(c.child, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), childEnv+"="+c.child)
			out, err := cmd.Output()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 1 {
				t.Fatalf("exit: %v, want status 1 (stdout %s)", err, out)
			}
			for _, w := range c.want {
				if !strings.Contains(string(out), w) {
					t.Errorf("stdout %s lacks %s", out, w)
				}
			}
			if n := strings.Count(string(out), `"level":"ERROR"`); n != 1 {
				t.Errorf("%d error lines, want 1: %s", n, out)
			}
		})
	}
}

// TestStartedLineNamesTheRelease: the start-up line carries the function's
// name and the release it runs.
func TestStartedLineNamesTheRelease(t *testing.T) {
	var out strings.Builder
	logStarted(obs.NewLogger(&out, slog.LevelInfo), "processor")
	for _, want := range []string{`"msg":"processor: started"`, `"version":"` + release.Version + `"`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("start-up line %q lacks %s", out.String(), want)
		}
	}
}

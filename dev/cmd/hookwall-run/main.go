// Command hookwall-run is `make run`: Hookwall on one machine (package
// localrun). "hookwall-run" runs it until Ctrl-C; "hookwall-run send
// <provider> [flags]" signs and sends a demo event to it.
package main

import (
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"

	"github.com/hookwall/hookwall/dev/cmd/hookwall-run/localrun"
	"github.com/hookwall/hookwall/dev/internal/command"
)

func main() {
	tool := command.New("hookwall-run", usage)
	cmd, args := tool.Command(os.Args[1:], "", "send")
	wd := tool.WorkDir()
	exe, err := os.Executable()
	if err != nil {
		tool.Fail(err)
	}
	if abs, err := filepath.EvalSymlinks(exe); err == nil {
		exe = abs
	}
	if cmd == "send" {
		err := localrun.SendCommand(context.Background(), args, os.Getenv, wd, exe, os.Stdout, os.Stderr)
		var usage *localrun.UsageError
		switch {
		case err == nil, errors.Is(err, flag.ErrHelp):
			return
		case errors.As(err, &usage): // the usage text is printed already
			tool.Exit(2)
		}
		tool.Fail(err)
	}
	cfg, err := localrun.LoadConfig(os.Getenv, wd)
	if err != nil {
		tool.Fail(err)
	}

	// First SIGINT/SIGTERM: stop gracefully. Second: stop without waiting
	// for the batches being handled (the local services are still stopped).
	ctx, hurry := localrun.NotifyStop()
	err = localrun.Run(ctx, cfg, localrun.System{
		Stdout: os.Stdout, Stderr: os.Stderr, Terminal: localrun.IsTerminal(os.Stdout),
		Setenv: os.Setenv, Executable: exe, WorkDir: wd, Hurry: hurry,
	})
	os.Exit(localrun.Stopped(os.Stderr, "hookwall-run", err))
}

// usage is the runner's help.
var usage = `Usage: hookwall-run            run Hookwall locally until Ctrl-C (make run)
       hookwall-run send <provider> [-id ID] [-at UNIX] [-url URL] [-tenants FILE] [-tenant NAME]
                                 sign and send a demo event to the running runner
                                 (providers: ` + strings.Join(localrun.SendProviders(), ", ") + `; hookwall-run send -h)
       hookwall-run help         this help

Environment: PORT (3000), FORWARD_URL, HOOKWALL_TENANTS_FILE, TABLE_NAME, QUEUE_NAME, DLQ_NAME,
DDB_PORT, SQS_PORT, HOOKWALL_RUN_DIR (.local/run), HOOKWALL_RUN_LOG (human|json),
HOOKWALL_RUN_SERVICES (on|off), HOOKWALL_RUN_SWEEP_EVERY (30s), HOOKWALL_RUN_READ_TIMEOUT (15s),
HOOKWALL_RUN_IDLE_TIMEOUT (30s), and every variable the functions read.
While it runs, <HOOKWALL_RUN_DIR>/runner.json says where (url, tenants, env) for other programs.
`

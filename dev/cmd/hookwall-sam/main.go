// Command hookwall-sam is `make sam-local` and `make sam-invoke`: Hookwall's
// three functions in Lambda containers under the SAM CLI, against the local
// services (package samlocal). "hookwall-sam" runs the stack until Ctrl-C;
// "hookwall-sam invoke [match…]" runs `sam local invoke` on the samples of
// events/; "hookwall-sam shim SOCKET" serves only the Docker shim that puts
// the SAM CLI's containers on the host network, for `sam local` by hand.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/hookwall/hookwall/dev/cmd/hookwall-run/localrun"
	"github.com/hookwall/hookwall/dev/cmd/hookwall-sam/dockershim"
	"github.com/hookwall/hookwall/dev/cmd/hookwall-sam/samlocal"
	"github.com/hookwall/hookwall/dev/internal/command"
)

func main() {
	tool := command.New("hookwall-sam", usage)
	cmd, args := tool.Command(os.Args[1:], "", "invoke", "shim")
	wd := tool.WorkDir()
	if cmd == "shim" {
		if len(args) != 1 {
			tool.Misused()
		}
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		s := &dockershim.Shim{Engine: os.Getenv("HOOKWALL_DOCKER_ENGINE"), Log: slog.New(slog.NewTextHandler(os.Stderr, nil))}
		if _, err := s.Listen(ctx, args[0]); err != nil {
			tool.Fail(err)
		}
		fmt.Fprintf(os.Stderr, "hookwall-sam: the Docker shim listens on %s: DOCKER_HOST=unix://%s sam local … (Ctrl-C stops it)\n", args[0], args[0])
		<-ctx.Done()
		return
	}
	cfg, err := samlocal.LoadConfig(os.Getenv, wd)
	if err != nil {
		tool.Fail(err)
	}
	// First SIGINT/SIGTERM: stop gracefully. Second: stop without waiting
	// for the batches being handled (the containers, the engine and the
	// services are still stopped).
	ctx, hurry := localrun.NotifyStop()
	runner := os.Getenv("HOOKWALL_RUN_BIN")
	if runner == "" {
		runner = filepath.Join(cfg.Run.Root, ".local", "bin", "hookwall-run")
	}
	sys := samlocal.System{
		Stdout: os.Stdout, Stderr: os.Stderr, Terminal: localrun.IsTerminal(os.Stdout),
		Setenv: os.Setenv, RunnerBin: runner, WorkDir: wd, Hurry: hurry,
	}
	if cmd == "invoke" {
		if _, err := samlocal.InvokeSamples(ctx, cfg, sys, args); err != nil {
			tool.Fail(err)
		}
		return
	}
	os.Exit(localrun.Stopped(os.Stderr, "hookwall-sam", samlocal.Run(ctx, cfg, sys)))
}

// usage is the command's help.
const usage = `Usage: hookwall-sam                 run the functions in Lambda containers until Ctrl-C (make sam-local)
       hookwall-sam invoke [match…]  sam local invoke every sample of events/ (or those whose path contains
                                     a match), the receiver's signed anew first (make sam-invoke)
       hookwall-sam shim SOCKET      serve only the Docker shim (host network for SAM's containers) on SOCKET
       hookwall-sam help             this help

Environment: SAM_API_PORT (3001), SAM_LAMBDA_PORT (3002), SAM_LOCAL_ARCH (this machine's: x86_64 or arm64),
SAM (.local/sam-venv/bin/sam), HOOKWALL_SAM_RUN_DIR (.local/sam-run), HOOKWALL_SAM_SWEEP_EVERY (the
template's schedule), HOOKWALL_SAM_ENGINE (on|off), HOOKWALL_RUN_BIN (.local/bin/hookwall-run), and as
make run: DDB_PORT, SQS_PORT, TABLE_NAME, QUEUE_NAME, DLQ_NAME, FORWARD_URL, HOOKWALL_TENANTS_FILE,
HOOKWALL_RUN_LOG (human|json), HOOKWALL_RUN_SERVICES (on|off).
`

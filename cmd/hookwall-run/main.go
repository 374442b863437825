// Command hookwall-run is `make run`: Hookwall on one machine (package
// localrun). "hookwall-run" runs it until Ctrl-C; "hookwall-run send
// <provider> [flags]" signs and sends a demo event to it.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/hookwall/hookwall/cmd/hookwall-run/localrun"
)

func main() {
	wd, err := os.Getwd()
	if err != nil {
		fail(err)
	}
	exe, err := os.Executable()
	if err != nil {
		fail(err)
	}
	if abs, err := filepath.EvalSymlinks(exe); err == nil {
		exe = abs
	}
	args := os.Args[1:]
	if len(args) > 0 {
		switch args[0] {
		case "send":
			if err := localrun.SendCommand(context.Background(), args[1:], os.Getenv, wd, exe, os.Stdout, os.Stderr); err != nil {
				fail(err)
			}
			return
		case "-h", "-help", "--help", "help":
			fmt.Fprintln(os.Stderr, "Usage: hookwall-run            run Hookwall locally until Ctrl-C (make run)\n"+
				"       hookwall-run send <line|wecom|wechat|standard> [-id ID] [-at UNIX] [-url URL] [-tenants FILE]\n\n"+
				"Environment: PORT (3000), FORWARD_URL, HOOKWALL_TENANTS_FILE, TABLE_NAME, QUEUE_NAME, DLQ_NAME,\n"+
				"DDB_PORT, SQS_PORT, HOOKWALL_RUN_DIR (.local/run), HOOKWALL_RUN_LOG (human|json),\n"+
				"HOOKWALL_RUN_SERVICES (on|off), HOOKWALL_RUN_SWEEP_EVERY (30s), and every variable the functions read.")
			return
		default:
			fail(fmt.Errorf("unknown command %q (try hookwall-run help)", args[0]))
		}
	}
	cfg, err := localrun.LoadConfig(os.Getenv, wd)
	if err != nil {
		fail(err)
	}

	// First SIGINT/SIGTERM: stop gracefully. Second: stop without waiting
	// for the batches being handled (the local services are still stopped).
	ctx, cancel := context.WithCancel(context.Background())
	hurry := make(chan struct{})
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sigs
		cancel()
		<-sigs
		close(hurry)
	}()
	st, _ := os.Stdout.Stat()
	err = localrun.Run(ctx, cfg, localrun.System{
		Stdout: os.Stdout, Stderr: os.Stderr, Terminal: st != nil && st.Mode()&os.ModeCharDevice != 0,
		Setenv: os.Setenv, Executable: exe, WorkDir: wd, Hurry: hurry,
	})
	if err != nil {
		var already *localrun.AlreadyRunningError
		if errors.As(err, &already) {
			fmt.Fprintln(os.Stderr, "hookwall-run:", err)
			os.Exit(2)
		}
		fail(err)
	}
	fmt.Fprintln(os.Stderr, "hookwall-run: stopped")
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "hookwall-run:", err)
	os.Exit(1)
}

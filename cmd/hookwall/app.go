package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/aws/smithy-go"

	"github.com/hookwall/hookwall/shared/config/runfile"
	"github.com/hookwall/hookwall/shared/config/settings"
	"github.com/hookwall/hookwall/shared/engine/intake"
)

// Exit codes, documented in `hookwall help` and docs/OPERATIONS.md.
const (
	exitOK      = 0 // done
	exitFailed  = 1 // the operation failed (AWS error, non-2xx reply, some events not replayed)
	exitUsage   = 2 // bad flags or arguments, or a missing or invalid environment variable
	exitRefused = 3 // not found (event, tenant) or refused (a SUCCEEDED event without --force)
)

// usageError is a mistake in the command line or the environment: exit 2,
// with a pointer to the command's help.
type usageError struct {
	cmd string // "events list"; "" for the top level
	msg string
}

func (e *usageError) Error() string { return e.msg }

func usagef(cmd, format string, args ...any) error {
	return &usageError{cmd: cmd, msg: fmt.Sprintf(format, args...)}
}

// refusedError is a thing not found or an action refused: exit 3.
type refusedError struct{ msg string }

func (e *refusedError) Error() string { return e.msg }

func refusedf(format string, args ...any) error {
	return &refusedError{msg: fmt.Sprintf(format, args...)}
}

// configError is a missing or invalid environment variable: exit 2, with
// what to do about it instead of a pointer to the help.
type configError struct {
	problems []string // one per variable at fault
	hint     string   // how to set them; "" for none
}

func (e *configError) Error() string { return strings.Join(e.problems, "; ") }

// errHelp says the help was printed as asked: exit 0.
var errHelp = errors.New("help shown")

// app is one run of the command.
type app struct {
	stdout, stderr io.Writer
	getenv         func(string) string
	// open connects to AWS (or fakes, in tests) with the configuration.
	open func(ctx context.Context, s settings.CLI) (*backend, error)
	// now is the clock.
	now func() time.Time
	// http sends `sign --send`.
	http *http.Client
	// progress is true when stderr is a terminal: long runs show a progress line there.
	progress bool
	// pollEvery is how often a redrive's SQS move task is polled.
	pollEvery time.Duration
	// json is the --json flag of the command being run.
	json bool
	// wd and exe are the working directory and the executable, where the
	// local runner's runner.json is looked for ("" skips the place).
	wd, exe string
	// The runner found (runnerLooked: looked for once), why a runner.json
	// found was not used, and whether its use was noted on stderr.
	runnerLooked, runnerNoted bool
	runnerFound               *runfile.Info
	runnerProblem             error
	// generate writes the handler settings of the module at root into its
	// template.yaml and README (`make generate`), its output to w.
	generate func(ctx context.Context, root string, w io.Writer) error
}

// run runs the hookwall command line args (without the program name),
// writing to stdout and stderr and reading the environment through getenv,
// and returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	return newApp(stdout, stderr, getenv).main(ctx, args)
}

// newApp returns an app on AWS, with the real clock.
func newApp(stdout, stderr io.Writer, getenv func(string) string) *app {
	a := &app{stdout: stdout, stderr: stderr, getenv: getenv, now: time.Now,
		http: &http.Client{Timeout: 15 * time.Second}, progress: isTerminal(stderr), pollEvery: time.Second,
		generate: runGenerate}
	a.open = func(ctx context.Context, s settings.CLI) (*backend, error) { return openAWS(ctx, s, a.awsOverrides()) }
	a.wd, _ = os.Getwd()
	a.exe, _ = os.Executable()
	return a
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// main runs args and maps the outcome to an exit code, printing the error.
func (a *app) main(ctx context.Context, args []string) int {
	err := a.dispatch(ctx, args)
	var ue *usageError
	var re *refusedError
	var ce *configError
	switch {
	case err == nil, errors.Is(err, errHelp):
		return exitOK
	case errors.As(err, &ce):
		for _, p := range ce.problems {
			fmt.Fprintf(a.stderr, "hookwall: %s\n", p)
		}
		if ce.hint != "" {
			fmt.Fprintln(a.stderr, ce.hint)
		}
		return exitUsage
	case errors.As(err, &ue):
		fmt.Fprintf(a.stderr, "hookwall: %s\n", ue.msg)
		fmt.Fprintf(a.stderr, "Run '%s --help' for usage.\n", strings.TrimSpace("hookwall "+ue.cmd))
		return exitUsage
	case errors.As(err, &re):
		fmt.Fprintf(a.stderr, "hookwall: %s\n", re.msg)
		return exitRefused
	case errors.Is(err, context.Canceled):
		fmt.Fprintln(a.stderr, "hookwall: interrupted")
		return exitFailed
	default:
		fmt.Fprintf(a.stderr, "hookwall: %v\n", err)
		if hint := explain(err); hint != "" {
			fmt.Fprintln(a.stderr, hint)
		}
		return exitFailed
	}
}

// explain says what to check for the failures a newcomer meets first: no
// service at the endpoint, no such table or queue there ("" for others).
func explain(err error) string {
	var ae smithy.APIError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "(nothing listens there: is the local stack running? `make run` in another terminal starts it)"
	case errors.As(err, &ae) && ae.ErrorCode() == "ResourceNotFoundException":
		return "(no such table at that endpoint: check TABLE_NAME, AWS_ENDPOINT_URL_DYNAMODB and AWS_REGION)"
	case errors.As(err, &ae) && (ae.ErrorCode() == "AWS.SimpleQueueService.NonExistentQueue" || ae.ErrorCode() == "QueueDoesNotExist"):
		return "(no such queue: check QUEUE_URL, DLQ_URL and AWS_ENDPOINT_URL_SQS)"
	}
	return ""
}

// command is one subcommand.
type command struct {
	name  string // "events list"
	usage string // the help text: synopsis, description, examples
	run   func(a *app, ctx context.Context, args []string) error
}

// commands lists the subcommands (a function, since they refer back to it
// through their help).
func commands() []command {
	return []command{
		{"sign", signUsage(), (*app).sign},
		{"send", sendUsage(), (*app).send},
		{"events get", eventsGetUsage, (*app).eventsGet},
		{"events list", eventsListUsage, (*app).eventsList},
		{"events history", eventsHistoryUsage, (*app).eventsHistory},
		{"replay", replayUsage, (*app).replay},
		{"dlq peek", dlqPeekUsage, (*app).dlqPeek},
		{"dlq redrive", dlqRedriveUsage, (*app).dlqRedrive},
		{"pause", pauseUsage, (*app).pause},
		{"resume", resumeUsage, (*app).resume},
		{"targets", targetsUsage, (*app).targetsCmd},
		{"recover", recoverUsage, (*app).recover},
		{"new handler", newHandlerUsage, (*app).newHandler},
		{"version", versionUsage, (*app).version},
	}
}

func lookupCommand(name string) *command {
	for _, c := range commands() {
		if c.name == name {
			return &c
		}
	}
	return nil
}

func (a *app) dispatch(ctx context.Context, args []string) error {
	if len(args) == 0 {
		fmt.Fprint(a.stderr, topUsage)
		return usagef("", "no command given")
	}
	switch args[0] {
	case "--version", "-version":
		return lookupCommand("version").run(a, ctx, args[1:])
	case "help", "-h", "-help", "--help":
		if len(args) > 1 {
			name := strings.Join(args[1:min(len(args), 3)], " ")
			if c := lookupCommand(name); c != nil {
				fmt.Fprint(a.stdout, c.usage)
				return errHelp
			}
			if g := groupUsage(args[1]); g != "" {
				fmt.Fprint(a.stdout, g)
				return errHelp
			}
			return usagef("", "no command %q", strings.Join(args[1:], " "))
		}
		fmt.Fprint(a.stdout, topUsage)
		return errHelp
	case "events", "dlq", "new":
		group := args[0]
		if len(args) == 1 || isHelpFlag(args[1]) {
			if len(args) == 1 {
				fmt.Fprint(a.stderr, groupUsage(group))
				return usagef(group, "%s needs a subcommand", group)
			}
			fmt.Fprint(a.stdout, groupUsage(group))
			return errHelp
		}
		c := lookupCommand(group + " " + args[1])
		if c == nil {
			return usagef(group, "unknown command %q", group+" "+args[1])
		}
		return c.run(a, ctx, args[2:])
	}
	c := lookupCommand(args[0])
	if c == nil {
		return usagef("", "unknown command %q (commands: sign, send, events, replay, recover, pause, resume, targets, dlq, new, version)", args[0])
	}
	return c.run(a, ctx, args[1:])
}

func isHelpFlag(s string) bool {
	switch s {
	case "-h", "-help", "--help", "help":
		return true
	}
	return false
}

// flagSet returns the flags of cmd, with --json.
func (a *app) flagSet(cmd string) *flag.FlagSet {
	fs := flag.NewFlagSet("hookwall "+cmd, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.BoolVar(&a.json, "json", false, "print JSON (for scripts) instead of tables")
	return fs
}

// parse parses args with fs, flags and positional arguments in any order
// ("--" ends the flags), and returns the positional arguments. --help prints
// the command's usage and returns errHelp.
func (a *app) parse(cmd string, fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				a.printUsage(cmd, fs)
				return nil, errHelp
			}
			return nil, usagef(cmd, "%v", err)
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if consumed := len(args) - len(rest); consumed > 0 && args[consumed-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// printUsage prints cmd's help and its flags to stdout.
func (a *app) printUsage(cmd string, fs *flag.FlagSet) {
	fmt.Fprint(a.stdout, lookupCommand(cmd).usage)
	fmt.Fprintln(a.stdout, "\nFlags:")
	fs.SetOutput(a.stdout)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
}

// settings loads the configuration cmd needs from the environment and,
// for what it leaves unset, the local runner's; a missing or invalid
// variable is a configError that names it and says what to do.
func (a *app) settings(need settings.CLINeeds) (settings.CLI, error) {
	s, err := settings.LoadCLI(a.lookupEnv(need.Tenants), need, settings.CLIDefaults{DedupWindow: intake.DefaultDedupWindow})
	if err != nil {
		return s, &configError{problems: problems(err), hint: a.configHint()}
	}
	return s, nil
}

// problems splits a joined error into its messages, one per line.
func problems(err error) []string {
	var out []string
	for line := range strings.Lines(err.Error()) {
		if line = strings.TrimSpace(line); line != "" {
			out = append(out, line)
		}
	}
	return out
}

// configHint says how to give the CLI its environment.
func (a *app) configHint() string {
	var b strings.Builder
	if a.runnerProblem != nil {
		fmt.Fprintf(&b, "(ignored %v)\n", a.runnerProblem)
	}
	b.WriteString("Locally: run `make run` in another terminal (the CLI then finds it), or\n" +
		"  eval \"$(scripts/services-up.sh)\"; export HOOKWALL_TENANTS_FILE=infra/local/tenants.json\n" +
		"On AWS: set them from the stack's outputs. 'hookwall help' lists the variables.")
	return b.String()
}

// backend opens the AWS clients with the configuration need names.
func (a *app) backend(ctx context.Context, need settings.CLINeeds) (settings.CLI, *backend, error) {
	s, err := a.settings(need)
	if err != nil {
		return s, nil, err
	}
	b, err := a.open(ctx, s)
	return s, b, err
}

// progressf writes a progress line (overwriting the previous one) on a terminal.
func (a *app) progressf(format string, args ...any) {
	if a.progress {
		fmt.Fprintf(a.stderr, "\r\033[K"+format, args...)
	}
}

// progressDone ends the progress line.
func (a *app) progressDone() {
	if a.progress {
		fmt.Fprint(a.stderr, "\r\033[K")
	}
}

// Package command is what the local tools' mains (hookwall-run,
// hookwall-sam) share: reading the subcommand, the help, the error message
// and the exit status, stated once: 0 done (or help asked), 1 failed,
// 2 misused.
package command

import (
	"fmt"
	"io"
	"os"
	"slices"
)

// Tool is one local tool's command line. Its methods that end the process
// do not return.
type Tool struct {
	name   string
	usage  string
	stdout io.Writer
	stderr io.Writer
	exit   func(code int)
}

// New returns the Tool called name (the prefix of its messages) whose help
// is usage, on the process's standard output and error.
func New(name, usage string) *Tool {
	return &Tool{name: name, usage: usage, stdout: os.Stdout, stderr: os.Stderr, exit: os.Exit}
}

// helpWords ask for the help.
var helpWords = []string{"-h", "-help", "--help", "help"}

// Command returns the subcommand of args (its first word, "" when there is
// none) and the words after it. A help word ("-h", "-help", "--help",
// "help") prints the usage on standard output and exits 0; a subcommand not
// in known (none, where "" is not known) prints that it is unknown, and the
// usage, on standard error and exits 2.
func (t *Tool) Command(args []string, known ...string) (string, []string) {
	cmd := ""
	if len(args) > 0 {
		cmd, args = args[0], args[1:]
	}
	switch {
	case slices.Contains(helpWords, cmd):
		fmt.Fprint(t.stdout, t.usage)
		t.exit(0)
	case slices.Contains(known, cmd):
	case cmd == "":
		t.Misused()
	default:
		fmt.Fprintf(t.stderr, "%s: unknown command %q\n\n%s", t.name, cmd, t.usage)
		t.exit(2)
	}
	return cmd, args
}

// Misused prints the usage on standard error and exits 2.
func (t *Tool) Misused() {
	fmt.Fprint(t.stderr, t.usage)
	t.exit(2)
}

// Exit ends the process with code, having printed nothing: for a code
// whose message is printed already (a subcommand's own usage).
func (t *Tool) Exit(code int) {
	t.exit(code)
}

// Fail prints err after the tool's name on standard error and exits 1.
func (t *Tool) Fail(err error) {
	fmt.Fprintln(t.stderr, t.name+":", err)
	t.exit(1)
}

// WorkDir returns the working directory, or fails.
func (t *Tool) WorkDir() string {
	wd, err := os.Getwd()
	if err != nil {
		t.Fail(fmt.Errorf("working directory: %w", err))
	}
	return wd
}

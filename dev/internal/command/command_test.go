package command

import (
	"bytes"
	"errors"
	"slices"
	"testing"
)

// exited stops a test Tool where the process would have ended.
type exited int

// testTool returns a Tool whose exit panics with its code, and its outputs.
func testTool() (*Tool, *bytes.Buffer, *bytes.Buffer) {
	var out, errOut bytes.Buffer
	return &Tool{name: "tool", usage: "Usage: tool\n", stdout: &out, stderr: &errOut, exit: func(c int) { panic(exited(c)) }}, &out, &errOut
}

// run calls f and returns the exit code it ended with, -1 if it returned.
func run(f func()) (code int) {
	defer func() {
		if r := recover(); r != nil {
			c, ok := r.(exited)
			if !ok {
				panic(r)
			}
			code = int(c)
		}
	}()
	f()
	return -1
}

func TestCommand(t *testing.T) {
	for _, tt := range []struct {
		args    []string
		cmd     string
		rest    []string
		code    int
		out     string
		errText string
	}{
		{nil, "", nil, -1, "", ""},
		{[]string{"send", "-id", "1"}, "send", []string{"-id", "1"}, -1, "", ""},
		{[]string{"help"}, "", nil, 0, "Usage: tool\n", ""},
		{[]string{"-h", "send"}, "", nil, 0, "Usage: tool\n", ""},
		{[]string{"--help"}, "", nil, 0, "Usage: tool\n", ""},
		{[]string{"sned"}, "", nil, 2, "", "tool: unknown command \"sned\"\n\nUsage: tool\n"},
	} {
		tool, out, errOut := testTool()
		var cmd string
		var rest []string
		code := run(func() { cmd, rest = tool.Command(tt.args, "", "send") })
		if code != tt.code || out.String() != tt.out || errOut.String() != tt.errText {
			t.Errorf("Command(%q): exit %d, stdout %q, stderr %q; want %d, %q, %q", tt.args, code, out, errOut, tt.code, tt.out, tt.errText)
		}
		if code == -1 && (cmd != tt.cmd || !slices.Equal(rest, tt.rest)) {
			t.Errorf("Command(%q) = %q, %q; want %q, %q", tt.args, cmd, rest, tt.cmd, tt.rest)
		}
	}
	tool, _, errOut := testTool()
	if code := run(func() { tool.Command(nil, "send") }); code != 2 || errOut.String() != "Usage: tool\n" {
		t.Errorf("no subcommand where one is required: exit %d, stderr %q; want 2 and the usage", code, errOut)
	}
}

func TestEndings(t *testing.T) {
	tool, out, errOut := testTool()
	if code := run(func() { tool.Fail(errors.New("no table")) }); code != 1 || errOut.String() != "tool: no table\n" || out.Len() != 0 {
		t.Errorf("Fail: exit %d, stderr %q, stdout %q", code, errOut, out)
	}
	tool, out, errOut = testTool()
	if code := run(tool.Misused); code != 2 || errOut.String() != "Usage: tool\n" || out.Len() != 0 {
		t.Errorf("Misused: exit %d, stderr %q, stdout %q", code, errOut, out)
	}
	tool, out, errOut = testTool()
	if code := run(func() { tool.Exit(2) }); code != 2 || errOut.Len()+out.Len() != 0 {
		t.Errorf("Exit(2): exit %d, printed %q %q", code, out, errOut)
	}
	if code := run(func() { _ = tool.WorkDir() }); code != -1 {
		t.Errorf("WorkDir: exit %d in a readable working directory", code)
	}
}

package samlocal

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// SAM runs the SAM CLI for the local stack: `sam build` into a build
// directory of the architecture's own (so that a deploy's `sam build` and
// its cache are never mixed with it), then `sam local …` against that
// build with the local image, the host network (through the Docker shim
// at DockerHost) and the generated env.json.
type SAM struct {
	// Bin is the SAM CLI.
	Bin string
	// Root is the repository root (template.yaml, Makefile).
	Root string
	// Arch is the template's Architecture for this build.
	Arch string
	// Image is the local base image (scripts/lambda-image.sh).
	Image string
	// DockerHost is the DOCKER_HOST the SAM CLI uses (the shim's socket).
	DockerHost string
	// EnvJSON is the env-vars file.
	EnvJSON string
	// Stderr receives what the build says.
	Stderr io.Writer
}

// BuildDir is where `sam build` puts this architecture's build.
func (s *SAM) BuildDir() string {
	return filepath.Join(s.Root, ".aws-sam", "local-"+s.Arch)
}

// Template is the built template the `sam local` commands read.
func (s *SAM) Template() string { return filepath.Join(s.BuildDir(), "template.yaml") }

func (s *SAM) env() []string {
	env := append(os.Environ(), "SAM_CLI_TELEMETRY=0", "LAMBDA_GOARCH="+GOARCH(s.Arch))
	if s.DockerHost != "" {
		env = append(env, "DOCKER_HOST="+s.DockerHost)
	}
	return env
}

// Build runs `sam build` for Arch: each function's build-<LogicalId>
// target of the Makefile, with LAMBDA_GOARCH set to match.
func (s *SAM) Build(ctx context.Context) error {
	cmd := exec.CommandContext(ctx, s.Bin, "build", "--template-file", filepath.Join(s.Root, "template.yaml"),
		"--build-dir", s.BuildDir(), "--cache-dir", filepath.Join(s.Root, ".aws-sam", "cache-local-"+s.Arch),
		"--parameter-overrides", "Architecture="+s.Arch,
		// Not cached: SAM's cache hashes every file under CodeUri (the
		// whole repository, .local included); the Go build cache keeps
		// the three builds quick anyway.
		"--no-cached")
	cmd.Dir = s.Root
	cmd.Env = s.env()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("samlocal: sam build: %w\n%s", err, tail(out.String(), 30))
	}
	return nil
}

// PutTenants writes the tenants document into every function's build
// output, where env.json's HOOKWALL_TENANTS_FILE (/var/task/local-tenants.json)
// finds it inside the container.
func (s *SAM) PutTenants(doc []byte) error {
	for _, fn := range Functions {
		p := filepath.Join(s.BuildDir(), fn, "local-tenants.json")
		if err := os.WriteFile(p, doc, 0o644); err != nil {
			return fmt.Errorf("samlocal: tenants for %s: %w", fn, err)
		}
	}
	return nil
}

// LocalArgs are the arguments every `sam local` command gets.
func (s *SAM) LocalArgs() []string {
	return []string{"--template", s.Template(), "--env-vars", s.EnvJSON, "--docker-network", "host",
		"--invoke-image", s.Image, "--skip-pull-image", "--parameter-overrides", "Architecture=" + s.Arch,
		"--region", "us-east-1"}
}

// Command returns `sam local <args…>` with LocalArgs, in the repository, with the shim's DOCKER_HOST.
func (s *SAM) Command(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, s.Bin, append(append([]string{"local"}, args...), s.LocalArgs()...)...)
	cmd.Dir = s.Root
	cmd.Env = s.env()
	return cmd
}

// Process is a long-running `sam local start-…` command in a process
// group of its own, its output copied line by line, prefixed, to a writer
// and to a log file.
type Process struct {
	Name string
	cmd  *exec.Cmd
	log  *os.File
	done chan struct{}
	err  error
}

// Start starts cmd as name, copying each line of its output to logPath
// and to emit (if set).
func Start(name string, cmd *exec.Cmd, emit func(line string), logPath string) (*Process, error) {
	f, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("samlocal: %s log: %w", name, err)
	}
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	// Its own process group: Ctrl-C reaches the runner only, which stops
	// the event sources first and then this process.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return nil } // stopped by Stop, never by the context
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("samlocal: start %s: %w", name, err)
	}
	p := &Process{Name: name, cmd: cmd, log: f, done: make(chan struct{})}
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(f, line)
			if emit != nil {
				emit(line)
			}
		}
		_, _ = io.Copy(io.Discard, pr)
	}()
	go func() {
		p.err = cmd.Wait()
		pw.Close()
		<-copied
		f.Close()
		close(p.done)
	}()
	return p, nil
}

// Done is closed when the process has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// PID is the process's id.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Stop asks the process group to stop (SIGINT, as Ctrl-C would: the SAM
// CLI then stops its warm containers) and waits up to grace, then kills it.
func (p *Process) Stop(grace time.Duration) error {
	select {
	case <-p.done:
		return nil
	default:
	}
	pgid := p.cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGINT)
	select {
	case <-p.done:
		return nil
	case <-time.After(grace):
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	<-p.done
	return fmt.Errorf("samlocal: %s did not stop within %s; killed", p.Name, grace)
}

// WaitReady waits until addr accepts TCP connections, the process exits
// (an error with the end of its log), or timeout passes.
func (p *Process) WaitReady(ctx context.Context, addr string, timeout time.Duration, logPath string) error {
	deadline := time.Now().Add(timeout)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		select {
		case <-p.done:
			b, _ := os.ReadFile(logPath)
			return fmt.Errorf("samlocal: %s exited before listening on %s (%v); the end of %s:\n%s", p.Name, addr, p.err, logPath, tail(string(b), 20))
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("samlocal: %s does not listen on %s after %s (log: %s)", p.Name, addr, timeout, logPath)
		}
	}
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Script runs one of the repository's scripts with args, its stderr to
// stderr, and returns its standard output, trimmed.
func Script(ctx context.Context, root string, env []string, stderr io.Writer, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(root, "scripts", name), args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = stderr
	cmd.Cancel = func() error { return nil } // Ctrl-C reaches it through the terminal; don't cut it halfway
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return "", &ScriptError{Script: name, Args: args, Code: exit.ExitCode()}
	}
	if err != nil {
		return "", fmt.Errorf("samlocal: scripts/%s: %w", name, err)
	}
	return strings.TrimSpace(out.String()), nil
}

// ScriptError is a script that exited with a non-zero status (its
// messages are above).
type ScriptError struct {
	Script string
	Args   []string
	Code   int
}

// Error names the script and its status.
func (e *ScriptError) Error() string {
	return fmt.Sprintf("samlocal: scripts/%s %s exited %s (its messages are above)", e.Script, strings.Join(e.Args, " "), strconv.Itoa(e.Code))
}

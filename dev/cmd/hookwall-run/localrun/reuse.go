package localrun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// What `make sam-local` (dev/cmd/hookwall-sam) reuses of the runner: the same
// local services, lock, schedule loop, banner commands, signal handling and
// exit codes, so that the two local stacks start, print and stop alike.

// Services are the local DynamoDB Local and SQS server that [StartServices]
// found running or started.
type Services struct {
	s *services
}

// StartServices runs scripts/services-up.sh for cfg (install if needed,
// start what is not running, create the table and queues) as [Run] does,
// its messages to stderr.
func StartServices(ctx context.Context, cfg Config, stderr io.Writer) (*Services, error) {
	s := &services{cfg: cfg, stderr: stderr}
	err := s.up(ctx)
	return &Services{s: s}, err
}

// Env returns the exports services-up printed (AWS_ENDPOINT_URL_*, QUEUE_URL, DLQ_URL, …).
func (s *Services) Env() map[string]string { return s.s.env }

// Started names the services this call started ("ddb", "sqs").
func (s *Services) Started() []string { return s.s.started }

// Stop stops, by PID, the services StartServices started, and only those.
func (s *Services) Stop() error { return s.s.down() }

// Lock is a run directory's held lock.
type Lock struct{ l *lock }

// AcquireLock takes the run directory's lock as [Run] does, for holder
// (HolderSamLocal, …): another process holding it is an
// [*AlreadyRunningError] naming that one.
func AcquireLock(dir, holder string) (*Lock, error) {
	l, err := acquireLock(dir, holder)
	if err != nil {
		return nil, err
	}
	return &Lock{l: l}, nil
}

// Note records where the holder can be reached (shown by [AlreadyRunningError]).
func (l *Lock) Note(url string) error { return l.l.write(url) }

// Release releases the lock.
func (l *Lock) Release() { l.l.release() }

// SendCommandLines returns the ready-to-paste commands of the runner's
// banner that send one signed demo event per provider to the receiver at
// base, signed with tenantsFile's demo tenant, through the runner binary
// exe ("hookwall-run send …"). The same command twice sends the same event.
func SendCommandLines(exe, workDir, base, tenantsFile string) []Command {
	return sendCommands(System{Executable: exe, WorkDir: workDir}, Config{}, banner{base: base, tenants: tenantsFile})
}

// NotifyStop returns a context that the first SIGINT or SIGTERM cancels
// (stop gracefully) and a channel that the second one closes (stop without
// waiting for the batches being handled): a main's System.Hurry.
func NotifyStop() (context.Context, <-chan struct{}) {
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
	return ctx, hurry
}

// IsTerminal says whether f is a terminal (a character device).
func IsTerminal(f *os.File) bool {
	st, _ := f.Stat()
	return st != nil && st.Mode()&os.ModeCharDevice != 0
}

// Human says whether the logs are for a person: HOOKWALL_RUN_LOG=human, or
// unset with standard output a terminal.
func (c Config) Human(terminal bool) bool {
	return c.LogFormat == "human" || (c.LogFormat == "" && terminal)
}

// Stopped says on stderr how a local stack's run ended and returns its
// exit code: "<name>: stopped" and 0 when err is nil; err and 2 when
// another run holds the run directory ([AlreadyRunningError]); err and 1
// otherwise.
func Stopped(stderr io.Writer, name string, err error) int {
	if err == nil {
		fmt.Fprintln(stderr, name+": stopped")
		return 0
	}
	fmt.Fprintln(stderr, name+":", err)
	var already *AlreadyRunningError
	if errors.As(err, &already) {
		return 2
	}
	return 1
}

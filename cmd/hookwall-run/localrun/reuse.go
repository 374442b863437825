package localrun

import (
	"context"
	"io"
)

// What `make sam-local` (cmd/hookwall-sam) reuses of the runner: the same
// local services, lock, schedule loop and banner commands, so that the two
// local stacks start, print and stop alike.

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

// AcquireLock takes the run directory's lock as [Run] does: another
// process holding it is an [*AlreadyRunningError].
func AcquireLock(dir string) (*Lock, error) {
	l, err := acquireLock(dir)
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

// ShortPath returns p relative to dir when it is inside it.
func ShortPath(dir, p string) string { return shortPath(dir, p) }

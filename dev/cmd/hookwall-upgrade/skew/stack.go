package skew

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hookwall/hookwall/dev/cmd/hookwall-run/localrun"
)

// The Lambda settings template.yaml gives the functions, which the stack
// plays: the receiver's and the queue functions' timeouts, the event
// sources' batch size (10) and batching window (1 s).
const (
	receiverTimeout = 4 * time.Second
	queueTimeout    = 60 * time.Second
	batchSize       = 10
)

// Stack runs the functions of one or more releases against one table and
// its queues, each role on the releases a mix says, and plays the Lambda
// service around them: API Gateway ([Stack.Receive]), the SQS event
// sources of the processor (the main queue) and the compensator (the
// dead-letter queue), one per running version as each alias version has
// its own share of the pollers, and the sweep schedule.
type Stack struct {
	// Builds are the releases' binaries, by version.
	Builds map[string]Build
	// Env is every function's environment (table, queues, tenants, endpoints).
	Env map[string]string
	// SQS is the event sources' client; QueueURL, DLQURL and their ARNs
	// and Region fill the SQS events.
	SQS                                        localrun.SQSAPI
	QueueURL, QueueARN, DLQURL, DLQARN, Region string
	// Ports hands out the functions' RPC ports.
	Ports *Ports
	// LogDir receives one log file per function process.
	LogDir string
	// Pollers is each processor version's concurrent pollers (default 2).
	Pollers int
	// Log receives the stack's own lines.
	Log *slog.Logger

	mu      sync.Mutex
	running map[string][]*instance
	retired map[string]int64 // "<role>@<version>" → invocations of retired processes
	logs    []string
	next    atomic.Int64
}

// instance is one function process and, for a queue function, its poller.
type instance struct {
	version string
	fn      *Function
	log     *os.File
	stop    context.CancelFunc
	done    chan struct{}
}

// Set makes role run exactly the given versions: it starts those not
// running yet (a new alias version taking its share) and then retires the
// others (their pollers stop taking batches and finish the ones they hold,
// as Lambda lets an invocation end, then the process stops).
func (s *Stack) Set(ctx context.Context, role string, versions ...string) error {
	s.mu.Lock()
	if s.running == nil {
		s.running = map[string][]*instance{}
	}
	have := s.running[role]
	s.mu.Unlock()
	for _, v := range versions {
		if slices.ContainsFunc(have, func(in *instance) bool { return in.version == v }) {
			continue
		}
		in, err := s.start(ctx, role, v)
		if err != nil {
			return err
		}
		s.mu.Lock()
		s.running[role] = append(s.running[role], in)
		s.mu.Unlock()
	}
	s.mu.Lock()
	var keep, retire []*instance
	for _, in := range s.running[role] {
		if slices.Contains(versions, in.version) {
			keep = append(keep, in)
		} else {
			retire = append(retire, in)
		}
	}
	s.running[role] = keep
	s.mu.Unlock()
	for _, in := range retire {
		s.retire(in)
	}
	s.Log.Info("set", slog.String("role", role), slog.Any("versions", versions))
	return nil
}

// Versions returns the versions role runs now.
func (s *Stack) Versions(role string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, len(s.running[role]))
	for i, in := range s.running[role] {
		out[i] = in.version
	}
	return out
}

func (s *Stack) start(ctx context.Context, role, version string) (*instance, error) {
	b, ok := s.Builds[version]
	if !ok {
		return nil, fmt.Errorf("skew: no build of version %s", version)
	}
	port, err := s.Ports.Take()
	if err != nil {
		return nil, err
	}
	name := role + "@" + version
	s.mu.Lock()
	path := filepath.Join(s.LogDir, fmt.Sprintf("%s-%d.log", name, len(s.logs)+1))
	s.logs = append(s.logs, path)
	s.mu.Unlock()
	logf, err := os.Create(path)
	if err != nil {
		s.Ports.Give(port)
		return nil, fmt.Errorf("skew: log of %s: %w", name, err)
	}
	fn, err := StartFunction(ctx, name, b.Bins[role], port, s.Env, logf)
	if err != nil {
		s.Ports.Give(port)
		logf.Close()
		return nil, err
	}
	in := &instance{version: version, fn: fn, log: logf, done: make(chan struct{})}
	pctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	in.stop = cancel
	log := s.Log.With(slog.String("function", name))
	switch role {
	case Processor:
		p := &localrun.Poller{Name: name, Client: s.SQS, QueueURL: s.QueueURL, QueueARN: s.QueueARN, Region: s.Region,
			Handle: localrun.JSONHandler(fn.Handler()), BatchSize: batchSize, Timeout: queueTimeout,
			Concurrency: max(s.Pollers, 1), Log: log}
		go func() { defer close(in.done); p.Run(pctx) }()
	case Compensator:
		p := &localrun.Poller{Name: name, Client: s.SQS, QueueURL: s.DLQURL, QueueARN: s.DLQARN, Region: s.Region,
			Handle: localrun.JSONHandler(fn.Handler()), BatchSize: batchSize, Timeout: queueTimeout, Concurrency: 1, Log: log}
		go func() { defer close(in.done); p.Run(pctx) }()
	default:
		close(in.done)
	}
	return in, nil
}

func (s *Stack) retire(in *instance) {
	in.stop()
	<-in.done
	in.fn.Stop()
	s.mu.Lock()
	if s.retired == nil {
		s.retired = map[string]int64{}
	}
	s.retired[in.fn.Name] += in.fn.Invocations()
	s.mu.Unlock()
	s.Ports.Give(in.fn.Port())
	in.log.Close()
}

// pick returns one running function of role, in turn.
func (s *Stack) pick(role string) (*Function, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ins := s.running[role]
	if len(ins) == 0 {
		return nil, errStopped
	}
	return ins[int(s.next.Add(1))%len(ins)].fn, nil
}

// Receive invokes a receiver (one of the running versions, in turn) with
// an API Gateway event, under the receiver's timeout, and returns its
// status code (0 when it failed or timed out).
func (s *Stack) Receive(ctx context.Context, event []byte) int {
	fn, err := s.pick(Receiver)
	if err != nil {
		return 0
	}
	ictx, cancel := context.WithTimeout(ctx, receiverTimeout)
	defer cancel()
	out, err := fn.Invoke(ictx, event)
	if err != nil {
		return 0
	}
	var resp struct {
		StatusCode int `json:"statusCode"`
	}
	if json.Unmarshal(out, &resp) != nil {
		return 0
	}
	return resp.StatusCode
}

// Sweep runs the sweep schedule every every until ctx ends: the
// EventBridge scheduled event to one of the running compensators.
func (s *Stack) Sweep(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			fn, err := s.pick(Compensator)
			if err != nil {
				continue
			}
			ev, err := localrun.ScheduledEvent(now, s.Region, "hookwall-upgrade-sweep")
			if err != nil {
				continue
			}
			ictx, cancel := context.WithTimeout(ctx, queueTimeout)
			if _, err := fn.Invoke(ictx, ev); err != nil && ctx.Err() == nil {
				s.Log.Warn("sweep failed", slog.String("function", fn.Name), slog.Any("error", err))
			}
			cancel()
		}
	}
}

// Close retires every function still running.
func (s *Stack) Close() {
	for _, r := range Roles {
		if len(s.Versions(r)) > 0 {
			_ = s.Set(context.Background(), r)
		}
	}
}

// Invocations returns how many times each "<role>@<version>" was invoked
// (the sweep schedule's included), by processes retired or running.
func (s *Stack) Invocations() map[string]int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := maps.Clone(s.retired)
	if out == nil {
		out = map[string]int64{}
	}
	for _, ins := range s.running {
		for _, in := range ins {
			out[in.fn.Name] += in.fn.Invocations()
		}
	}
	return out
}

// LogFiles returns the function processes' log files so far.
func (s *Stack) LogFiles() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.logs)
}

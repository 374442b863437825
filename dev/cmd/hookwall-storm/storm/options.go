package storm

import (
	"context"
	"io"
	"os"
	"time"

	"github.com/hookwall/hookwall/shared/protocol/provider/line"
	"github.com/hookwall/hookwall/shared/protocol/provider/standard"
	"github.com/hookwall/hookwall/shared/protocol/provider/wechat"
	"github.com/hookwall/hookwall/shared/protocol/provider/wecom"
)

// Options configure one storm. [Defaults] fills what is unset.
type Options struct {
	// Label names the storm in progress lines and the report.
	Label string
	// N is the number of items (first deliveries); LINE multi-event
	// items carry more than one event, so unique events ≥ N.
	N int
	// C is how many deliveries are sent at once.
	C int
	// Dup2 and Dup3 are the shares of items delivered twice and three times.
	Dup2, Dup3 float64
	// Concurrent is the share of duplicated items whose copies are sent at
	// the same moment (the others arrive scattered, late).
	Concurrent float64
	// Multi is the share of LINE items with 2 or 3 events in one body.
	Multi float64
	// Seed seeds the workload.
	Seed uint32
	// Providers are the providers of the items, round robin.
	Providers []string
	// Target says how the forward target misbehaves.
	Target TargetConfig
	// Deadline bounds the sending: redeliveries stop this long after the
	// start and whatever is not accepted then is "never accepted".
	Deadline time.Duration
	// Settle bounds the wait, after the sending, for every event to be terminal.
	Settle time.Duration
	// Env sets the functions' variables (HOOKWALL_LEASE, HOOKWALL_RECEIVE_BUDGET, …).
	Env map[string]string
	// Steps < 0 runs the processor as its Lambda builds it (the built-in
	// forwarding handler: one effect per event); Steps ≥ 0 replaces its
	// handlers with a storm-only one of Steps journaled steps per event.
	Steps int
	// BatchSize is the processor's SQS batch size (1 to 10).
	BatchSize int
	// Pollers is how many processor batches run at once.
	Pollers int
	// InvocationTimeout is the processor's function timeout (default: its
	// lease, as template.yaml sets it).
	InvocationTimeout time.Duration
	// Visibility is the main queue's visibility timeout (seconds) and
	// MaxReceive its maxReceiveCount.
	Visibility, MaxReceive int
	// SweepEvery is the sweeper's schedule.
	SweepEvery time.Duration
	// DDBEndpoint and SQSEndpoint are the stack's own endpoints, for the
	// storm's resources and its reads of the table (default
	// AWS_ENDPOINT_URL_DYNAMODB and AWS_ENDPOINT_URL_SQS). The functions
	// use the process's AWS_ENDPOINT_URL_* (a chaos run points them at
	// the fault proxy).
	DDBEndpoint, SQSEndpoint string
	// DDBPID is DynamoDB Local's PID, for its CPU time (0: not measured).
	DDBPID int
	// Progress receives the progress lines (nil: none).
	Progress io.Writer
	// Logs receives the functions' JSON logs (nil: discarded); LogLevel is their level.
	Logs     io.Writer
	LogLevel string
	// During, if set, runs alongside the sending (the chaos scenarios'
	// faults); the storm waits for it before it settles.
	During func(ctx context.Context, s *System) error
	// Before, if set, runs once the system is up and before the first
	// delivery (a scenario's pause); an error ends the storm.
	Before func(ctx context.Context, s *System) error
	// Inspect, if set, adds to the report before it is returned (a
	// scenario's own checks, from the system's observations).
	Inspect func(r *Report, s *System)
	// Keep keeps the table and queues at the end (default: deleted).
	Keep bool
	// Tenants are the tenants the items are spread over (nil: the demo
	// tenant only); each gets the demo tenant's settings under its name.
	Tenants []string
	// SharedTarget, with Steps ≥ 0, names the steps handler's target, one
	// that names no tenant (shared by every tenant: one breaker per tenant),
	// and gives its dispatcher the targets' gate (breakers, holds).
	SharedTarget string
	// Plan, if set, builds the items and their send order in place of
	// [Workload] and [SpreadTenants] (N is then the number of items it
	// built): the noisy-tenant storm's paced tenants ([NoisyWorkload]).
	// prefix tags the event ids, start is the storm's start.
	Plan func(prefix string, start time.Time) ([]Item, []Job)
	// Lead picks items sent first, alone, each accepted before the next and
	// before the storm (its other items); AfterLead then runs (a scenario
	// waiting for what the lead did) before the storm starts.
	Lead      func(items []Item) []int
	AfterLead func(ctx context.Context, s *System) error
}

// DefaultProviders returns the providers of a default storm: the mix the
// figures of docs/PERFORMANCE.md were measured on. -providers takes any
// provider of the registry.
func DefaultProviders() []string { return []string{line.Name, wecom.Name, wechat.Name, standard.Name} }

// Defaults returns the default options: 1,000 items, 16 at once, 30% twice,
// 10% three times, all four providers.
func Defaults() Options {
	return Options{
		Label: "storm", N: 1000, C: 16, Dup2: 0.3, Dup3: 0.1, Concurrent: 0.5, Multi: 0.3, Seed: 42,
		Providers: DefaultProviders(),
		Target:    TargetConfig{Dedupe: true},
		Deadline:  5 * time.Minute, Settle: 5 * time.Minute,
		Steps: -1, BatchSize: 10, Pollers: 4, Visibility: 30, MaxReceive: 10, SweepEvery: 10 * time.Second,
		DDBEndpoint: os.Getenv("AWS_ENDPOINT_URL_DYNAMODB"), SQSEndpoint: os.Getenv("AWS_ENDPOINT_URL_SQS"),
		LogLevel: "error",
	}
}

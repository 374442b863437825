package skew

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/hookwall/hookwall/dev/cmd/hookwall-run/localrun"
	"github.com/hookwall/hookwall/dev/cmd/hookwall-storm/storm"
	"github.com/hookwall/hookwall/shared/base/release"
	"github.com/hookwall/hookwall/shared/state/store"
)

// Options are a skew test's settings.
type Options struct {
	// Repo is the repository's root (releases.tsv, the current code, git).
	Repo string
	// Work receives the builds, logs and tenants (.local/upgrade).
	Work string
	// Mixes names the mixes to run (all when empty).
	Mixes []string
	// N items per mix, C sent at once; Dup2 and Dup3 the shares delivered
	// twice and three times, Concurrent the share of duplicated items whose
	// copies are sent at once, Multi the share of multi-event LINE items.
	N, C                          int
	Dup2, Dup3, Concurrent, Multi float64
	Seed                          uint32
	// Deadline bounds the sending; Settle each settling.
	Deadline, Settle time.Duration
	// SweepEvery is the sweep schedule's period.
	SweepEvery time.Duration
	// Pollers is each processor version's concurrent pollers.
	Pollers int
	// Ports is the ports' range ("FROM-TO"; "" for any free ones).
	Ports string
	// DDBEndpoint and SQSEndpoint are the local stack's endpoints.
	DDBEndpoint, SQSEndpoint string
	// LogLevel is the functions' LOG_LEVEL.
	LogLevel string
	// Reject is the share of events the business target rejects with 422
	// every time: 0 in the skew test; above 0 it checks the check, since
	// those events end FAILED, COMPENSATED or DEAD and the mix must fail.
	Reject float64
	// Log receives progress lines.
	Log *slog.Logger
}

// Defaults returns the default options: 500 items per mix, 30% delivered
// twice and 10% three times (as the storm), 8 at once.
func Defaults() Options {
	return Options{
		N: 500, C: 8, Dup2: 0.3, Dup3: 0.1, Concurrent: 0.5, Multi: 0.3, Seed: 32,
		Deadline: 2 * time.Minute, Settle: 2 * time.Minute, SweepEvery: 10 * time.Second, Pollers: 2,
		DDBEndpoint: os.Getenv("AWS_ENDPOINT_URL_DYNAMODB"), SQSEndpoint: os.Getenv("AWS_ENDPOINT_URL_SQS"),
		LogLevel: "info",
	}
}

// Result is one mix's outcome.
type Result struct {
	Mix      string `json:"mix"`
	What     string `json:"what"`
	Versions string `json:"versions"`
	// Took is the mix's time, building excluded; Logs its function logs.
	Took time.Duration `json:"took_ns"`
	Logs []string      `json:"logs"`
	// Items, Deliveries and Attempts are what was sent; Refused the
	// deliveries never accepted by the deadline.
	Items      int `json:"items"`
	Deliveries int `json:"deliveries"`
	Attempts   int `json:"attempts"`
	Refused    int `json:"refused"`
	// Tally is the verdict once everything settled.
	Tally Tally `json:"tally"`
	// LeftForNewer are the events not settled by the mix's own versions,
	// settled once the newer code ran every function (0 when the mix
	// settled by itself); Newer is the data the functions counted as left
	// for newer code.
	LeftForNewer int   `json:"left_for_newer"`
	Newer        Newer `json:"newer_format"`
	// AbsorbedReplays are repeats of an applied idempotency key the
	// target absorbed (a careful business dedupes by Idempotency-Key).
	AbsorbedReplays int `json:"absorbed_replays"`
	// Invocations counts each "<role>@<version>"'s invocations;
	// Unexercised names the receiver and processor versions of the mix
	// never invoked (the mix did not mix: a failure).
	Invocations map[string]int64 `json:"invocations"`
	Unexercised []string         `json:"unexercised,omitempty"`
}

// Newer is the sum of [NewerMetric] over a mix's function logs; Counted
// says whether any function of the mix counts it (a release without
// versioned formats does not).
type Newer struct {
	Count   int64 `json:"count"`
	Counted bool  `json:"counted"`
}

// OK reports the mix's verdict: every delivery accepted, every version of
// the mix invoked, and the tally OK.
func (r Result) OK() bool { return r.Refused == 0 && len(r.Unexercised) == 0 && r.Tally.OK() }

// Run builds the previous release and the current code, then runs each
// mix on a table and queues of its own and returns the results.
func Run(ctx context.Context, o Options) ([]Result, error) {
	rels, err := ReadReleases(filepath.Join(o.Repo, "releases.tsv"))
	if err != nil {
		return nil, err
	}
	prev, err := Previous(rels, release.Version)
	if err != nil {
		return nil, err
	}
	mixes, err := Select(Mixes(prev.Version, release.Version), o.Mixes)
	if err != nil {
		return nil, err
	}
	ports, err := ParsePorts(o.Ports)
	if err != nil {
		return nil, err
	}
	o.Log.Info("building", slog.String("previous", prev.Version+" ("+prev.Commit+")"), slog.String("current", release.Version))
	old, err := BuildCommit(ctx, prev.Version, o.Repo, prev.Commit, filepath.Join(o.Work, "v"+prev.Version))
	if err != nil {
		return nil, err
	}
	cur, err := BuildTree(ctx, release.Version, o.Repo, filepath.Join(o.Work, "current", "bin"))
	if err != nil {
		return nil, err
	}
	builds := map[string]Build{old.Version: old, cur.Version: cur}
	var out []Result
	for i, m := range mixes {
		r, err := runMix(ctx, o, m, builds, ports, i)
		if err != nil {
			return out, fmt.Errorf("skew: mix %s: %w", m.Name, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// runMix runs one mix on resources of its own.
func runMix(ctx context.Context, o Options, m Mix, builds map[string]Build, ports *Ports, n int) (res Result, err error) {
	start := time.Now()
	res = Result{Mix: m.Name, What: m.What, Versions: m.Describe(), Items: o.N}
	dir := filepath.Join(o.Work, fmt.Sprintf("mix%d-%s", n+1, m.Name))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return res, fmt.Errorf("skew: %w", err)
	}
	db, sq, err := storm.Admin(ctx, o.DDBEndpoint, o.SQSEndpoint)
	if err != nil {
		return res, err
	}
	prefix := storm.RandomPrefix()
	rs, err := storm.CreateResources(ctx, db, sq, "upgrade-"+prefix, 30, 10)
	if err != nil {
		return res, err
	}
	defer func() { err = errors.Join(err, rs.Delete()) }()

	target := storm.NewTarget(storm.TargetConfig{Dedupe: true, Reject4xx: rejecting(o.Reject)})
	stopTarget, forwardURL, err := serve(ports, target)
	if err != nil {
		return res, err
	}
	defer stopTarget()
	tenant, tenantsFile, err := demoTenant(dir, forwardURL)
	if err != nil {
		return res, err
	}
	stack := &Stack{
		Builds: builds, SQS: sq, QueueURL: rs.QueueURL, QueueARN: rs.QueueARN, DLQURL: rs.DLQURL, DLQARN: rs.DLQARN,
		Region: "us-east-1", Ports: ports, LogDir: dir, Pollers: o.Pollers, Log: o.Log.With(slog.String("mix", m.Name)),
		Env: map[string]string{
			"TABLE_NAME": rs.Table, "QUEUE_URL": rs.QueueURL, "DLQ_URL": rs.DLQURL, "HOOKWALL_TENANTS_FILE": tenantsFile,
			"AWS_ENDPOINT_URL_DYNAMODB": o.DDBEndpoint, "AWS_ENDPOINT_URL_SQS": o.SQSEndpoint, "AWS_REGION": "us-east-1",
			"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test", "LOG_LEVEL": o.LogLevel,
		},
	}
	defer func() { stack.Close(); res.Logs = stack.LogFiles() }()
	for _, r := range Roles {
		if err := stack.Set(ctx, r, m.Start[r]...); err != nil {
			return res, err
		}
	}
	sweepCtx, stopSweep := context.WithCancel(ctx)
	defer stopSweep()
	go stack.Sweep(sweepCtx, o.SweepEvery)

	items, jobs := storm.Workload(o.N, storm.DefaultProviders(), localrun.DefaultTenant, o.Dup2, o.Dup3, o.Concurrent, o.Multi,
		o.Seed, prefix, time.Now())
	var keys []string
	for _, it := range items {
		keys = append(keys, it.Keys...)
	}
	sctx, cancel := context.WithTimeout(ctx, o.Deadline)
	defer cancel()
	g := &sender{stack: stack, tenant: tenant, items: items, deadline: time.Now().Add(o.Deadline)}
	changed := make(chan error, 1)
	go func() {
		changed <- applyChanges(sctx, stack, m.Changes, func() float64 { return float64(g.done.Load()) / float64(len(jobs)) })
	}()
	o.Log.Info("storm", slog.String("mix", m.Name), slog.String("versions", m.Describe()), slog.Int("items", len(items)),
		slog.Int("events", len(keys)), slog.Int("jobs", len(jobs)))
	g.send(sctx, jobs, o.C)
	if err := <-changed; err != nil {
		return res, err
	}
	res.Deliveries, res.Attempts, res.Refused = int(g.deliveries.Load()), int(g.attempts.Load()), int(g.refused.Load())

	table, err := store.New(store.Config{Client: db, TableName: rs.Table, Function: "cli"})
	if err != nil {
		return res, fmt.Errorf("skew: %w", err)
	}
	look := func() (Tally, error) { return tally(ctx, table, rs, sq, target, keys) }
	o.Log.Info("settling", slog.String("mix", m.Name), slog.Any("versions", m.End()))
	t, err := settle(ctx, look, o.Settle)
	if err != nil {
		return res, err
	}
	if !t.Settled() && !allOn(stack, release.Version) {
		// What the mix's versions left: the newer code runs every function.
		res.LeftForNewer = t.Unsettled
		o.Log.Info("the newer code takes over", slog.String("mix", m.Name), slog.Int("unsettled", t.Unsettled),
			slog.Int("queue", t.Queue), slog.Int("dlq", t.DLQ))
		for _, r := range Roles {
			if err := stack.Set(ctx, r, release.Version); err != nil {
				return res, err
			}
		}
		if t, err = settle(ctx, look, o.Settle); err != nil {
			return res, err
		}
	}
	res.Tally = t
	res.AbsorbedReplays = target.Stats().AbsorbedReplays
	stopSweep()
	stack.Close()
	res.Invocations = stack.Invocations()
	res.Unexercised = m.Unexercised(res.Invocations)
	res.Newer.Count, res.Newer.Counted, err = CountNewer(stack.LogFiles())
	res.Took = time.Since(start)
	return res, err
}

// allOn reports whether every role runs only version.
func allOn(s *Stack, version string) bool {
	for _, r := range Roles {
		if !slices.Equal(s.Versions(r), []string{version}) {
			return false
		}
	}
	return true
}

// applyChanges makes each change once done() reaches its share, or at
// once when ctx ends first (the storm was sent).
func applyChanges(ctx context.Context, s *Stack, changes []Change, done func() float64) error {
	for _, c := range changes {
		for done() < c.After && ctx.Err() == nil {
			time.Sleep(50 * time.Millisecond)
		}
		if err := s.Set(context.WithoutCancel(ctx), c.Role, c.Versions...); err != nil {
			return err
		}
	}
	return nil
}

// rejecting returns the target's rule rejecting share of the event keys
// (by their hash), or nil for none.
func rejecting(share float64) func(string) bool {
	if share <= 0 {
		return nil
	}
	return func(key string) bool {
		h := fnv.New32a()
		_, _ = h.Write([]byte(key))
		return float64(h.Sum32()%1000) < share*1000
	}
}

// settle looks every 2 s until the tally is settled or within is over.
func settle(ctx context.Context, look func() (Tally, error), within time.Duration) (Tally, error) {
	deadline := time.Now().Add(within)
	for {
		t, err := look()
		if err != nil || t.Settled() || time.Now().After(deadline) {
			return t, err
		}
		select {
		case <-ctx.Done():
			return t, ctx.Err()
		case <-time.After(2 * time.Second):
		}
	}
}

// tally judges keys now.
func tally(ctx context.Context, table *store.Table, rs *storm.Resources, sq *sqs.Client, target *storm.Target, keys []string) (Tally, error) {
	recs, err := readRecords(ctx, table, keys)
	if err != nil {
		return Tally{}, err
	}
	effects, _ := target.Effects()
	t := Judge(keys, effects, recs)
	t.Queue, t.DLQ = rs.QueueDepth(ctx, rs.QueueURL), rs.QueueDepth(ctx, rs.DLQURL)
	return t, nil
}

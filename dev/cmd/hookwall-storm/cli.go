package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/hookwall/hookwall/dev/cmd/hookwall-storm/storm"
	"github.com/hookwall/hookwall/shared/protocol/providers"
)

// exitError is a run whose report failed: already printed.
type exitError struct{ msg string }

func (e exitError) Error() string { return e.msg }

// flags are the command line of both modes.
type flags struct {
	o                   storm.Options
	jsonOut, svgOut     string
	cpuProfile, memProf string
	providers, env      string
	ddbPIDFile          string
	reject4xx           float64
	scenarios           string
	quiet               bool
	logs                string
	noisy               bool
	noisyOpts           storm.NoisyOptions
}

func (f *flags) register(fs *flag.FlagSet, chaos bool) {
	o := &f.o
	fs.IntVar(&o.N, "n", o.N, "items (first deliveries); LINE multi-event items carry 2-3 events")
	fs.IntVar(&o.C, "c", o.C, "concurrent deliveries")
	fs.Float64Var(&o.Dup2, "dup2", o.Dup2, "share of items delivered twice")
	fs.Float64Var(&o.Dup3, "dup3", o.Dup3, "share of items delivered three times")
	fs.Float64Var(&o.Concurrent, "concurrent", o.Concurrent, "share of duplicated items whose copies arrive at the same moment (the rest arrive late, shuffled)")
	fs.Float64Var(&o.Multi, "multi", o.Multi, "share of LINE items with 2-3 events in one body")
	seed := uint(o.Seed)
	fs.Func("seed", fmt.Sprintf("workload seed (default %d)", seed), func(s string) error {
		_, err := fmt.Sscan(s, &seed)
		o.Seed = uint32(seed)
		return err
	})
	fs.StringVar(&f.providers, "providers", strings.Join(o.Providers, ","), "providers, comma-separated (any of "+strings.Join(providers.Names(), ", ")+")")
	fs.Float64Var(&o.Target.Fail5xx, "target-fail", 0, "share of forward calls the target answers 503")
	fs.Float64Var(&o.Target.Timeout, "target-timeout", 0, "share of forward calls the target applies, then holds until the client gives up")
	fs.Float64Var(&f.reject4xx, "target-4xx", 0, "share of events (chosen by key) the target always answers 422")
	fs.BoolVar(&o.Target.Dedupe, "target-dedupe", o.Target.Dedupe, "the target dedupes by Idempotency-Key (same-key repeats are absorbed replays, not doubles)")
	fs.DurationVar(&o.Deadline, "deadline", o.Deadline, "stop redelivering this long after the start (then: never accepted)")
	fs.DurationVar(&o.Settle, "settle", o.Settle, "longest wait for every event to be terminal")
	fs.IntVar(&o.BatchSize, "batch", o.BatchSize, "processor SQS batch size (1-10)")
	fs.IntVar(&o.Steps, "steps", o.Steps, "journaled steps per event of a storm-only handler replacing the processor's (-1: the built-in forwarding handler, 1 step)")
	fs.IntVar(&o.Pollers, "pollers", o.Pollers, "processor batches at once")
	fs.StringVar(&f.env, "env", "", "functions' settings, K=V,K=V (e.g. HOOKWALL_LEASE=10s)")
	fs.StringVar(&f.jsonOut, "json", "", "write the JSON report(s) to FILE (- for stdout); the SVG histogram goes next to it")
	fs.StringVar(&f.svgOut, "svg", "", "write the latency histogram SVG to FILE (default: next to -json)")
	fs.StringVar(&f.cpuProfile, "cpuprofile", "", "write a CPU profile of the whole process (receiver, processor, compensator in-process) to FILE")
	fs.StringVar(&f.memProf, "memprofile", "", "write a heap profile to FILE at the end")
	fs.StringVar(&f.logs, "logs", "", "write the functions' JSON logs to FILE (default: discarded)")
	fs.StringVar(&o.LogLevel, "log-level", o.LogLevel, "the functions' log level")
	fs.BoolVar(&f.quiet, "q", false, "no progress lines")
	fs.BoolVar(&o.Keep, "keep", false, "keep the storm's table and queues")
	if chaos {
		fs.StringVar(&f.scenarios, "scenarios", "", "scenarios to run, comma-separated (default all: "+scenarioList()+")")
	} else {
		fs.IntVar(&o.Visibility, "visibility", o.Visibility, "main queue visibility timeout, seconds")
		n := &f.noisyOpts
		fs.BoolVar(&f.noisy, "noisy-tenant", false, "the noisy-tenant storm: -quiet-tenants tenants at -tenant-rate items/s each and one at -noisy-factor times that, "+
			"interleaved for -for, in -rounds pairs with and without the noisy tenant (-n is not used); reports each tenant's latencies and the quiet tenants' p99 ratio")
		fs.IntVar(&n.Quiet, "quiet-tenants", n.Quiet, "noisy-tenant storm: quiet tenants")
		fs.IntVar(&n.Factor, "noisy-factor", n.Factor, "noisy-tenant storm: the noisy tenant's rate over one quiet tenant's")
		fs.Float64Var(&n.Rate, "tenant-rate", n.Rate, "noisy-tenant storm: each quiet tenant's items (first deliveries) per second, duplicates on top")
		fs.DurationVar(&n.For, "for", n.For, "noisy-tenant storm: how long the tenants send")
		fs.IntVar(&n.Rounds, "rounds", n.Rounds, "noisy-tenant storm: pairs of storms with and without the noisy tenant, alternated (0: one storm with it)")
		fs.StringVar(&f.ddbPIDFile, "ddb-pid-file", defaultPIDFile(), "DynamoDB Local's PID file, for its CPU time")
	}
}

func scenarioList() string {
	var n []string
	for _, s := range storm.Scenarios() {
		n = append(n, s.Name)
	}
	return strings.Join(n, ",")
}

func defaultPIDFile() string {
	if d := os.Getenv("STACK_RUN_DIR"); d != "" {
		return filepath.Join(d, "ddb.pid")
	}
	return filepath.Join(".local", "run", "ddb.pid")
}

// run is hookwall-storm: its stages, in order, parse the flags, make the
// options, open the logs and the CPU profile, run the storms (one, the
// noisy pairs, or the chaos scenarios), write the heap profile, print the
// reports, and say whether they passed.
func run(ctx context.Context, args []string) error {
	f, chaos, err := parseFlags(args)
	if f == nil || err != nil {
		return err // nil f and err: -h
	}
	if err := f.options(); err != nil {
		return err
	}
	closeOutputs, err := f.openOutputs()
	if err != nil {
		return err
	}
	defer closeOutputs()
	reports, noisy, runErr := f.runStorms(ctx, chaos)
	if f.memProf != "" {
		runtime.GC()
		if mf, err := os.Create(f.memProf); err == nil {
			_ = pprof.WriteHeapProfile(mf)
			mf.Close()
		}
	}
	if err := output(f, reports, noisy); err != nil {
		return err
	}
	if runErr != nil {
		return runErr
	}
	return verdict(reports, noisy)
}

// parseFlags parses hookwall-storm's arguments ("chaos" first: the chaos
// scenarios). It returns nil flags and a nil error for -h.
func parseFlags(args []string) (f *flags, chaos bool, err error) {
	chaos = len(args) > 0 && args[0] == "chaos"
	name := "hookwall-storm"
	if chaos {
		args, name = args[1:], "hookwall-storm chaos"
	}
	f = &flags{o: storm.Defaults(), noisyOpts: storm.DefaultNoisy()}
	if chaos {
		f.o.N, f.o.Deadline, f.o.Settle = 10000, 4*time.Minute, 4*time.Minute
	}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	f.register(fs, chaos)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: %s [flags]\n\n", name)
		if chaos {
			fmt.Fprintln(fs.Output(), "Runs the chaos scenarios, each a storm of -n items, on a private stack (free ports) behind\n"+
				"toxiproxy; each must end with lost=0, doubled=0, never-accepted=0 (else exit status 1); the outage\n"+
				"scenarios (target-down, pause-*) also with every event SUCCEEDED, the target's calls during the\n"+
				"outage within the breaker's bound and the drain within the rate limit.")
		} else {
			fmt.Fprintln(fs.Output(), "Sends a storm of signed, duplicated deliveries through Hookwall in-process, on a table and queues\n"+
				"of its own on the stack of AWS_ENDPOINT_URL_DYNAMODB / AWS_ENDPOINT_URL_SQS, and prints one report;\n"+
				"exit status 1 when lost, doubled or never-accepted is not 0. `hookwall-storm chaos -h`: the fault scenarios.")
		}
		fmt.Fprintln(fs.Output(), "\nFlags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, chaos, nil
		}
		return nil, chaos, err
	}
	if fs.NArg() > 0 {
		return nil, chaos, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	return f, chaos, nil
}

// options completes f.o from the flags that are not options themselves:
// the providers, -env, -reject-4xx and -quiet.
func (f *flags) options() error {
	o := &f.o
	o.Providers = splitList(f.providers)
	if f.env != "" {
		o.Env = map[string]string{}
		for _, kv := range splitList(f.env) {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				return fmt.Errorf("-env %q: want K=V", kv)
			}
			o.Env[k] = v
		}
	}
	if f.reject4xx > 0 {
		share := f.reject4xx
		o.Target.Reject4xx = func(key string) bool {
			h := fnv.New32a()
			h.Write([]byte(key))
			return float64(h.Sum32()%10000)/10000 < share
		}
	}
	if !f.quiet {
		o.Progress = os.Stderr
	}
	return nil
}

// openOutputs opens the logs file and starts the CPU profile when asked;
// the returned function stops and closes them.
func (f *flags) openOutputs() (closeAll func(), err error) {
	var closers []func()
	closeAll = func() {
		for _, c := range slices.Backward(closers) {
			c()
		}
	}
	if f.logs != "" {
		lf, err := os.Create(f.logs)
		if err != nil {
			return nil, err
		}
		closers = append(closers, func() { lf.Close() })
		f.o.Logs = lf
	}
	if f.cpuProfile != "" {
		pf, err := os.Create(f.cpuProfile)
		if err != nil {
			closeAll()
			return nil, err
		}
		closers = append(closers, func() { pf.Close() })
		if err := pprof.StartCPUProfile(pf); err != nil {
			closeAll()
			return nil, fmt.Errorf("cpu profile: %w", err)
		}
		closers = append(closers, pprof.StopCPUProfile)
	}
	return closeAll, nil
}

// runStorms runs the noisy-tenant pairs (-noisy-tenant), the chaos
// scenarios, or one storm.
func (f *flags) runStorms(ctx context.Context, chaos bool) (reports []*storm.Report, noisy *storm.NoisyReport, err error) {
	o := &f.o
	if chaos {
		reports, err = storm.RunChaos(ctx, storm.ChaosOptions{Base: *o, Scenarios: splitList(f.scenarios), Progress: o.Progress})
		return reports, nil, err
	}
	if o.DDBPID == 0 && f.ddbPIDFile != "" {
		o.DDBPID = readPID(f.ddbPIDFile)
	}
	if f.noisy {
		if o.Label == "storm" {
			o.Label = "noisy"
		}
		if noisy, err = storm.RunNoisy(ctx, *o, f.noisyOpts, os.Stderr); noisy != nil {
			reports = noisy.Runs
		}
		return reports, noisy, err
	}
	r, err := storm.Run(ctx, *o)
	if r != nil {
		reports = append(reports, r)
	}
	return reports, nil, err
}

// verdict is the storms' pass or fail: an exitError naming what failed.
func verdict(reports []*storm.Report, noisy *storm.NoisyReport) error {
	if noisy != nil && !noisy.OK {
		fmt.Fprintln(os.Stderr, "hookwall-storm: FAILED (lost, doubled, never accepted, a message outside its tenant's group, or a tenant's events not all processed)")
		return exitError{"failed"}
	}
	var failed []string
	for _, r := range reports {
		if !r.OK {
			failed = append(failed, r.Label)
		}
	}
	if len(failed) > 0 {
		fmt.Fprintf(os.Stderr, "hookwall-storm: FAILED (lost, doubled, never accepted, or an outage check): %s\n", strings.Join(failed, ", "))
		return exitError{"failed"}
	}
	return nil
}

// output prints the reports as text, and as JSON and SVG when asked; a
// noisy-tenant storm's summary comes after its storms' reports, and its
// JSON is the one written.
func output(f *flags, reports []*storm.Report, noisy *storm.NoisyReport) error {
	var text io.Writer = os.Stdout
	if f.jsonOut == "-" {
		text = os.Stderr
	}
	for _, r := range reports {
		fmt.Fprintln(text)
		r.Text(text)
	}
	if noisy != nil {
		fmt.Fprintln(text)
		noisy.Text(text)
	} else if len(reports) > 1 {
		fmt.Fprintln(text, "\n== summary")
		for _, r := range reports {
			fmt.Fprintf(text, "%-24s ok=%-5t lost=%d doubled=%d never-accepted=%d needed-rescue=%d rescued-by: %s\n",
				r.Label, r.OK, r.Outcome.Lost, r.Outcome.Doubled, r.Outcome.NeverAccepted, r.Outcome.NeededRescue, counts(r.Outcome.Rescued))
		}
	}
	svgPath := f.svgOut
	if svgPath == "" && f.jsonOut != "" && f.jsonOut != "-" {
		svgPath = strings.TrimSuffix(f.jsonOut, filepath.Ext(f.jsonOut)) + ".svg"
	}
	for _, p := range []string{svgPath, f.jsonOut} {
		if p != "" && p != "-" {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return fmt.Errorf("output dir: %w", err)
			}
		}
	}
	if svgPath != "" && len(reports) > 0 {
		doc := reports[0].SVG
		if len(reports) > 1 {
			doc = svgStack(reports)
		}
		if err := os.WriteFile(svgPath, []byte(doc), 0o644); err != nil {
			return fmt.Errorf("write %s: %w", svgPath, err)
		}
		fmt.Fprintln(text, "histogram:", svgPath)
	}
	if f.jsonOut == "" {
		return nil
	}
	for _, r := range reports {
		r.SVG = ""
	}
	var v any = reports
	switch {
	case noisy != nil:
		v = noisy
	case len(reports) == 1:
		v = reports[0]
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if f.jsonOut == "-" {
		_, err = os.Stdout.Write(b)
		return err
	}
	if err := os.WriteFile(f.jsonOut, b, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", f.jsonOut, err)
	}
	fmt.Fprintln(text, "report:", f.jsonOut)
	return nil
}

// svgStack puts the scenarios' SVG documents one under the other.
func svgStack(reports []*storm.Report) string {
	var b strings.Builder
	h := 0
	var parts []string
	for _, r := range reports {
		var w, ht int
		fmt.Sscanf(r.SVG[strings.Index(r.SVG, `width="`):], `width="%d" height="%d"`, &w, &ht)
		parts = append(parts, fmt.Sprintf(`<g transform="translate(0,%d)">%s</g>`, h, r.SVG))
		h += ht
	}
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="900" height="%d">`+"\n", h)
	for _, p := range parts {
		b.WriteString(p)
	}
	b.WriteString("</svg>\n")
	return b.String()
}

func counts(m map[string]int) string {
	var p []string
	for k, v := range m {
		p = append(p, fmt.Sprintf("%s=%d", k, v))
	}
	if len(p) == 0 {
		return "nothing needed"
	}
	sort.Strings(p)
	return strings.Join(p, " ")
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func readPID(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	var n int
	fmt.Sscan(strings.TrimSpace(string(b)), &n)
	return n
}

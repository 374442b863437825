// Command hookwall-upgrade is the skew test of `make upgrade-test`: the
// previous release (releases.tsv) and the current code running Hookwall's
// functions at once, in three mixes, under a storm with duplicates; it
// prints each mix's lost, doubled, FAILED, DEAD and COMPENSATED counts and
// exits 1 unless all are 0 (package skew).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/hookwall/hookwall/dev/cmd/hookwall-upgrade/skew"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o := skew.Defaults()
	fs := flag.NewFlagSet("hookwall-upgrade", flag.ContinueOnError)
	fs.SetOutput(stderr)
	repo := fs.String("repo", ".", "the repository's root (releases.tsv, the current code, its git history)")
	work := fs.String("work", ".local/upgrade", "where the builds, function logs and tenants go")
	fs.IntVar(&o.N, "n", o.N, "items per mix (30% delivered twice, 10% three times, as make storm)")
	fs.IntVar(&o.C, "c", o.C, "items sent at once")
	mixes := fs.String("mixes", "", "comma-separated mixes to run (old-receiver, old-processor, rollback; default all)")
	fs.DurationVar(&o.Deadline, "deadline", o.Deadline, "bound on sending each mix's storm")
	fs.DurationVar(&o.Settle, "settle", o.Settle, "bound on each settling")
	jsonOut := fs.String("json", "", "also write the results as JSON to this file")
	fs.StringVar(&o.Ports, "ports", o.Ports, "ports to listen on, FROM-TO (default: free ones)")
	fs.StringVar(&o.LogLevel, "log-level", o.LogLevel, "the functions' LOG_LEVEL")
	fs.Float64Var(&o.Reject, "reject", 0, "share of events the business target rejects with 422 (a check of the check: the mixes must then fail)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	var err error
	if o.Repo, err = filepath.Abs(*repo); err == nil {
		o.Work, err = filepath.Abs(*work)
	}
	if err != nil {
		fmt.Fprintln(stderr, "hookwall-upgrade:", err)
		return 2
	}
	if *mixes != "" {
		o.Mixes = strings.Split(*mixes, ",")
	}
	o.Log = slog.New(slog.NewTextHandler(stderr, nil))
	results, err := skew.Run(ctx, o)
	skew.Report(stdout, results)
	if *jsonOut != "" {
		if b, jerr := json.MarshalIndent(results, "", "  "); jerr == nil {
			_ = os.WriteFile(*jsonOut, b, 0o644)
		}
	}
	if err != nil {
		fmt.Fprintln(stderr, "hookwall-upgrade:", err)
		return 1
	}
	for _, r := range results {
		if !r.OK() {
			fmt.Fprintln(stderr, "hookwall-upgrade: FAIL: mix "+r.Mix+" lost, doubled, failed or left events (see the report and its logs)")
			return 1
		}
	}
	fmt.Fprintln(stdout, "hookwall-upgrade: PASS")
	return 0
}

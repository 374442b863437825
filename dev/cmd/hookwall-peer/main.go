// Command hookwall-peer is the Hookwall twin of the Powertools peer bench's
// `shuffled` mode (../shared/peers/powertools, bench.mjs): the same workload
// (N unique one-event deliveries, round(0.3 N) delivered twice, round(0.1 N)
// three times, the rest once, shuffled by the same seeded mulberry32 +
// Fisher-Yates, C concurrent workers, warm-up rounds first) through the
// receiver's Lambda handler, built by intake.Build as the Lambda builds it and
// called in-process through HandleAPIGateway, against DynamoDB Local and the
// SQS server of scripts/services-up.sh. It prints one JSON document with the
// peer's field names (deliveries_per_s, latency_ms, dynamodb_calls, cpu, ...).
//
//	hookwall-peer [-n 2000] [-c 16] [-warmup 3000] [-seed 42] [-ddb-pid-file .local/run/ddb.pid]
//	hookwall-peer -dump-workload FILE   # the delivery order, as bench.mjs --dump-workload
//	hookwall-peer -compare DIR          # medians of DIR/hookwall-*.json and DIR/powertools-*.json, and the ratios
//
// It reads the stack's env (AWS_ENDPOINT_URL_DYNAMODB, AWS_ENDPOINT_URL_SQS,
// TABLE_NAME, QUEUE_URL, AWS_* credentials) and HOOKWALL_TENANTS_FILE
// (default infra/local/tenants.json, tenant "demo").
//
// `make perf` (scripts/perf/protocol.sh; `make peer` is the same) runs it and
// the Powertools bench alternately, each on a fresh stack, and compares them
// (scripts/perf/summary.py).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
)

type options struct {
	n, c, warmup   int
	dup2, dup3     float64
	seed           uint32
	ddbPidFile     string
	tenant         string
	dumpWorkload   string
	compare        string
	skipVerify     bool
	logLevel       string
	tenantsDefault string
	cpuProfile     string
}

func main() {
	var o options
	var seed uint
	flag.IntVar(&o.n, "n", 2000, "unique events")
	flag.IntVar(&o.c, "c", 16, "concurrent deliveries")
	flag.IntVar(&o.warmup, "warmup", 3000, "unique events of warm-up before the measured run (rounds of 500)")
	flag.Float64Var(&o.dup2, "dup2", 0.3, "share of events delivered twice")
	flag.Float64Var(&o.dup3, "dup3", 0.1, "share of events delivered three times")
	flag.UintVar(&seed, "seed", 42, "workload seed (the peer's mulberry32 seed)")
	flag.StringVar(&o.ddbPidFile, "ddb-pid-file", "", "PID file of DynamoDB Local (services-up: $STACK_RUN_DIR/ddb.pid) for its CPU time")
	flag.StringVar(&o.tenant, "tenant", "demo", "tenant with a LINE channel in the tenants document")
	flag.StringVar(&o.dumpWorkload, "dump-workload", "", "write the delivery order (event indexes) to FILE and exit")
	flag.StringVar(&o.compare, "compare", "", "print medians and ratios of DIR/hookwall-*.json vs DIR/powertools-*.json and exit")
	flag.BoolVar(&o.skipVerify, "skip-verify", false, "skip the table check after the run")
	flag.StringVar(&o.logLevel, "log", "info", "receiver log level (the production JSON logger, written to io.Discard)")
	flag.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of the measured run (not the warm-up) to FILE")
	flag.Parse()
	o.seed = uint32(seed)
	var err error
	switch {
	case o.compare != "":
		err = compare(os.Stdout, o.compare)
	case o.dumpWorkload != "":
		err = dumpWorkload(o)
	default:
		err = run(context.Background(), o)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "hookwall-peer:", err)
		os.Exit(1)
	}
}

package samlocal

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hookwall/hookwall/dev/cmd/hookwall-run/localrun"
)

// banner is what `make sam-local` prints once it is ready.
type banner struct {
	api, lambda, forward, forwarded, tenants, image, arch string
	table, queue, dlq, ddb, sqs, runDir                   string
	localForward, demo                                    bool
	pollers                                               []*localrun.Poller
	// configured are the providers the demo tenant has in the tenants
	// document (nil: unknown).
	configured []string
	sweepEvery time.Duration
	started    []string
}

func printBanner(sys System, b banner) {
	w := sys.Stderr
	rel := func(p string) string { return localrun.ShortPath(sys.WorkDir, p) }
	var sources []string
	for _, p := range b.pollers {
		sources = append(sources, fmt.Sprintf("%s ← %s (batches of %d, window %s)", p.Name, queueName(p.QueueURL), p.BatchSize, p.Wait))
	}
	sources = append(sources, "sweeper every "+b.sweepEvery.String())
	fmt.Fprintf(w, "\nHookwall is running in Lambda containers (sam local, %s, image %s).\n\n", b.arch, b.image)
	fmt.Fprintf(w, "  receiver   %s/webhooks/{%s}/%s   (sam local start-api → ReceiverFunction)\n", b.api, strings.Join(localrun.SendProviders(), ","), localrun.DefaultTenant)
	fmt.Fprintf(w, "  events API %s/events/{provider}/{tenant}/{id}   (IAM on AWS; sam local does not check it)\n", b.api)
	fmt.Fprintf(w, "  functions  %s   (sam local start-lambda: ProcessorFunction, CompensatorFunction)\n", b.lambda)
	fmt.Fprintf(w, "  sources    %s\n", strings.Join(sources, "; "))
	switch {
	case b.localForward:
		fmt.Fprintf(w, "  forward    %s   (a local target standing for your business: answers 200, logs each request to %s)\n", b.forward, rel(b.forwarded))
	default:
		fmt.Fprintf(w, "  forward    %s   (FORWARD_URL)\n", b.forward)
	}
	if b.demo {
		fmt.Fprintf(w, "  tenants    %s   (demo tenant %q, made-up secrets, copied into each function's build)\n", rel(b.tenants), localrun.DefaultTenant)
	} else {
		fmt.Fprintf(w, "  tenants    %s   (copied into each function's build)\n", rel(b.tenants))
	}
	fmt.Fprintf(w, "  table      %s on %s; queues %s and %s on %s\n", b.table, b.ddb, b.queue, b.dlq, b.sqs)
	fmt.Fprintf(w, "  logs       this terminal (api | and lambda | lines: the functions' own logs), %s/{%s,%s}\n", rel(b.runDir), APILog, LambdaLog)
	fmt.Fprintf(w, "\nSend a real signed event (paste into another terminal; the same command again is a duplicate: answered, not processed again):\n\n")
	for _, c := range localrun.SendCommandLines(sys.RunnerBin, sys.WorkDir, b.api, b.tenants) {
		if !b.demo && b.configured != nil && !slices.Contains(b.configured, c.Provider) {
			continue // the tenant has no such section: the command would be refused
		}
		fmt.Fprintf(w, "  %-18s %s\n", c.Label, c.Line)
	}
	fmt.Fprintf(w, "\nOne event's record, steps and history:  curl -s %s/events/line/%s/<id>\n", b.api, localrun.DefaultTenant)
	stop := "Stop: Ctrl-C (stops everything this run started: the event sources, sam local and its containers"
	if len(b.started) > 0 {
		stop += ", " + strings.Join(b.started, ", ")
	} else {
		stop += "; the engine and the local services were already running and keep running"
	}
	fmt.Fprintf(w, "%s).\n\n", stop)
}

// queueName is the last part of a queue URL.
func queueName(url string) string {
	return url[strings.LastIndexByte(url, '/')+1:]
}

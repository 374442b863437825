// Command hookwall-storm sends a storm of signed webhook deliveries with
// duplicates through Hookwall running in-process (receiver over real HTTP,
// processor, compensator, sweeper) on a table and queues of its own, waits
// until every event is terminal and prints one report: throughput,
// latencies, AWS calls, CPU, and lost / doubled / never accepted, which must
// be 0 (the exit status says so).
//
//	hookwall-storm [flags]                 # one storm on the stack of the environment (make storm)
//	hookwall-storm chaos [flags]           # the chaos scenarios on a private stack behind toxiproxy (make chaos)
//
// See package storm and `hookwall-storm -h`.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:])
	if err != nil {
		var ex exitError
		if !errors.As(err, &ex) {
			fmt.Fprintln(os.Stderr, "hookwall-storm:", err)
		}
		os.Exit(1)
	}
}

package localrun

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hookwall/hookwall/shared/protocol/providers"
)

// banner is what the runner prints once it is ready.
type banner struct {
	base, forward, tenants, outcomes, forwarded string
	localForward, demo                          bool
	table, queue, dlq, ddb, sqs                 string
	started, functions                          []string
	// configured are the providers the tenant configures in the tenants
	// document (nil: unknown, as when the document does not load).
	configured []string
}

func printBanner(sys System, cfg Config, b banner) {
	w := sys.Stderr
	rel := func(p string) string { return ShortPath(sys.WorkDir, p) }
	fmt.Fprintf(w, "\nHookwall is running locally (one process: %s).\n\n", strings.Join(b.functions, ", "))
	fmt.Fprintf(w, "  receiver   %s/webhooks/{%s}/%s\n", b.base, strings.Join(providers.Names(), ","), DefaultTenant)
	fmt.Fprintf(w, "  page       %s%s   (recent events, history, steps, replay)\n", b.base, PagePath)
	switch {
	case b.localForward && b.demo:
		fmt.Fprintf(w, "  forward    %s   (a local target standing for your business: answers 200, logs each request to %s)\n", b.forward, rel(b.forwarded))
	case b.localForward:
		fmt.Fprintf(w, "  forward    %s   (a local target, answers 200; your tenants document says where each tenant forwards)\n", b.forward)
	default:
		fmt.Fprintf(w, "  forward    %s   (FORWARD_URL)\n", b.forward)
	}
	fmt.Fprintf(w, "  outcomes   %s   (each EventBridge outcome event, one JSON line)\n", rel(b.outcomes))
	if b.demo {
		fmt.Fprintf(w, "  tenants    %s   (demo tenant %q, made-up secrets; HOOKWALL_TENANTS_FILE=… for your own)\n", rel(b.tenants), DefaultTenant)
	} else {
		fmt.Fprintf(w, "  tenants    %s\n", rel(b.tenants))
	}
	fmt.Fprintf(w, "  table      %s on %s; queues %s and %s on %s\n", b.table, b.ddb, b.queue, b.dlq, b.sqs)
	fmt.Fprintf(w, "\nSend a real signed event (paste into another terminal; the same command again is a duplicate: answered, not processed again):\n\n")
	for _, c := range sendCommands(sys, cfg, b) {
		if !b.demo && b.configured != nil && !slices.Contains(b.configured, c.Provider) {
			continue // the tenant has no such section: the command would be refused.
		}
		fmt.Fprintf(w, "  %-18s %s\n", c.Label, c.Line)
	}
	fmt.Fprintf(w, "\nWatch: this terminal (each event's path: received → claimed → enqueued → processing → forwarded → succeeded → outcome),\n")
	fmt.Fprintf(w, "       the page %s%s, and  tail -f %s\n", b.base, PagePath, rel(b.outcomes))
	stop := "Stop: Ctrl-C (stops everything this run started"
	if len(b.started) > 0 {
		stop += ", the local services included"
	} else {
		stop += "; the local services were already running and keep running: make services-down"
	}
	fmt.Fprintf(w, "%s).\n\n", stop)
}

// ShortPath returns p relative to dir when it is inside it.
func ShortPath(dir, p string) string {
	if dir == "" {
		return p
	}
	if r, err := filepath.Rel(dir, p); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return p
}

// shellWord quotes s for a POSIX shell when it needs it.
func shellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+:=,@") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

package skew

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
)

// Report writes one block per mix: what ran, what was sent, and the verdict.
func Report(w io.Writer, results []Result) {
	for _, r := range results {
		verdict := "PASS"
		if !r.OK() {
			verdict = "FAIL"
		}
		t := r.Tally
		fmt.Fprintf(w, "mix %s (%s): %s\n", r.Mix, r.What, verdict)
		fmt.Fprintf(w, "  versions:  %s\n", r.Versions)
		fmt.Fprintf(w, "  sent:      %d items, %d events, %d deliveries, %d attempts, %d never accepted; %.1f s\n",
			r.Items, t.Events, r.Deliveries, r.Attempts, r.Refused, r.Took.Seconds())
		fmt.Fprintf(w, "  outcome:   lost %d, doubled %d, FAILED %d, DEAD %d, COMPENSATED %d; SUCCEEDED %d, unsettled %d\n",
			t.Lost, t.Doubled, t.Failed, t.Dead, t.Compensated, t.Succeeded, t.Unsettled)
		fmt.Fprintf(w, "  queues:    %d on the queue, %d on the dead-letter queue; %d replays absorbed by the target\n",
			t.Queue, t.DLQ, r.AbsorbedReplays)
		newer := "n/a (no function of this mix counts newer formats)"
		if r.Newer.Counted {
			newer = fmt.Sprint(r.Newer.Count)
		}
		fmt.Fprintf(w, "  newer:     left for newer code: %d events settled only once the newer code ran; %s: %s\n",
			r.LeftForNewer, NewerMetric, newer)
		var inv []string
		for _, name := range slices.Sorted(maps.Keys(r.Invocations)) {
			inv = append(inv, fmt.Sprintf("%s %d", name, r.Invocations[name]))
		}
		fmt.Fprintf(w, "  invoked:   %s\n", strings.Join(inv, ", "))
		if len(r.Unexercised) > 0 {
			fmt.Fprintf(w, "  never invoked (the mix did not mix): %s\n", strings.Join(r.Unexercised, ", "))
		}
		for what, keys := range t.Samples {
			fmt.Fprintf(w, "  %-10s %s\n", what+":", strings.Join(keys, " "))
		}
		if !r.OK() && len(r.Logs) > 0 {
			fmt.Fprintf(w, "  logs:      %s\n", strings.Join(r.Logs, " "))
		}
	}
}

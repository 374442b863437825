package skew

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"

	"github.com/hookwall/hookwall/dev/cmd/hookwall-storm/storm"
	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/state/store"
)

// Tally is what became of a mix's events, from the business target's
// effects, the table's records and the queues.
type Tally struct {
	// Events are the workload's unique events.
	Events int `json:"events"`
	// Lost: an accepted event the target never saw.
	Lost int `json:"lost"`
	// Doubled: an event applied more than once (under more idempotency
	// keys than its one step, or twice under one).
	Doubled int `json:"doubled"`
	// Succeeded, Failed, Dead and Compensated count the records' statuses;
	// Unsettled are events with no record or one not final yet.
	Succeeded   int `json:"succeeded"`
	Failed      int `json:"failed"`
	Dead        int `json:"dead"`
	Compensated int `json:"compensated"`
	Unsettled   int `json:"unsettled"`
	// Queue and DLQ are the messages left on the queues (visible or not).
	Queue int `json:"queue"`
	DLQ   int `json:"dlq"`
	// Samples name a few events of each problem.
	Samples map[string][]string `json:"samples,omitempty"`
}

// Settled reports whether every event is final and the queues are empty.
func (t Tally) Settled() bool { return t.Unsettled == 0 && t.Queue == 0 && t.DLQ == 0 }

// OK reports the skew test's verdict: settled, and nothing lost, doubled,
// FAILED, DEAD or COMPENSATED.
func (t Tally) OK() bool {
	return t.Settled() && t.Lost == 0 && t.Doubled == 0 && t.Failed == 0 && t.Dead == 0 && t.Compensated == 0
}

// maxSamples bounds the keys listed per problem.
const maxSamples = 5

// Judge tallies keys from their effects at the target (event key →
// idempotency key → times applied) and their records.
func Judge(keys []string, effects map[string]map[string]int, records map[string]*store.Record) Tally {
	t := Tally{Events: len(keys), Samples: map[string][]string{}}
	note := func(what, key string) {
		if len(t.Samples[what]) < maxSamples {
			t.Samples[what] = append(t.Samples[what], key)
		}
	}
	for _, k := range keys {
		eff := effects[k]
		rec := records[k]
		if storm.Doubled(eff, 1) {
			t.Doubled++
			note("doubled", k)
		}
		var st webhook.Status
		if rec != nil {
			st = rec.Status
		}
		switch st {
		case webhook.StatusSucceeded:
			t.Succeeded++
		case webhook.StatusFailed:
			t.Failed++
			note("failed", k)
		case webhook.StatusDead:
			t.Dead++
			note("dead", k)
		case webhook.StatusCompensated:
			t.Compensated++
			note("compensated", k)
		default:
			t.Unsettled++
			note("unsettled", k)
		}
		if len(eff) == 0 && st != webhook.StatusDead && st != webhook.StatusCompensated {
			t.Lost++
			note("lost", k)
		}
	}
	return t
}

// readRecords reads the records of keys, [store.MaxGetMany] at a time
// (eventually consistent reads: a final status is final, a stale one only
// delays the settling by a look).
func readRecords(ctx context.Context, table *store.Table, keys []string) (map[string]*store.Record, error) {
	out := make(map[string]*store.Record, len(keys))
	for chunk := range slices.Chunk(keys, store.MaxGetMany) {
		recs, err := table.GetMany(ctx, chunk)
		if err != nil {
			return nil, fmt.Errorf("skew: read the records: %w", err)
		}
		for i, rec := range recs {
			if rec != nil {
				out[chunk[i]] = rec
			}
		}
	}
	return out, nil
}

// NewerMetric is the EMF metric a release that versions its formats
// (issue #32 item 2) counts data of a newer format with: data it left for
// the newer code (format.MetricNewer where that package exists).
const NewerMetric = "NewerFormat"

// CountNewer sums [NewerMetric] over the EMF lines of the function logs:
// the data older code left for newer code. A release without versioned
// formats writes none; found says whether any line carried the metric.
func CountNewer(logs []string) (n int64, found bool, err error) {
	for _, path := range logs {
		f, err := os.Open(path)
		if err != nil {
			return n, found, fmt.Errorf("skew: read %s: %w", path, err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		for sc.Scan() {
			var line struct {
				AWS   json.RawMessage `json:"_aws"`
				Newer *float64        `json:"NewerFormat"`
			}
			if json.Unmarshal(sc.Bytes(), &line) == nil && line.AWS != nil && line.Newer != nil {
				n += int64(*line.Newer)
				found = true
			}
		}
		f.Close()
	}
	return n, found, nil
}

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"slices"
	"time"

	"github.com/hookwall/hookwall/shared/aws/queue"
	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/config/settings"
	"github.com/hookwall/hookwall/shared/state/store"
)

// replayed is the outcome of replaying one event, in JSON.
type replayed struct {
	Key      string         `json:"key"`
	Outcome  string         `json:"outcome"` // replayed, refused, missing, failed
	From     webhook.Status `json:"from,omitempty"`
	Status   webhook.Status `json:"status,omitempty"`
	Version  int64          `json:"version,omitempty"`
	Enqueued bool           `json:"enqueued"`
	Reason   string         `json:"reason,omitempty"`
}

func (a *app) replay(ctx context.Context, args []string) error {
	const cmd = "replay"
	fs := a.flagSet(cmd)
	var f listFlags
	f.register(fs, "")
	force := fs.Bool("force", false, "replay SUCCEEDED events too (their handlers run again)")
	fresh := fs.Bool("fresh-steps", false, "ignore the steps already journaled, so every step runs again (new claim id)")
	yes := fs.Bool("yes", false, "with --status: replay the events (without it, a dry run lists them)")
	pos, err := a.parse(cmd, fs, args)
	if err != nil {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	opts := store.ReplayOptions{Force: *force, FreshSteps: *fresh}
	switch {
	case len(pos) > 1:
		return usagef(cmd, "want one event key, got %d arguments", len(pos))
	case len(pos) == 1:
		for _, name := range []string{"status", "since", "tenant", "limit", "scan-max", "yes"} {
			if set[name] {
				return usagef(cmd, "--%s selects a range: give either an event KEY or --status, not both", name)
			}
		}
		key, err := parseKey(cmd, pos)
		if err != nil {
			return err
		}
		return a.replayOne(ctx, key, opts)
	case !set["status"]:
		return usagef(cmd, "give an event KEY, or --status (with --since) to replay a range")
	}
	q, err := f.query(cmd, a.now())
	if err != nil {
		return err
	}
	if slices.Contains(q.statuses, webhook.StatusSucceeded) && !*force {
		return usagef(cmd, "--status SUCCEEDED selects events whose handlers already ran to the end; add --force if they should run again")
	}
	return a.replayRange(ctx, q, opts, *yes)
}

func (a *app) replayOne(ctx context.Context, key string, opts store.ReplayOptions) error {
	s, b, err := a.backend(ctx, settings.CLINeeds{Table: true, Queue: true})
	if err != nil {
		return err
	}
	opts.Window = s.DedupWindow
	r, err := a.replayKey(ctx, b, key, opts)
	if err != nil {
		return err
	}
	if r.Outcome == "replayed" {
		if err := b.queue.Send(ctx, []webhook.Envelope{r.envelope}); err != nil {
			return fmt.Errorf("%s is RECEIVED again (version %d) but could not be enqueued: %w; run the replay again (or the sweeper re-enqueues it)",
				key, r.Version, err)
		}
		r.Enqueued = true
	}
	if a.json {
		if err := a.writeJSON(r.replayed); err != nil {
			return err
		}
	}
	switch r.Outcome {
	case "replayed":
		if !a.json {
			fmt.Fprintf(a.stdout, "replayed %s: %s → RECEIVED (version %d), enqueued on %s%s\n", key, r.From, r.Version, s.QueueURL, freshNote(opts))
		}
		return nil
	case "missing":
		return refusedf("%s", r.Reason)
	}
	return refusedf("refused: %s", r.Reason)
}

func freshNote(opts store.ReplayOptions) string {
	if opts.FreshSteps {
		return "; fresh steps: every step runs again"
	}
	return "; steps already journaled stay done, undone ones run again"
}

// replayedKey is a replay outcome and the envelope to send.
type replayedKey struct {
	replayed
	envelope webhook.Envelope
}

// replayKey replays one record and explains the outcome.
func (a *app) replayKey(ctx context.Context, b *backend, key string, opts store.ReplayOptions) (replayedKey, error) {
	res, err := b.events.Replay(ctx, key, opts)
	if err != nil {
		return replayedKey{}, fmt.Errorf("replay %s: %w", key, err)
	}
	r := replayedKey{replayed: replayed{Key: key, Outcome: res.Outcome.String()}}
	rec := res.Record
	switch res.Outcome {
	case store.Replayed:
		r.Status, r.Version, r.envelope = rec.Status, rec.Version, rec.Envelope()
		if n := len(rec.History); n > 0 {
			r.From = rec.History[n-1].From
		}
	case store.ReplayMissing:
		r.Reason = fmt.Sprintf("no event %s in the table (never received, or expired)", key)
	case store.ReplayRefused:
		r.Status, r.Version = rec.Status, rec.Version
		r.Reason = refusal(rec, opts, a.now())
	default:
		return r, fmt.Errorf("replay %s: unexpected outcome %v", key, res.Outcome)
	}
	return r, nil
}

// refusal says why a replay of rec was refused and what to do.
func refusal(rec *store.Record, opts store.ReplayOptions, now time.Time) string {
	switch {
	case rec.Status == webhook.StatusSucceeded && !opts.Force:
		return fmt.Sprintf("%s is SUCCEEDED: its handlers already ran to the end, and a replay would run them again "+
			"(steps already journaled stay done unless --fresh-steps). Add --force if that is what you want", rec.Key)
	case rec.LeaseOwner != "" && rec.LeaseUntil > now.UnixMilli():
		return fmt.Sprintf("%s is %s under a live lease (owner %s, until %s): a worker is on it; replay it after the lease ends if it is still stuck",
			rec.Key, rec.Status, rec.LeaseOwner, when(rec.LeaseUntil))
	}
	return fmt.Sprintf("%s is %s and cannot be replayed now", rec.Key, rec.Status)
}

// replayRange lists the events q selects and, with yes, replays them and
// enqueues them in batches.
func (a *app) replayRange(ctx context.Context, q listQuery, opts store.ReplayOptions, yes bool) error {
	const cmd = "replay"
	s, b, err := a.backend(ctx, settings.CLINeeds{Table: true, Queue: true})
	if err != nil {
		return err
	}
	opts.Window = s.DedupWindow
	l, err := a.selectEvents(ctx, b, q)
	if err != nil {
		return err
	}
	what := fmt.Sprintf("%s updated since %s%s", joinStatuses(q.statuses), q.since.UTC().Format(time.RFC3339), tenantSuffix(q.tenant))
	if !yes {
		if a.json {
			events := make([]listedEvent, len(l.records))
			for i, r := range l.records {
				events[i] = listed(r)
			}
			return a.writeJSON(struct {
				DryRun     bool          `json:"dryRun"`
				Count      int           `json:"count"`
				Events     []listedEvent `json:"events"`
				Incomplete bool          `json:"incomplete"`
			}{true, len(l.records), events, l.incomplete})
		}
		fmt.Fprintf(a.stdout, "%d event(s) would be replayed (%s):\n", len(l.records), what)
		a.printRecords(l.records)
		if len(l.records) > 0 {
			fmt.Fprintf(a.stdout, "dry run: nothing was replayed; run again with --yes to replay these %d event(s)\n", len(l.records))
		}
		return nil
	}
	if !a.json {
		fmt.Fprintf(a.stdout, "replaying %d event(s) (%s)\n", len(l.records), what)
	}
	var results []replayed
	var pending []replayedKey
	var errs []error
	flush := func() {
		if len(pending) == 0 {
			return
		}
		envs := make([]webhook.Envelope, len(pending))
		for i := range pending {
			envs[i] = pending[i].envelope
		}
		err := b.queue.Send(ctx, envs)
		failed := queue.NotSent(err, len(envs))
		if err != nil {
			errs = append(errs, fmt.Errorf("enqueue: %w", err))
		}
		for i, p := range pending {
			if failed[i] {
				p.Outcome, p.Reason = "failed", "RECEIVED again but not enqueued (run the replay again, or the sweeper re-enqueues it)"
			} else {
				p.Enqueued = true
			}
			results = append(results, p.replayed)
		}
		pending = pending[:0]
	}
	for i, rec := range l.records {
		a.progressf("replay: %d/%d", i+1, len(l.records))
		r, err := a.replayKey(ctx, b, rec.Key, opts)
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			errs = append(errs, err)
			results = append(results, replayed{Key: rec.Key, Outcome: "failed", Reason: err.Error()})
			continue
		}
		if r.Outcome != "replayed" {
			results = append(results, r.replayed)
			continue
		}
		pending = append(pending, r)
		if len(pending) == queue.MaxBatch {
			flush()
		}
	}
	flush()
	a.progressDone()
	count := map[string]int{}
	for _, r := range results {
		count[r.Outcome]++
	}
	if a.json {
		if err := a.writeJSON(struct {
			Count   int            `json:"count"`
			Results []replayed     `json:"results"`
			Totals  map[string]int `json:"totals"`
		}{len(l.records), results, count}); err != nil {
			return err
		}
	} else {
		w := a.table()
		for _, r := range results {
			if r.Outcome != "replayed" {
				fmt.Fprintf(w, "%s\t%s\t%s\n", r.Key, r.Outcome, cell(r.Reason, 120))
			}
		}
		_ = w.Flush()
		fmt.Fprintf(a.stdout, "replayed and enqueued %d, refused %d, missing %d, failed %d\n",
			count["replayed"], count["refused"], count["missing"], count["failed"])
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("replay interrupted after %d of %d event(s): %w", len(results), len(l.records), err)
	}
	if count["failed"] > 0 {
		return fmt.Errorf("%d event(s) not replayed or not enqueued: %w", count["failed"], errors.Join(errs...))
	}
	return nil
}

package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookwall/hookwall/shared/base/webhook"
	"github.com/hookwall/hookwall/shared/config/settings"
	"github.com/hookwall/hookwall/shared/config/tenants"
	"github.com/hookwall/hookwall/shared/ops/recovery"
	"github.com/hookwall/hookwall/shared/state/audit"
	"github.com/hookwall/hookwall/shared/state/store"
)

// allStatuses are the record states, in the order of the state machine.
var allStatuses = []webhook.Status{
	webhook.StatusReceived, webhook.StatusProcessing, webhook.StatusRetry, webhook.StatusHeld, webhook.StatusSucceeded,
	webhook.StatusFailed, webhook.StatusCompensating, webhook.StatusCompensated, webhook.StatusDead,
}

// nonTerminal are the states the sweep index holds.
func nonTerminal() []webhook.Status {
	return slices.DeleteFunc(slices.Clone(allStatuses), webhook.Status.Terminal)
}

// parseStatuses reads --status: comma-separated states, any case.
func parseStatuses(cmd, v string) ([]webhook.Status, error) {
	var out []webhook.Status
	for part := range strings.SplitSeq(v, ",") {
		st := webhook.Status(strings.ToUpper(strings.TrimSpace(part)))
		if !slices.Contains(allStatuses, st) {
			names := make([]string, len(allStatuses))
			for i, s := range allStatuses {
				names[i] = string(s)
			}
			return nil, usagef(cmd, "--status %q: want one or more of %s, separated by commas", part, strings.Join(names, ", "))
		}
		if !slices.Contains(out, st) {
			out = append(out, st)
		}
	}
	return out, nil
}

// parseSince reads --since: a Go duration ("90m", "1h"), days ("7d") or an
// RFC 3339 time; it returns the earliest time meant.
func parseSince(cmd, v string, now time.Time) (time.Time, error) {
	t, err := recovery.ParseSince(v, now)
	if err != nil {
		return time.Time{}, usagef(cmd, "--since %q: want a duration such as 90m, 1h or 7d, or an RFC 3339 time", v)
	}
	return t, nil
}

// parseKey reads an event key argument.
func parseKey(cmd string, args []string) (string, error) {
	if len(args) != 1 {
		return "", usagef(cmd, "want one event key (provider#tenant#id), got %d arguments", len(args))
	}
	if _, _, _, err := audit.ParseKey(args[0]); err != nil {
		return "", usagef(cmd, "bad %v", strings.TrimSuffix(err.Error(), ": "+webhook.ErrMalformed.Error()))
	}
	return args[0], nil
}

// listQuery selects events for `events list` and `replay --status`.
type listQuery struct {
	statuses []webhook.Status
	since    time.Time
	tenant   string
	limit    int
	maxRead  int
}

// listing is what list found, newest update first.
type listing struct {
	records []*store.Record
	// indexed and scanned count the index entries and table items read.
	indexed, scanned int
	// incomplete is set when a bound stopped the search early.
	incomplete bool
	notes      []string
}

// farFuture bounds the sweep index query from above: every sweepAt.
const farFuture = 100 * 365 * 24 * time.Hour

// list finds the events q selects: states that are not terminal through
// the sweep index (one Query per shard, then a consistent read of each
// record), terminal ones by a bounded Scan.
func (a *app) list(ctx context.Context, b *backend, q listQuery) (listing, error) {
	var l listing
	var indexed, scanned []webhook.Status
	for _, st := range q.statuses {
		if st.Terminal() {
			scanned = append(scanned, st)
		} else {
			indexed = append(indexed, st)
		}
	}
	now := a.now()
	if len(indexed) > 0 {
		recs, n, more, err := a.listIndexed(ctx, b.events, q, indexed, now)
		if err != nil {
			return l, err
		}
		l.records, l.indexed = recs, n
		if more {
			l.incomplete = true
			l.notes = append(l.notes, fmt.Sprintf("the sweep index holds more than %d entries; only those were read (raise --scan-max)", q.maxRead))
		}
	}
	if len(scanned) > 0 {
		res, err := b.scan.scanStatus(ctx, scanQuery{statuses: scanned, since: q.since, tenant: q.tenant,
			limit: q.limit, maxRead: q.maxRead, now: now})
		if err != nil {
			return l, err
		}
		l.records = append(l.records, res.records...)
		l.scanned = res.read
		note := fmt.Sprintf("%s records are in no index: they were found by a Scan bounded to %d items (--scan-max); it read %d",
			joinStatuses(scanned), q.maxRead, res.read)
		if res.more {
			l.incomplete = true
			note += " and stopped before the end of the table, so the list may be incomplete (narrow --since or --tenant, or raise --limit or --scan-max)"
		}
		l.notes = append(l.notes, note)
	}
	slices.SortStableFunc(l.records, func(x, y *store.Record) int {
		if c := -cmpInt(x.UpdatedAt, y.UpdatedAt); c != 0 {
			return c
		}
		return strings.Compare(x.Key, y.Key)
	})
	if len(l.records) > q.limit {
		l.records = l.records[:q.limit]
		l.incomplete = true
		l.notes = append(l.notes, fmt.Sprintf("more than %d events match; showing the %d most recently updated (raise --limit)", q.limit, q.limit))
	}
	return l, nil
}

func cmpInt(x, y int64) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

func joinStatuses(ss []webhook.Status) string {
	names := make([]string, len(ss))
	for i, s := range ss {
		names[i] = string(s)
	}
	return strings.Join(names, ", ")
}

// listIndexed reads the sweep index, every shard, then each record it
// names (the index is keys only, and eventually consistent), and keeps
// those q selects. It reads at most q.maxRead index entries. The index
// lists terminal records too, until TTL deletes them (the completion
// leaves their entry: the sweeper passes it), and a record's sweepAt says
// nothing of its updatedAt, so the read is not bounded by --since: the
// status filter after the read keeps the listing right, and --scan-max
// bounds its cost.
func (a *app) listIndexed(ctx context.Context, es eventStore, q listQuery, statuses []webhook.Status, now time.Time) ([]*store.Record, int, bool, error) {
	var keys []string
	more := false
	prefixOK := func(key string) bool {
		if q.tenant == "" {
			return true
		}
		_, tenant, _, ok := webhook.SplitKey(key)
		return ok && tenant == q.tenant
	}
	read := 0
shards:
	for shard := range store.SweepShards {
		var cursor map[string]types.AttributeValue
		for {
			page := int32(min(500, q.maxRead-read))
			if page <= 0 {
				more = true
				break shards
			}
			entries, next, err := es.Stuck(ctx, shard, time.Time{}, now.Add(farFuture), page, cursor)
			if err != nil {
				return nil, read, false, fmt.Errorf("query the sweep index (shard %d): %w", shard, err)
			}
			read += len(entries)
			for _, e := range entries {
				if prefixOK(e.Key) {
					keys = append(keys, e.Key)
				}
			}
			a.progressf("reading the sweep index: shard %d/%d, %d entries", shard+1, store.SweepShards, read)
			if next == nil {
				break
			}
			cursor = next
		}
	}
	recs, err := a.getAll(ctx, es, keys)
	a.progressDone()
	if err != nil {
		return nil, read, more, err
	}
	var out []*store.Record
	for _, r := range recs {
		if r != nil && slices.Contains(statuses, r.Status) && r.UpdatedAt >= q.since.UnixMilli() {
			out = append(out, r)
		}
	}
	return out, read, more, nil
}

// getAll reads the records of keys, eight at a time; an absent one is nil.
func (a *app) getAll(ctx context.Context, es eventStore, keys []string) ([]*store.Record, error) {
	recs := make([]*store.Record, len(keys))
	errs := make([]error, len(keys))
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	sem := make(chan struct{}, 8)
	for i, k := range keys {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			recs[i], errs[i] = es.Get(ctx, k)
			mu.Lock()
			done++
			a.progressf("reading records: %d/%d", done, len(keys))
			mu.Unlock()
		})
	}
	wg.Wait()
	return recs, errors.Join(errs...)
}

// listFlags are the selection flags of `events list` and `replay --status`.
type listFlags struct {
	status, since, tenant string
	limit, maxRead        int
}

func (f *listFlags) register(fs interface {
	StringVar(*string, string, string, string)
	IntVar(*int, string, int, string)
}, defaultStatus string) {
	fs.StringVar(&f.status, "status", defaultStatus, "states to select, comma-separated: RECEIVED, PROCESSING, RETRY, SUCCEEDED, FAILED, COMPENSATING, COMPENSATED, DEAD")
	fs.StringVar(&f.since, "since", "24h", "only events updated this recently: a duration (90m, 1h, 7d) or an RFC 3339 time")
	fs.StringVar(&f.tenant, "tenant", "", "only this tenant's events")
	fs.IntVar(&f.limit, "limit", 100, "the most events to show (the most recently updated)")
	fs.IntVar(&f.maxRead, "scan-max", 10000, "the most index entries (the sweep index lists terminal events too, until they expire), and table items for terminal states, read")
}

func (f *listFlags) query(cmd string, now time.Time) (listQuery, error) {
	var q listQuery
	var err error
	if f.status == "" {
		q.statuses = nonTerminal()
	} else if q.statuses, err = parseStatuses(cmd, f.status); err != nil {
		return q, err
	}
	if q.since, err = parseSince(cmd, f.since, now); err != nil {
		return q, err
	}
	if f.limit < 1 || f.maxRead < 1 {
		return q, usagef(cmd, "--limit and --scan-max must be at least 1")
	}
	if f.tenant != "" {
		if !webhook.ValidTenant(f.tenant) {
			return q, usagef(cmd, "--tenant %q: not a tenant name (1 to 64 of A-Z a-z 0-9 _ . -)", f.tenant)
		}
	}
	q.tenant, q.limit, q.maxRead = f.tenant, f.limit, f.maxRead
	return q, nil
}

func (a *app) eventsList(ctx context.Context, args []string) error {
	const cmd = "events list"
	fs := a.flagSet(cmd)
	var f listFlags
	f.register(fs, "")
	pos, err := a.parse(cmd, fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef(cmd, "unexpected argument %q (select with --status, --since, --tenant)", pos[0])
	}
	q, err := f.query(cmd, a.now())
	if err != nil {
		return err
	}
	_, b, err := a.backend(ctx, settings.CLINeeds{Table: true})
	if err != nil {
		return err
	}
	l, err := a.selectEvents(ctx, b, q)
	if err != nil {
		return err
	}
	if a.json {
		return a.writeJSON(listJSON(l, q))
	}
	a.printRecords(l.records)
	fmt.Fprintf(a.stdout, "%d event(s) %s updated since %s%s\n", len(l.records), joinStatuses(q.statuses),
		q.since.UTC().Format(time.RFC3339), tenantSuffix(q.tenant))
	return nil
}

func tenantSuffix(tenant string) string {
	if tenant == "" {
		return ""
	}
	return ", tenant " + tenant
}

func (a *app) eventsGet(ctx context.Context, args []string) error {
	v, err := a.keyView(ctx, "events get", args)
	if err != nil {
		return err
	}
	if a.json {
		return a.writeJSON(v)
	}
	a.printView(v)
	return nil
}

func (a *app) eventsHistory(ctx context.Context, args []string) error {
	v, err := a.keyView(ctx, "events history", args)
	if err != nil {
		return err
	}
	if a.json {
		return a.writeJSON(struct {
			Key            string          `json:"key"`
			Status         webhook.Status  `json:"status"`
			History        []audit.History `json:"history"`
			HistoryDropped int             `json:"historyDropped"`
		}{v.Record.Key, v.Record.Status, v.History, v.HistoryDropped})
	}
	a.printHistory(v)
	return nil
}

// keyView parses the arguments of cmd, a command given one event key and
// no flag but --json, and reads the audit view of that key.
func (a *app) keyView(ctx context.Context, cmd string, args []string) (*audit.View, error) {
	pos, err := a.parse(cmd, a.flagSet(cmd), args)
	if err != nil {
		return nil, err
	}
	key, err := parseKey(cmd, pos)
	if err != nil {
		return nil, err
	}
	return a.view(ctx, cmd, key)
}

// view reads the audit view of key, or refuses when there is none.
func (a *app) view(ctx context.Context, cmd, key string) (*audit.View, error) {
	_, b, err := a.backend(ctx, settings.CLINeeds{Table: true})
	if err != nil {
		return nil, err
	}
	v, err := audit.Read(ctx, b.events, key)
	if err != nil {
		return nil, err
	}
	if v == nil {
		return nil, refusedf("no event %s in the table (never received, or expired)", key)
	}
	return v, nil
}

// knownTenants returns the tenant names of the tenants document the
// environment names (HOOKWALL_TENANTS_FILE, TENANTS_SECRET_ARN) or, when
// it names no stack, the local runner's, and where they come from; ok is
// false when no document is known or it cannot be read (why in source).
func (a *app) knownTenants(ctx context.Context, b *backend) (names []string, source string, ok bool) {
	src := tenants.Source{File: a.getenv("HOOKWALL_TENANTS_FILE"), SecretARN: a.getenv("TENANTS_SECRET_ARN")}
	switch {
	case src.File != "" && src.SecretARN != "":
		return nil, "", false
	case src.File != "":
		source = "HOOKWALL_TENANTS_FILE=" + src.File
	case src.SecretARN != "":
		if b == nil || b.secrets == nil {
			return nil, "", false
		}
		src.Secrets, source = b.secrets, "TENANTS_SECRET_ARN="+src.SecretARN
	default:
		r := a.runner()
		if r == nil || a.explicitStack() {
			return nil, "", false
		}
		if r.Tenants != nil {
			return r.Tenants, "the local runner's tenants (" + r.Path + ")", true
		}
		if src.File = r.TenantsFile; src.File == "" {
			return nil, "", false
		}
		source = "the local runner's tenants file " + src.File
	}
	doc, err := tenants.Load(ctx, src)
	if err != nil {
		return nil, fmt.Sprintf("%s: %v", source, err), false
	}
	return doc.Names(), source, true
}

// selectEvents lists the events q selects, as every selection does: the
// listing's notes go to stderr, and a tenant that selected nothing is
// checked (see checkEmptyTenant).
func (a *app) selectEvents(ctx context.Context, b *backend, q listQuery) (listing, error) {
	l, err := a.list(ctx, b, q)
	if err != nil {
		return listing{}, err
	}
	for _, n := range l.notes {
		fmt.Fprintln(a.stderr, "note: "+n)
	}
	if err := a.checkEmptyTenant(ctx, b, q.tenant, len(l.records)); err != nil {
		return listing{}, err
	}
	return l, nil
}

// checkEmptyTenant explains a selection of a tenant that found no event
// (found is how many it did): a tenant the tenants document does not name
// is refused (exit 3), as `sign` refuses it; without a document to check,
// a note on stderr asks whether the name is right. A silent 0 would read
// as "that tenant has no events".
func (a *app) checkEmptyTenant(ctx context.Context, b *backend, tenant string, found int) error {
	if tenant == "" || found > 0 {
		return nil
	}
	names, source, ok := a.knownTenants(ctx, b)
	switch {
	case ok && !slices.Contains(names, tenant):
		return refusedf("no tenant %q in %s (tenants: %s)", tenant, source, strings.Join(names, ", "))
	case !ok && source != "":
		fmt.Fprintf(a.stderr, "note: 0 events for tenant %q; is the name right? (could not read %s)\n", tenant, source)
	case !ok:
		fmt.Fprintf(a.stderr, "note: 0 events for tenant %q; is the name right? (no tenants document to check it against: "+
			"HOOKWALL_TENANTS_FILE or TENANTS_SECRET_ARN)\n", tenant)
	}
	return nil
}
